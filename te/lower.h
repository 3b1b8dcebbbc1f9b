// te::lower: schedule → tir (schedule_to_tir), then the tir pass pipeline. The result prints as
// readable loop IR; TESSEL_DUMP_IR (or opt.after_pass) shows it after every pass.
#pragma once

#include <string>
#include <vector>

#include "ir/printer.h"  // so that `std::cout << te::lower(...)` prints
#include "te/schedule.h"
#include "tir/pipeline.h"

namespace tessel::te {

PrimFunc lower(const Schedule& sch, const std::vector<Tensor>& args, const std::string& name,
               const tir::PipelineOptions& opt = {});

}  // namespace tessel::te
