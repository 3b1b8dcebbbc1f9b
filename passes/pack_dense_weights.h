// MatMul, and Gemm without scaling or transposes (after pretranspose_weights), with a constant 2-D
// B [K, N] become MatMulPacked: B is packed once, at compile time, into panels of b columns,
// [ceil(N / b), K, b] (ir/ops/conv_packing.h's blocks of B^T), b being the columns of the GEMM
// fallback's register tile for the target (topi::gemm_tile_columns). Each tile then reads one
// contiguous run of b floats per k instead of b floats every N: an LSTM step's [1, 256] x
// [256, 1024] went from 15 to 10 us (AVX-512). A Gemm's C becomes an Add after it, which fuses as
// the kernel's epilogue. B that one panel covers (N <= b) is left as it is, and so is B of a
// product with fewer rows than the micro-kernel's when it is more than twice the L2 cache: one
// panel streams from memory slower than B's strided rows (see the .cc).
// Requires: typed graph. Guarantees: same outputs; the old constant stays for its other readers.
#pragma once

#include "codegen/cpu_model.h"
#include "ir/graph.h"

namespace tessel::passes {

void pack_dense_weights(graph::Graph& g, const CpuModel& cpu);

}  // namespace tessel::passes
