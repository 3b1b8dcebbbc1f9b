// The layer normalization that exporters write op by op (PyTorch before opset 17, TensorFlow and
// Keras converters):
//   mean = ReduceMean(x, trailing axes), d = x - mean, var = ReduceMean(Pow(d, 2) or d * d),
//   y = d / Sqrt(var + eps), then optionally y * gamma and + beta (constants over those axes)
// becomes one LayerNormalization(x, gamma or ones, beta; axis, epsilon). Its statistics schedule
// computes a row's mean, variance and output in one pass over the row
// (topi/schedule_statistics.cc) where the ops took several kernels and full-size temporaries.
// Only float32 chains whose intermediate values nothing else reads (and that are no graph
// outputs) are rewritten.
// Requires: typed graph, constants folded. Guarantees: same outputs.
#pragma once

#include "ir/graph.h"

namespace tessel::passes {

void fuse_layer_norm(graph::Graph& g);

}  // namespace tessel::passes
