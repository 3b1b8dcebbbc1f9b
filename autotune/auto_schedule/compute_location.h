// Where a stage that the sketch leaves at root may be computed instead (Ansor's compute location
// choice, InitChangeComputeLocation / MutateComputeLocation): at one of the outer loops of the
// task's output, so that a softmax's statistics or a normalization's mean are computed per row
// of the output, next to their readers, instead of in passes of their own over memory.
// StageParams::compute_at = d >= 1 computes the stage at the loop of the output that covers its
// axes [0, d): the fused parallel loop while axis d - 1 is one of its loops (d <= its parallel
// depth, or further where the outer loops run once and the parallel loop fuses more), else the loop
// of axis d - 1.
// The output's last axis is never a location (it is the vector loop). Where the output's rows go
// in blocks (StageParams::rows), the location of its row axis is the loop over the blocks: a stage
// computed there computes a block's rows, and a statistic's vector partials reduce each vector of
// every row in turn (topi::interleave_partial_rows).
#pragma once

#include "autotune/auto_schedule/program.h"

namespace tessel::autotune {

// Whether stage `i` may take a location: it is at root or factored (kRoot, kRfactor), not the
// output, and the task has one output, itself at root (kRoot).
bool locatable(const ComputeDAG& dag, const Sketch& sketch, size_t i);

// The deepest location stage `i` may take: the stage is computed before its readers, so no
// deeper than any reader other than the output (a reader at root holds it at root).
int max_compute_at(const ComputeDAG& dag, const Sketch& sketch, const Program& program, size_t i);

// Brings every stage's location within its bounds (0 for a stage that cannot take one), readers
// first; what sampling and every mutation end with.
void clamp_compute_at(const ComputeDAG& dag, const Sketch& sketch, Program& program);

// The output's loop for location `d` (>= 1); `out` scheduled as a kRoot stage by `out_params`,
// `block` the loop that holds a block of its rows (undefined: none).
te::IterVar location_loop(const te::Stage& out, const StageParams& out_params, int d,
                          const te::IterVar& block);

}  // namespace tessel::autotune
