#include <gtest/gtest.h>

#include "ir/error.h"
#include "tests/common/expect_error.h"
#include "tests/ir/ops/op_test_util.h"

namespace tessel::graph {
namespace {

using namespace testing;  // NOLINT
using tessel::testing::expect_error;
using Shape = std::vector<int64_t>;

const DataType kF32 = DataType::f32();

TEST(ReduceInferTest, AxesAttributeWithKeepdims) {
  auto in = value_of(kF32, {2, 3, 4});
  EXPECT_EQ(infer("ReduceMean", {in}, {{"axes", Shape{1}}})[0].shape, (Shape{2, 1, 4}));
  EXPECT_EQ(infer("ReduceMax", {in}, {{"axes", Shape{-1, 0}}, {"keepdims", int64_t{0}}})[0].shape,
            (Shape{3}));
  EXPECT_EQ(infer("ReduceL2", {in}, {{"keepdims", int64_t{0}}})[0].shape, Shape{});
}

TEST(ReduceInferTest, ReduceSumTakesAxesAsAnInput) {
  auto in = value_of(kF32, {2, 3, 4});
  EXPECT_EQ(infer("ReduceSum", {in, constant_of(i64({1}, {-2}))})[0].shape, (Shape{2, 1, 4}));
  // Omitted axes reduce everything, unless noop_with_empty_axes.
  EXPECT_EQ(infer("ReduceSum", {in})[0].shape, (Shape{1, 1, 1}));
  EXPECT_EQ(infer("ReduceSum", {in}, {{"noop_with_empty_axes", int64_t{1}}})[0].shape,
            (Shape{2, 3, 4}));
  EXPECT_EQ(infer("ReduceSum", {in, constant_of(i64({2}, {2, 0}))})[0].shape, (Shape{1, 3, 1}));
}

TEST(ReduceInferTest, NonConstantAxesAndBadAxisAreErrors) {
  auto in = value_of(kF32, {2, 3});
  expect_error([&] { infer("ReduceSum", {in, value_of(DataType::i64(), {1})}); },
               {"node 'n0' (ReduceSum)", "must be a constant"});
  expect_error([&] { infer("ReduceMin", {in}, {{"axes", Shape{2}}}); }, {"axis 2 is out of range"});
}

TEST(ReduceInferTest, ArgMaxGivesInt64) {
  auto out = infer("ArgMax", {value_of(kF32, {2, 3, 4})},
                   {{"axis", int64_t{-1}}, {"keepdims", int64_t{0}}});
  EXPECT_EQ(out[0], (TensorType{DataType::i64(), {2, 3}, {}}));
  EXPECT_EQ(infer("ArgMin", {value_of(kF32, {2, 3})})[0].shape, (Shape{1, 3}));
}

TEST(ReduceInferTest, TopKReplacesTheAxisWithK) {
  auto out = infer("TopK", {value_of(kF32, {3, 5}), constant_of(i64({1}, {2}))}, {}, 2);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0], (TensorType{kF32, {3, 2}, {}}));
  EXPECT_EQ(out[1], (TensorType{DataType::i64(), {3, 2}, {}}));
  out = infer("TopK", {value_of(kF32, {3, 5}), constant_of(i64({1}, {3}))}, {{"axis", int64_t{0}}},
              2);
  EXPECT_EQ(out[0].shape, (Shape{3, 5}));
  expect_error([] { infer("TopK", {value_of(kF32, {3, 5}), constant_of(i64({1}, {6}))}, {}, 2); },
               {"exceeds the axis size 5"});
}

TEST(ReduceInferTest, CumSumKeepsType) {
  EXPECT_EQ(infer("CumSum", {value_of(DataType::i32(), {4}), value_of(DataType::i64(), {})})[0],
            (TensorType{DataType::i32(), {4}, {}}));
}

}  // namespace
}  // namespace tessel::graph
