#include <gtest/gtest.h>

#include "tests/reference/nn_test_util.h"

namespace tessel::reference::nn_testing {
namespace {

using Ints = std::vector<int64_t>;

TEST(RefGemmTest, TransposesAlphaBetaAndBroadcastBias) {
  TensorData a = ramp({3, 2}, 0.5), b = ramp({4, 3}, -0.25, 1.0), c = f32({4}, {1, 2, 3, 4});
  auto y = eval_op("Gemm", {a, b, c},
                   {{"transA", int64_t{1}}, {"transB", int64_t{1}}, {"alpha", 2.0}, {"beta", 0.5}});
  std::vector<double> av = values_of(a), bv = values_of(b), want;
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 4; ++j) {
      double acc = 0;
      for (int k = 0; k < 3; ++k) acc += av[k * 2 + i] * bv[j * 3 + k];
      want.push_back(2 * acc + 0.5 * (j + 1));
    }
  }
  expect_near(values_of(y[0]), want);
  auto column_bias = eval_op("Gemm", {ramp({2, 2}), ramp({2, 2}), f32({2, 1}, {10, 20})});
  expect_near(values_of(column_bias[0]), {12, 13, 26, 31});
  auto no_bias = eval_op("Gemm", {ramp({2, 2}), ramp({2, 2})});
  expect_near(values_of(no_bias[0]), {2, 3, 6, 11});
}

TEST(RefMatMulTest, BatchedWithBroadcastAndVectors) {
  TensorData a = ramp({2, 1, 2, 3}, 0.5), b = ramp({3, 3, 2}, -1.0, 4.0);
  auto y = eval_op("MatMul", {a, b});
  ASSERT_EQ(y[0].shape(), (Ints{2, 3, 2, 2}));
  std::vector<double> av = values_of(a), bv = values_of(b), got = values_of(y[0]);
  for (int p = 0; p < 2; ++p)
    for (int q = 0; q < 3; ++q)
      for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2; ++j) {
          double acc = 0;
          for (int k = 0; k < 3; ++k) acc += av[(p * 2 + i) * 3 + k] * bv[(q * 3 + k) * 2 + j];
          EXPECT_NEAR(got[((p * 3 + q) * 2 + i) * 2 + j], acc, 1e-4);
        }
  expect_near(values_of(eval_op("MatMul", {f32({3}, {1, 2, 3}), ramp({3, 2})})[0]), {16, 22});
  auto mv = eval_op("MatMul", {ramp({2, 2, 3}), f32({3}, {1, 0, -1})});
  EXPECT_EQ(mv[0].shape(), (Ints{2, 2}));
  expect_near(values_of(mv[0]), {-2, -2, -2, -2});
  expect_near(values_of(eval_op("MatMul", {f32({2}, {3, 4}), f32({2}, {5, 6})})[0]), {39});
}

}  // namespace
}  // namespace tessel::reference::nn_testing
