#include "autotune/auto_schedule/compute_location.h"

#include <algorithm>

#include "ir/error.h"
#include "topi/broadcast.h"

namespace tessel::autotune {

bool locatable(const ComputeDAG& dag, const Sketch& sketch, size_t i) {
  size_t out = dag.output_stage();
  if (out == kNoStage || i == out || dag.stages()[i].placeholder) return false;
  if (sketch.plans[out].rule != SketchRule::kRoot || dag.stages()[out].spatial.size() < 2)
    return false;
  SketchRule r = sketch.plans[i].rule;
  return r == SketchRule::kRoot || r == SketchRule::kRfactor;
}

int max_compute_at(const ComputeDAG& dag, const Sketch& sketch, const Program& program, size_t i) {
  if (!locatable(dag, sketch, i)) return 0;
  size_t out = dag.output_stage();
  int limit = static_cast<int>(dag.stages()[out].spatial.size()) - 1;
  auto inlined = [&](size_t c) { return sketch.plans[c].rule == SketchRule::kInline; };
  for (size_t r : dag.readers(i, inlined)) {
    if (r == out) continue;
    if (!locatable(dag, sketch, r)) return 0;
    limit = std::min(limit, program.stages[r].compute_at);
  }
  return std::max(0, limit);
}

void clamp_compute_at(const ComputeDAG& dag, const Sketch& sketch, Program& program) {
  for (size_t i = dag.stages().size(); i-- > 0;) {
    int& at = program.stages[i].compute_at;
    at = std::clamp(at, 0, max_compute_at(dag, sketch, program, i));
  }
}

te::IterVar location_loop(const te::Stage& out, const StageParams& out_params, int d,
                          const te::IterVar& block) {
  TESSEL_ICHECK(d >= 1) << "location " << d << " of '" << out.name() << "'";
  bool row_axis = d == static_cast<int>(topi::compute_of(out)->axis.size()) - 1;
  if (block.defined() && row_axis) return block;
  te::IterVar axis = out.axis(d - 1);
  const std::vector<te::IterVar>& leaves = out.leaf_iter_vars();
  bool fused = std::none_of(leaves.begin(), leaves.end(),
                            [&](const te::IterVar& iv) { return iv.get() == axis.get(); });
  if (d <= out_params.parallel || fused) return leaves.at(0);  // the fused parallel loop
  return axis;
}

}  // namespace tessel::autotune
