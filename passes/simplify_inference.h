// Inference-time simplification: Identity and inference-mode Dropout disappear (their readers read
// the input), BatchNormalization with constant statistics becomes x * scale + shift, and when its
// input is a Conv (or a Gemm with constant weights) read by nothing else, scale and shift fold into
// that node's weights and bias. Requires: typed graph. Guarantees: same outputs up to rounding.
#pragma once

#include "ir/graph.h"

namespace tessel::passes {

void simplify_inference(graph::Graph& g);

}  // namespace tessel::passes
