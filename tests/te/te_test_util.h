// Shared helpers for te tests: build a schedule, run it on random inputs, compare with naive loops.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "codegen/build.h"
#include "ir/error.h"
#include "ir/printer.h"
#include "runtime/ndarray.h"
#include "te/lower.h"
#include "te/schedule.h"

namespace tessel::te::testing {

inline runtime::NDArray random_array(std::vector<int64_t> shape, uint32_t seed = 1) {
  runtime::NDArray a = runtime::NDArray::empty(std::move(shape), DataType::f32());
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  float* p = a.data<float>();
  for (int64_t i = 0; i < a.numel(); ++i) p[i] = dist(rng);
  return a;
}

inline runtime::NDArray zeros(std::vector<int64_t> shape) {
  runtime::NDArray a = runtime::NDArray::empty(std::move(shape), DataType::f32());
  std::fill(a.data<float>(), a.data<float>() + a.numel(), 0.0f);
  return a;
}

// Compiles `s` for the host and calls it with `arrays` (in argument order).
inline void build_and_run(const Schedule& s, const std::vector<Tensor>& args,
                          const std::vector<runtime::NDArray>& arrays,
                          const std::string& name = "f") {
  runtime::Module m = build(s, args, Target::parse("llvm -mcpu=native"), name);
  std::vector<runtime::Arg> call_args(arrays.begin(), arrays.end());
  m.get_function(name).call(call_args);
}

inline void expect_near(const runtime::NDArray& got, const std::vector<float>& want,
                        float tol = 1e-4f) {
  ASSERT_EQ(got.numel(), static_cast<int64_t>(want.size()));
  const float* g = got.data<float>();
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_NEAR(g[i], want[i], tol * (1.0f + std::fabs(want[i]))) << "at flat index " << i;
  }
}

inline std::vector<float> naive_matmul(const runtime::NDArray& a, const runtime::NDArray& b,
                                       int64_t m, int64_t n, int64_t k) {
  std::vector<float> c(m * n, 0.0f);
  const float *pa = a.data<float>(), *pb = b.data<float>();
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double acc = 0;
      for (int64_t r = 0; r < k; ++r) acc += double(pa[i * k + r]) * pb[r * n + j];
      c[i * n + j] = static_cast<float>(acc);
    }
  return c;
}

// The message of the ScheduleError (or other Error) that `fn` throws; fails when none is thrown.
template <class E = ScheduleError>
std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const E& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected an exception";
  return "";
}

}  // namespace tessel::te::testing
