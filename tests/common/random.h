// Seeded random fill for tests, per dtype, so inputs are deterministic from run to run.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "ir/graph.h"
#include "tests/common/tensor.h"

namespace tessel::testing {

// Uniform values in [lo, hi] from std::mt19937(seed): float32 drawn as float, float64 as double,
// integer types as whole numbers, bool as 0 or 1 (lo and hi ignored).
inline void fill_random(void* data, DataType dtype, int64_t numel, uint32_t seed, double lo,
                        double hi) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> f32(static_cast<float>(lo), static_cast<float>(hi));
  std::uniform_real_distribution<double> f64(lo, hi);
  std::uniform_int_distribution<int64_t> whole(static_cast<int64_t>(lo), static_cast<int64_t>(hi));
  for (int64_t i = 0; i < numel; ++i) {
    if (dtype.is_bool())
      set_element(data, dtype, i, rng() % 2);
    else if (dtype == DataType::f32())
      set_element(data, dtype, i, f32(rng));
    else if (dtype.is_float())
      set_element(data, dtype, i, f64(rng));
    else
      set_element(data, dtype, i, whole(rng));
  }
}

inline graph::TensorData random_tensor(DataType dtype, std::vector<int64_t> shape, uint32_t seed,
                                       double lo = -1, double hi = 1) {
  graph::TensorData t(dtype, std::move(shape));
  fill_random(t.raw(), dtype, t.numel(), seed, lo, hi);
  return t;
}
// float32, the common case.
inline graph::TensorData random_tensor(std::vector<int64_t> shape, uint32_t seed, double lo = -1,
                                       double hi = 1) {
  return random_tensor(DataType::f32(), std::move(shape), seed, lo, hi);
}

}  // namespace tessel::testing
