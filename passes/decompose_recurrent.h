// Unrolls each LSTM / GRU / RNN node over its T time steps into primitive ONNX ops (MatMul, Add,
// Split, activations, Where, Concat, Reshape), as te cannot express a recurrence over time.
// Constant weights are transposed and sliced per direction at compile time (runtime ones by Slice +
// Transpose nodes); sequence_lens becomes per-step Where masks (constant, or Less at run time).
// A node is left unchanged when X's shape or dtype (f32 / f64) does not allow it or an activation
// is unknown; lowering then reports it. Requires: typed graph. Guarantees: every new value is
// typed; the node's outputs keep their value ids and names; same results up to rounding.
#pragma once

#include "ir/graph.h"

namespace tessel::passes {

void decompose_recurrent(graph::Graph& g);

}  // namespace tessel::passes
