// Winograd's minimal filtering F(m x m, 3 x 3) (Lavin & Gray, "Fast Algorithms for Convolutional
// Neural Networks", 2016) for ConvWinograd, Tessel's internal 3x3 stride-1 convolution
// (passes/winograd_conv produces it; ONNX models never contain it). Each m x m output tile of one
// channel is Y = Aᵀ [Σ_c U_c ⊙ (Bᵀ d_c B)] A, where d_c is the (m + 2)² input tile of channel c and
// U_c = G g_c Gᵀ the transformed 3x3 kernel, computed once at compile time. Its weights are U,
// [(m + 2)², K / b, C, b]: point e = e1 * (m + 2) + e2 of the transformed tile, then blocks of b
// output channels, so that one block is a contiguous vector.
#pragma once

#include <vector>

#include "ir/graph.h"

namespace tessel::graph::ops {

// The transform matrices of F(m x m, 3 x 3), row-major: bt is Bᵀ (alpha x alpha), g is G
// (alpha x 3), at is Aᵀ (m x alpha), alpha = m + 2. The interpolation points are 0, ±1, ±2 and ∞
// for m = 4 (0, ±1, ∞ for m = 2), whose fp32 error stays within a few ulps of the direct conv's.
struct WinogradMatrices {
  int64_t m = 0, alpha = 0;
  std::vector<double> bt, g, at;
};

// The tile sizes that ConvWinograd implements.
inline constexpr int64_t kWinogradTileSizes[] = {2, 4};

// F(m x m, 3 x 3)'s matrices; throws tessel::Error naming m when it is not 2 or 4.
const WinogradMatrices& winograd_matrices(int64_t m);

// Conv weights [K, C, 3, 3] -> U [(m + 2)², K / block, C, block] (float32 in, float32 out; K a
// multiple of block).
TensorData winograd_weights(const TensorData& w, int64_t m, int64_t block);

}  // namespace tessel::graph::ops
