// A program's steps built and run in a child like a search candidate, against the reference
// executor's outputs: what the auto-scheduler tests ask of every program they make.
#pragma once

#include <string>

#include "autotune/auto_schedule/search_task.h"
#include "autotune/kernel_data.h"
#include "autotune/measure.h"
#include "codegen/build.h"

namespace tessel::autotune::testing {

inline MeasureResult check_steps(const TaskComputation& c, const std::string& steps,
                                 const KernelData& data, const Target& target) {
  MeasureOptions opt;
  opt.number = opt.repeat = 1;
  // These tests check the numbers, not the speed: a heavily unrolled program that builds in 5 s
  // alone took over the search's 10 s beside a tuning run (twice, transformer_block's GELU).
  opt.timeout_s = 120;
  return measure(
      [&] {
        te::Schedule s = c.dag.schedule();
        s.replay(te::Trace::parse(steps));
        return build(s, c.dag.args(), target, c.group.name);
      },
      c.group.name, data.inputs, data.references, opt);
}

}  // namespace tessel::autotune::testing
