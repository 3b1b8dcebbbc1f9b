#include <gtest/gtest.h>

#include <cmath>

#include "tests/reference/nn_test_util.h"
#include "tests/reference/ref_test_util.h"

namespace tessel::reference::nn_testing {
namespace {

using Ints = std::vector<int64_t>;
using Attrs = std::map<std::string, Attr>;

TensorData i64(Ints shape, const std::vector<double>& v) {
  return graph::testing::i64(std::move(shape), v);
}

// Scores [N=2, C=3]: row 0 = {1, 2, 3}, row 1 = {4, 5, 6}; targets {2, 0}.
TensorData scores_2x3() { return f32({2, 3}, {1, 2, 3, 4, 5, 6}); }

TEST(RefLossTest, NllReductions) {
  TensorData x = scores_2x3(), t = i64({2}, {2, 0});
  expect_near(values_of(eval_op("NegativeLogLikelihoodLoss", {x, t},
                                {{"reduction", std::string("none")}})[0]),
              {-3, -4});
  expect_near(values_of(eval_op("NegativeLogLikelihoodLoss", {x, t},
                                {{"reduction", std::string("sum")}})[0]),
              {-7});
  expect_near(values_of(eval_op("NegativeLogLikelihoodLoss", {x, t})[0]), {-3.5});
}

TEST(RefLossTest, NllWeightedMeanDividesByTheWeightSum) {
  // loss = {-0.5 * 3, -2 * 4}; mean = -9.5 / (0.5 + 2).
  TensorData w = f32({3}, {2, 1, 0.5});
  expect_near(
      values_of(eval_op("NegativeLogLikelihoodLoss", {scores_2x3(), i64({2}, {2, 0}), w})[0]),
      {-9.5 / 2.5});
}

TEST(RefLossTest, NllIgnoreIndexDropsElementsFromSumAndCount) {
  // Target -1 is ignored (and outside the classes, which is fine for an ignored element).
  TensorData x = scores_2x3(), t = i64({2}, {-1, 1});
  Attrs ii{{"ignore_index", int64_t{-1}}};
  expect_near(values_of(eval_op("NegativeLogLikelihoodLoss", {x, t}, ii)[0]), {-5});
  ii["reduction"] = std::string("none");
  expect_near(values_of(eval_op("NegativeLogLikelihoodLoss", {x, t}, ii)[0]), {0, -5});
}

TEST(RefLossTest, NllOverSpatialDims) {
  // [N=1, C=2, d1=2, d2=2]: class c at position p is 10 * c + p; targets pick classes {1, 0, 0, 1}.
  TensorData x = f32({1, 2, 2, 2}, {0, 1, 2, 3, 10, 11, 12, 13});
  auto y = eval_op("NegativeLogLikelihoodLoss", {x, i64({1, 2, 2}, {1, 0, 0, 1})},
                   {{"reduction", std::string("none")}});
  EXPECT_EQ(y[0].shape(), (Ints{1, 2, 2}));
  expect_near(values_of(y[0]), {-10, -1, -2, -13});
}

TEST(RefLossTest, SoftmaxCrossEntropyWithLogProb) {
  TensorData x = scores_2x3(), t = i64({2}, {2, 0});
  auto y = eval_op("SoftmaxCrossEntropyLoss", {x, t}, {{"reduction", std::string("none")}}, 2);
  // Both rows are {a, a+1, a+2}: log_softmax = {0, 1, 2} - log(1 + e + e^2).
  double lse = std::log(1 + std::exp(1.0) + std::exp(2.0));
  expect_near(values_of(y[1]), {-lse, 1 - lse, 2 - lse, -lse, 1 - lse, 2 - lse});
  expect_near(values_of(y[0]), {lse - 2, lse});
  auto mean = eval_op("SoftmaxCrossEntropyLoss", {x, t, f32({3}, {1, 1, 3})}, {}, 1);
  expect_near(values_of(mean[0]), {(3 * (lse - 2) + lse) / 4});
}

TEST(RefLossTest, ErrorsNameTheNode) {
  testing::expect_error(
      [] { testing::eval1("NegativeLogLikelihoodLoss", {scores_2x3(), i64({2}, {3, 0})}); },
      {"outside the 3 classes"});
}

}  // namespace
}  // namespace tessel::reference::nn_testing
