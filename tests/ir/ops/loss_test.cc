#include <gtest/gtest.h>

#include "tests/ir/ops/nn_test_util.h"

namespace tessel::graph::nn_testing {
namespace {

using Ints = std::vector<int64_t>;
constexpr int64_t kU = kUnknownDim;

TensorType i64(Ints shape) { return TensorType{DataType::i64(), std::move(shape), {}}; }

TEST(LossInferTest, ReductionNoneKeepsTheTargetShape) {
  auto t = infer("NegativeLogLikelihoodLoss", {f32({3, 5, 2, 4}), i64({3, 2, 4})},
                 {{"reduction", std::string("none")}});
  EXPECT_EQ(t[0].dtype, DataType::f32());
  EXPECT_EQ(t[0].shape, (Ints{3, 2, 4}));
  t = infer("NegativeLogLikelihoodLoss", {f32({kU, 5}), i64({7})},
            {{"reduction", std::string("none")}});
  EXPECT_EQ(t[0].shape, (Ints{7}));
}

TEST(LossInferTest, SumAndMeanGiveAScalar) {
  EXPECT_EQ(infer("NegativeLogLikelihoodLoss", {f32({3, 5}), i64({3}), f32({5})})[0].shape, Ints{});
  EXPECT_EQ(infer("NegativeLogLikelihoodLoss", {f32({3, 5, 2}), i64({3, 2})},
                  {{"reduction", std::string("sum")}})[0]
                .shape,
            Ints{});
}

TEST(LossInferTest, SoftmaxCrossEntropyLogProbIsLikeTheScores) {
  auto t = infer("SoftmaxCrossEntropyLoss", {f32({2, 4, 3}), i64({2, 3})}, {}, 2);
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0].shape, Ints{});
  EXPECT_EQ(t[1].shape, (Ints{2, 4, 3}));
  EXPECT_EQ(t[1].dtype, DataType::f32());
}

TEST(LossInferTest, ErrorsNameTheNode) {
  expect_infer_error("without its class dim", "NegativeLogLikelihoodLoss",
                     {f32({3, 5, 2}), i64({3, 5})});
  expect_infer_error("integer tensor", "NegativeLogLikelihoodLoss", {f32({3, 5}), f32({3})});
  expect_infer_error("rank >= 2", "SoftmaxCrossEntropyLoss", {f32({5}), i64({})});
  expect_infer_error("weight", "NegativeLogLikelihoodLoss", {f32({3, 5}), i64({3}), f32({4})});
  expect_infer_error("reduction must be", "NegativeLogLikelihoodLoss", {f32({3, 5}), i64({3})},
                     {{"reduction", std::string("max")}});
}

TEST(LossInferTest, SinceOpset12) {
  EXPECT_EQ(find_op("NegativeLogLikelihoodLoss")->since_opset, 12);
  EXPECT_EQ(find_op("SoftmaxCrossEntropyLoss")->since_opset, 12);
  EXPECT_EQ(find_op("SoftmaxCrossEntropyLoss")->pattern, OpPattern::kOpaque);
}

}  // namespace
}  // namespace tessel::graph::nn_testing
