#include <gtest/gtest.h>

#include "ir/error.h"
#include "tests/common/expect_error.h"
#include "tests/ir/ops/op_test_util.h"

namespace tessel::graph {
namespace {

using namespace testing;  // NOLINT
using tessel::testing::expect_error;

const DataType kF32 = DataType::f32();

TEST(ElementwiseInferTest, UnaryKeepsType) {
  auto out = infer("Sigmoid", {value_of(kF32, {2, kUnknownDim})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0], (TensorType{kF32, {2, kUnknownDim}, {}}));
  EXPECT_EQ(infer("Neg", {value_of(DataType::i32(), {3})})[0].dtype, DataType::i32());
  EXPECT_EQ(infer("Shrink", {value_of(DataType::i32(), {3})})[0].dtype, DataType::i32());
}

TEST(ElementwiseInferTest, FloatOnlyOpRejectsIntegers) {
  expect_error([] { infer("Exp", {value_of(DataType::i64(), {3})}); },
               {"node 'n0' (Exp)", "float"});
}

TEST(ElementwiseInferTest, BinaryBroadcasts) {
  auto out = infer("Add", {value_of(kF32, {4, 1, 3}), value_of(kF32, {5, 1})});
  EXPECT_EQ(out[0].shape, (std::vector<int64_t>{4, 5, 3}));
  out = infer("Mul", {value_of(kF32, {kUnknownDim, 3}), value_of(kF32, {3})});
  EXPECT_EQ(out[0].shape, (std::vector<int64_t>{kUnknownDim, 3}));
}

TEST(ElementwiseInferTest, BinaryErrorsNameTheNode) {
  expect_error([] { infer("Sub", {value_of(kF32, {2, 3}), value_of(kF32, {4})}); },
               {"node 'n0' (Sub)", "do not broadcast"});
  expect_error([] { infer("Add", {value_of(kF32, {2}), value_of(DataType::i64(), {2})}); },
               {"node 'n0' (Add)", "float32", "int64"});
}

TEST(ElementwiseInferTest, PowAllowsMixedExponentType) {
  auto out = infer("Pow", {value_of(kF32, {2, 3}), value_of(DataType::i64(), {1})});
  EXPECT_EQ(out[0], (TensorType{kF32, {2, 3}, {}}));
}

TEST(ElementwiseInferTest, ComparisonsAndLogicGiveBool) {
  EXPECT_EQ(infer("Less", {value_of(kF32, {2, 1}), value_of(kF32, {1, 5})})[0],
            (TensorType{DataType::boolean(), {2, 5}, {}}));
  EXPECT_EQ(
      infer("Xor", {value_of(DataType::boolean(), {3}), value_of(DataType::boolean(), {1})})[0]
          .dtype,
      DataType::boolean());
  expect_error([] { infer("And", {value_of(kF32, {3}), value_of(kF32, {3})}); }, {"(And)", "bool"});
  EXPECT_EQ(infer("IsNaN", {value_of(kF32, {7})})[0].dtype, DataType::boolean());
}

TEST(ElementwiseInferTest, VariadicBroadcastsAllInputs) {
  auto out =
      infer("Max", {value_of(kF32, {3, 1}), value_of(kF32, {1, 4}), value_of(kF32, {2, 1, 1})});
  EXPECT_EQ(out[0].shape, (std::vector<int64_t>{2, 3, 4}));
}

TEST(ElementwiseInferTest, WhereBroadcastsConditionAndTakesXType) {
  auto out = infer("Where", {value_of(DataType::boolean(), {2, 1}), value_of(DataType::i64(), {3}),
                             value_of(DataType::i64(), {1})});
  EXPECT_EQ(out[0], (TensorType{DataType::i64(), {2, 3}, {}}));
  expect_error(
      [] { infer("Where", {value_of(kF32, {2}), value_of(kF32, {2}), value_of(kF32, {2})}); },
      {"(Where)", "bool"});
}

TEST(ElementwiseInferTest, CastUsesOnnxTypeCodes) {
  EXPECT_EQ(infer("Cast", {value_of(kF32, {2})}, {{"to", int64_t{7}}})[0].dtype, DataType::i64());
  EXPECT_EQ(infer("Cast", {value_of(kF32, {2})}, {{"to", int64_t{10}}})[0].dtype, DataType::f16());
  expect_error([] { infer("Cast", {value_of(kF32, {2})}, {{"to", int64_t{8}}}); },
               {"(Cast)", "element type 8"});
  EXPECT_EQ(infer("CastLike", {value_of(kF32, {2}), value_of(DataType::f64(), {})})[0].dtype,
            DataType::f64());
}

TEST(ElementwiseInferTest, DropoutMaskIsBool) {
  auto out = infer("Dropout", {value_of(kF32, {2, 3})}, {}, 2);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0], (TensorType{kF32, {2, 3}, {}}));
  EXPECT_EQ(out[1], (TensorType{DataType::boolean(), {2, 3}, {}}));
}

TEST(ElementwiseInferTest, TableHasPatterns) {
  EXPECT_EQ(find_op("Relu")->pattern, OpPattern::kElemWise);
  EXPECT_EQ(find_op("Add")->pattern, OpPattern::kBroadcast);
  EXPECT_EQ(find_op("NoSuchOp"), nullptr);
}

}  // namespace
}  // namespace tessel::graph
