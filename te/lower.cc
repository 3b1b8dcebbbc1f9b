#include "te/lower.h"

#include <iostream>

#include "ir/printer.h"
#include "te/schedule_to_tir.h"

namespace tessel::te {

PrimFunc lower(const Schedule& sch, const std::vector<Tensor>& args, const std::string& name,
               const tir::PipelineOptions& opt) {
  PrimFunc f = schedule_to_tir(sch, args, name);
  if (opt.after_pass) opt.after_pass("schedule_to_tir", f);
  const char* env = std::getenv("TESSEL_DUMP_IR");
  std::string spec = opt.dump_ir ? *opt.dump_ir : env ? env : "";
  if (!spec.empty()) {
    for (const auto& pass : tir::parse_dump_ir(spec)) {
      if (pass == "schedule_to_tir") std::cerr << "// after schedule_to_tir\n" << f;
    }
  }
  return tir::lower_tir(f, opt);
}

}  // namespace tessel::te
