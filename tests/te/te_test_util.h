// Shared helpers for te tests: build a schedule, run it on random inputs, compare with naive loops.
#pragma once

#include <gtest/gtest.h>

#include <source_location>
#include <string>
#include <vector>

#include "codegen/build.h"
#include "ir/error.h"
#include "ir/printer.h"
#include "runtime/ndarray.h"
#include "te/lower.h"
#include "te/schedule.h"
#include "tests/common/compare.h"
#include "tests/common/ndarray.h"

namespace tessel::te::testing {

using tessel::testing::random_array;
using tessel::testing::zeros;

// Compiles `s` for the host and calls it with `arrays` (in argument order).
inline void build_and_run(const Schedule& s, const std::vector<Tensor>& args,
                          const std::vector<runtime::NDArray>& arrays,
                          const std::string& name = "f") {
  runtime::Module m = build(s, args, Target::parse("llvm -mcpu=native"), name);
  std::vector<runtime::Arg> call_args(arrays.begin(), arrays.end());
  m.get_function(name).call(call_args);
}

// Within `tol` absolute plus `tol` relative to |want|.
inline void expect_near(const runtime::NDArray& got, const std::vector<float>& want,
                        float tol = 1e-4f,
                        std::source_location at = std::source_location::current()) {
  tessel::testing::expect_all_close(tessel::testing::values_of(got), {want.begin(), want.end()},
                                    {tol, tol}, "result", at);
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

}  // namespace tessel::te::testing
