#include <gtest/gtest.h>

#include <cmath>

#include "tests/reference/nn_test_util.h"

namespace tessel::reference::nn_testing {
namespace {

using Ints = std::vector<int64_t>;

TEST(RefNormTest, BatchNormInferenceUsesRunningStatistics) {
  TensorData x = ramp({2, 2, 3}, 0.5, -1);
  auto y =
      eval_op("BatchNormalization",
              {x, f32({2}, {1, 2}), f32({2}, {0, 1}), f32({2}, {0.5, -1}), f32({2}, {4, 0.25})},
              {{"epsilon", 0.0}});
  std::vector<double> xv = values_of(x), want;
  double scale[] = {1, 2}, bias[] = {0, 1}, mean[] = {0.5, -1}, var[] = {4, 0.25};
  for (int i = 0; i < 12; ++i) {
    int c = (i / 3) % 2;
    want.push_back(scale[c] * (xv[i] - mean[c]) / std::sqrt(var[c]) + bias[c]);
  }
  expect_near(values_of(y[0]), want);
}

TEST(RefNormTest, BatchNormTrainingModeUpdatesRunningStatistics) {
  // One channel, values 1..4: batch mean 2.5, population variance 1.25.
  auto y = eval_op(
      "BatchNormalization",
      {f32({4, 1}, {1, 2, 3, 4}), f32({1}, {1}), f32({1}, {0}), f32({1}, {0}), f32({1}, {1})},
      {{"training_mode", int64_t{1}}, {"epsilon", 0.0}, {"momentum", 0.5}}, 3);
  double sd = std::sqrt(1.25);
  expect_near(values_of(y[0]), {-1.5 / sd, -0.5 / sd, 0.5 / sd, 1.5 / sd});
  expect_near(values_of(y[1]), {1.25});
  expect_near(values_of(y[2]), {1.125});
}

TEST(RefNormTest, InstanceNormNormalizesEachPlane) {
  auto y = eval_op("InstanceNormalization",
                   {f32({1, 2, 2}, {1, 3, 10, 20}), f32({2}, {1, 2}), f32({2}, {0, 5})},
                   {{"epsilon", 0.0}});
  expect_near(values_of(y[0]), {-1, 1, 3, 7});
}

TEST(RefNormTest, LayerNormOverTrailingDimsWithStatistics) {
  TensorData x = ramp({2, 2, 2}, 1.5, -2);
  auto y = eval_op("LayerNormalization", {x, f32({2, 2}, {1, 2, 3, 4}), f32({2}, {0.5, -0.5})},
                   {{"axis", int64_t{1}}, {"epsilon", 0.0}}, 3);
  std::vector<double> xv = values_of(x), want;
  for (int row = 0; row < 2; ++row) {
    double mean = 0, var = 0;
    for (int i = 0; i < 4; ++i) mean += xv[row * 4 + i] / 4;
    for (int i = 0; i < 4; ++i) var += std::pow(xv[row * 4 + i] - mean, 2) / 4;
    for (int i = 0; i < 4; ++i)
      want.push_back((xv[row * 4 + i] - mean) / std::sqrt(var) * (i + 1) + (i % 2 ? -0.5 : 0.5));
  }
  expect_near(values_of(y[0]), want);
  EXPECT_EQ(y[1].shape(), (Ints{2, 1, 1}));
  expect_near(values_of(y[1]), {-2 + 1.5 * 1.5, -2 + 1.5 * 5.5});
  expect_near(values_of(y[2]), {1 / std::sqrt(1.25 * 2.25), 1 / std::sqrt(1.25 * 2.25)});
}

TEST(RefNormTest, LrnSumsSquaresOverNeighbouringChannels) {
  TensorData x = f32({1, 3, 1, 1}, {1, 2, 3});
  auto y =
      eval_op("LRN", {x}, {{"size", int64_t{2}}, {"alpha", 0.5}, {"beta", 1.0}, {"bias", 1.0}});
  // size 2: channel c sums c and c + 1.
  expect_near(values_of(y[0]), {1 / (1 + 0.25 * 5), 2 / (1 + 0.25 * 13), 3 / (1 + 0.25 * 9)});
}

TEST(RefSoftmaxTest, RowsSumToOneAlongTheAxis) {
  TensorData x = ramp({2, 3, 4}, 0.7, -3);
  auto y = eval_op("Softmax", {x}, {{"axis", int64_t{1}}});
  std::vector<double> v = values_of(y[0]);
  for (int o = 0; o < 2; ++o) {
    for (int i = 0; i < 4; ++i) {
      double sum = 0;
      for (int k = 0; k < 3; ++k) sum += v[(o * 3 + k) * 4 + i];
      EXPECT_NEAR(sum, 1.0, 1e-6);
    }
  }
  auto logs = eval_op("LogSoftmax", {x}, {{"axis", int64_t{1}}});
  std::vector<double> lv = values_of(logs[0]);
  for (size_t i = 0; i < v.size(); ++i) EXPECT_NEAR(lv[i], std::log(v[i]), 1e-5);
  // Large inputs must not overflow.
  expect_near(values_of(eval_op("Softmax", {f32({2}, {10000, 10000})})[0]), {0.5, 0.5});
}

// The pre-13 2-D coercion is the importer's rewrite (tests/frontend/canonicalize_ops_test.cc).
TEST(RefSoftmaxTest, DefaultAxisIsTheLastAndHardmaxMarksTheFirstMaximum) {
  TensorData x = ramp({2, 2, 2});
  std::vector<double> v = values_of(eval_op("Softmax", {x})[0]);
  double denom = 1 + std::exp(1);  // pairs along the last axis differ by 1
  expect_near(v, {1 / denom, std::exp(1) / denom, 1 / denom, std::exp(1) / denom, 1 / denom,
                  std::exp(1) / denom, 1 / denom, std::exp(1) / denom});
  auto h = eval_op("Hardmax", {f32({2, 3}, {1, 3, 3, -1, -2, -5})});
  expect_near(values_of(h[0]), {0, 1, 0, 1, 0, 0});
  auto h_mid = eval_op("Hardmax", {f32({2, 2, 1}, {1, 3, 3, -1})}, {{"axis", int64_t{1}}});
  expect_near(values_of(h_mid[0]), {0, 1, 1, 0});
}

}  // namespace
}  // namespace tessel::reference::nn_testing
