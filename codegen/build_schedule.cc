// The te-level entry point: schedule -> tir -> JIT module.
#include <fmt/format.h>

#include "codegen/build.h"
#include "ir/error.h"
#include "te/lower.h"

namespace tessel {

runtime::Module build(const te::Schedule& sch, const std::vector<te::Tensor>& args,
                      const Target& target, const std::string& name,
                      const tir::PipelineOptions& opt) {
  for (const auto& stage : sch.stages()) {
    for (const auto& iv : stage->leaf_iter_vars) {
      auto it = stage->annotations.find(iv.get());
      if (it != stage->annotations.end() && it->second.kind == ForKind::kThreadBinding) {
        throw Error(
            fmt::format("stage '{}' axis '{}' is bound to {}, but target '{}' is a CPU; thread "
                        "bindings need a GPU target",
                        stage.name(), iv.name(), it->second.thread_tag, target.str()));
      }
    }
  }
  return build(te::lower(sch, args, name, opt), target);
}

}  // namespace tessel
