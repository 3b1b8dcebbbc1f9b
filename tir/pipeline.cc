#include "tir/pipeline.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <iostream>

#include "ir/error.h"
#include "ir/printer.h"
#include "tir/transforms/flatten_buffers.h"
#include "tir/transforms/guard_padded_reads.h"
#include "tir/transforms/loop_partition.h"
#include "tir/transforms/lower_intrinsics.h"
#include "tir/transforms/remove_no_op.h"
#include "tir/transforms/simplify.h"
#include "tir/transforms/unroll_loops.h"
#include "tir/transforms/vectorize_loops.h"
#include "tir/transforms/verify.h"

namespace tessel::tir {
namespace {

// Runs one pass, then the checks, the callback and the dump that the options ask for.
class PassRunner {
 public:
  explicit PassRunner(const PipelineOptions& opt) : opt_(opt) {
    const char* env = std::getenv("TESSEL_DUMP_IR");
    std::string spec = opt.dump_ir ? *opt.dump_ir : (env ? env : "");
    dump_ = parse_dump_ir(spec);
  }

  // What verify requires at this point of the pipeline; passes tighten it as they run.
  VerifyOptions checks;

  template <class Pass>
  PrimFunc operator()(const std::string& name, const PrimFunc& f, Pass pass) {
    PrimFunc out = pass(f);
    checks.after_pass = name;
    if (opt_.verify) verify(out, checks);
    if (opt_.after_pass) opt_.after_pass(name, out);
    if (std::find(dump_.begin(), dump_.end(), name) != dump_.end()) {
      std::cerr << "// after " << name << "\n" << to_string(out) << std::flush;
    }
    return out;
  }

 private:
  const PipelineOptions& opt_;
  std::vector<std::string> dump_;
};

}  // namespace

PrimFunc lower_tir(PrimFunc f, const PipelineOptions& opt) {
  PassRunner run(opt);
  auto simplify_pass = [](const PrimFunc& g) { return simplify(g); };
  f = run("simplify", f, simplify_pass);
  f = run("flatten_buffers", f, flatten_buffers);
  run.checks.require_flat = true;
  f = run("simplify", f, simplify_pass);
  f = run("guard_padded_reads", f, guard_padded_reads);
  if (opt.loop_partition) {
    f = run("loop_partition", f,
            [&](const PrimFunc& g) { return loop_partition(g, opt.parallel_threads); });
  }
  f = run("vectorize_loops", f, vectorize_loops);
  run.checks.require_no_vectorized_loops = true;
  f = run("unroll_loops", f, [&](const PrimFunc& g) {
    return unroll_loops(g, {.auto_max_extent = opt.auto_unroll_max_extent});
  });
  f = run("simplify", f, simplify_pass);
  f = run("remove_no_op", f, remove_no_op);
  f = run("lower_intrinsics", f, lower_intrinsics);
  f = run("simplify", f, simplify_pass);
  return run("verify", f, [&](const PrimFunc& g) {
    verify(g, run.checks);
    return g;
  });
}

std::vector<std::string> tir_pass_names() {
  return {"simplify",       "flatten_buffers",  "simplify",     "guard_padded_reads",
          "loop_partition", "vectorize_loops",  "unroll_loops", "simplify",
          "remove_no_op",   "lower_intrinsics", "simplify",     "verify"};
}

std::vector<std::string> parse_pass_list(const std::string& spec, std::vector<std::string> known,
                                         const std::string& variable, const std::string& kind) {
  std::vector<std::string> selected;
  size_t start = 0;
  while (start <= spec.size()) {
    size_t comma = std::min(spec.find(',', start), spec.size());
    std::string name = spec.substr(start, comma - start);
    name.erase(
        std::remove_if(name.begin(), name.end(), [](unsigned char c) { return std::isspace(c); }),
        name.end());
    start = comma + 1;
    if (name.empty()) continue;
    if (name == "all") return known;
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      std::sort(known.begin(), known.end());
      known.erase(std::unique(known.begin(), known.end()), known.end());
      throw Error(fmt::format("{} names an unknown {} pass '{}'; the passes are: {}", variable,
                              kind, name, fmt::join(known, ", ")));
    }
    selected.push_back(name);
  }
  return selected;
}

std::vector<std::string> parse_dump_ir(const std::string& spec) {
  // te::lower dumps its schedule_to_tir output under the same variable.
  std::vector<std::string> known = tir_pass_names();
  known.insert(known.begin(), "schedule_to_tir");
  return parse_pass_list(spec, std::move(known), "TESSEL_DUMP_IR", "tir");
}

}  // namespace tessel::tir
