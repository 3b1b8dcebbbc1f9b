// Gemm(A, B, transB=1) with a constant B (how PyTorch exports Linear layers) reads B as B^T; the
// kernel would copy B into [K, N] on every run so that its vector loads are contiguous. This pass
// does that copy once, at compile time: B becomes a new constant holding B^T and transB is cleared.
// Requires: typed graph. Guarantees: same outputs; the old constant stays for its other readers.
#pragma once

#include "ir/graph.h"

namespace tessel::passes {

void pretranspose_weights(graph::Graph& g);

}  // namespace tessel::passes
