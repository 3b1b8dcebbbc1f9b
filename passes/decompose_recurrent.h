// Unrolls each LSTM / GRU / RNN node over its T time steps into primitive ONNX ops (MatMul, Add,
// Split, activations, Where, Concat, Reshape), as te cannot express a recurrence over time.
// Constant weights are transposed and sliced per direction at compile time (runtime ones by Slice +
// Transpose nodes); sequence_lens becomes per-step Where masks (constant, or Less at run time).
// A node is left unchanged when X's shape or dtype (f32 / f64) does not allow it or an activation
// is unknown; lowering then reports it. A model with more than kMaxUnrolledSteps steps is refused.
// Requires: typed graph. Guarantees: every new value is
// typed; the node's outputs keep their value ids and names; same results up to rounding.
#pragma once

#include "ir/graph.h"

namespace tessel::passes {

// Unrolled steps (time steps x directions, summed over the model's recurrent nodes) beyond which
// decompose_recurrent refuses the model: each step adds kernels, so 1024 steps already take minutes
// to compile and 10^5 would take hours and hundreds of GiB (a loop over time would not).
inline constexpr int64_t kMaxUnrolledSteps = 1024;

void decompose_recurrent(graph::Graph& g);

}  // namespace tessel::passes
