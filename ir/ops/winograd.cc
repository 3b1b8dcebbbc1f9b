#include "ir/ops/winograd.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ir/error.h"

namespace tessel::graph::ops {

namespace {

WinogradMatrices f2x3() {
  return {2,
          4,
          {1, 0, -1, 0,  //
           0, 1, 1, 0,   //
           0, -1, 1, 0,  //
           0, 1, 0, -1},
          {1, 0, 0,         //
           0.5, 0.5, 0.5,   //
           0.5, -0.5, 0.5,  //
           0, 0, 1},
          {1, 1, 1, 0,  //
           0, 1, -1, -1}};
}

WinogradMatrices f4x3() {
  return {4,
          6,
          {4, 0,  -5, 0,  1, 0,  //
           0, -4, -4, 1,  1, 0,  //
           0, 4,  -4, -1, 1, 0,  //
           0, -2, -1, 2,  1, 0,  //
           0, 2,  -1, -2, 1, 0,  //
           0, 4,  0,  -5, 0, 1},
          {1.0 / 4, 0, 0,                 //
           -1.0 / 6, -1.0 / 6, -1.0 / 6,  //
           -1.0 / 6, 1.0 / 6, -1.0 / 6,   //
           1.0 / 24, 1.0 / 12, 1.0 / 6,   //
           1.0 / 24, -1.0 / 12, 1.0 / 6,  //
           0, 0, 1},
          {1, 1, 1,  1, 1,  0,  //
           0, 1, -1, 2, -2, 0,  //
           0, 1, 1,  4, 4,  0,  //
           0, 1, -1, 8, -8, 1}};
}

}  // namespace

const WinogradMatrices& winograd_matrices(int64_t m) {
  static const WinogradMatrices k2 = f2x3(), k4 = f4x3();
  if (m == 2) return k2;
  if (m == 4) return k4;
  throw Error(fmt::format("Winograd tile size {} is not implemented; the tile sizes are {}", m,
                          fmt::join(kWinogradTileSizes, ", ")));
}

TensorData winograd_weights(const TensorData& w, int64_t m, int64_t block) {
  const std::vector<int64_t>& s = w.shape();
  if (s.size() != 4 || s[2] != 3 || s[3] != 3 || block <= 0 || s[0] % block != 0 ||
      w.dtype() != DataType::f32()) {
    throw InternalError(fmt::format(
        "Winograd weights need float32 [K, C, 3, 3] with K a multiple of {}, got {} [{}]", block,
        w.dtype().str(), fmt::join(s, ", ")));
  }
  const WinogradMatrices& wm = winograd_matrices(m);
  int64_t a = wm.alpha, k_total = s[0], channels = s[1], blocks = k_total / block;
  TensorData u(DataType::f32(), {a * a, blocks, channels, block});
  const float* g = w.data<float>();
  float* out = u.data<float>();
  for (int64_t k = 0; k < k_total; ++k) {
    for (int64_t c = 0; c < channels; ++c) {
      const float* gk = g + (k * channels + c) * 9;
      double gt[6][3];  // G g, alpha x 3
      for (int64_t r = 0; r < a; ++r) {
        for (int64_t j = 0; j < 3; ++j) {
          gt[r][j] = 0;
          for (int64_t i = 0; i < 3; ++i) gt[r][j] += wm.g[r * 3 + i] * gk[i * 3 + j];
        }
      }
      for (int64_t e1 = 0; e1 < a; ++e1) {
        for (int64_t e2 = 0; e2 < a; ++e2) {
          double v = 0;  // (G g Gᵀ)[e1][e2]
          for (int64_t j = 0; j < 3; ++j) v += gt[e1][j] * wm.g[e2 * 3 + j];
          out[(((e1 * a + e2) * blocks + k / block) * channels + c) * block + k % block] =
              static_cast<float>(v);
        }
      }
    }
  }
  return u;
}

}  // namespace tessel::graph::ops
