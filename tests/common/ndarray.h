// Runtime arrays for tests: zero-filled or seeded random float32 NDArrays, and their elements.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "runtime/ndarray.h"
#include "tests/common/random.h"
#include "tests/common/tensor.h"

namespace tessel::testing {

inline runtime::NDArray zeros(std::vector<int64_t> shape, DataType dtype = DataType::f32()) {
  runtime::NDArray a = runtime::NDArray::empty(std::move(shape), dtype);
  std::fill_n(static_cast<char*>(a.raw_data()), a.nbytes(), 0);
  return a;
}

// Uniform float32 values in [lo, hi] (see fill_random).
inline runtime::NDArray random_array(std::vector<int64_t> shape, uint32_t seed = 1, double lo = -1,
                                     double hi = 1) {
  runtime::NDArray a = runtime::NDArray::empty(std::move(shape), DataType::f32());
  fill_random(a.raw_data(), a.dtype(), a.numel(), seed, lo, hi);
  return a;
}

inline std::vector<double> values_of(const runtime::NDArray& a) {
  std::vector<double> v;
  for (int64_t i = 0; i < a.numel(); ++i) v.push_back(element_value(a.raw_data(), a.dtype(), i));
  return v;
}

}  // namespace tessel::testing
