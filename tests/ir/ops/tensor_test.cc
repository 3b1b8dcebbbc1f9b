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
constexpr int64_t U = kUnknownDim;

Shape shape_of(const std::string& op, const std::vector<OpInput>& in,
               std::map<std::string, Attr> attrs = {}) {
  return infer(op, in, std::move(attrs), 1)[0].shape;
}

TEST(TensorInferTest, ReshapeZeroAndMinusOne) {
  auto x = value_of(kF32, {2, 3, 4});
  EXPECT_EQ(shape_of("Reshape", {x, constant_of(i64({3}, {0, -1, 2}))}), (Shape{2, 6, 2}));
  EXPECT_EQ(shape_of("Reshape", {value_of(kF32, {U, 3, 4}), constant_of(i64({2}, {0, -1}))}),
            (Shape{U, U}));
  // allowzero: 0 is a real zero-size dim.
  EXPECT_EQ(shape_of("Reshape", {value_of(kF32, {0, 3}), constant_of(i64({2}, {3, 0}))},
                     {{"allowzero", int64_t{1}}}),
            (Shape{3, 0}));
  expect_error([&] { shape_of("Reshape", {x, constant_of(i64({2}, {5, -1}))}); },
               {"node 'n0' (Reshape)"});
  expect_error([&] { shape_of("Reshape", {x, value_of(DataType::i64(), {2})}); },
               {"must be a constant"});
}

TEST(TensorInferTest, FlattenTransposeConcat) {
  EXPECT_EQ(shape_of("Flatten", {value_of(kF32, {2, 3, 4})}, {{"axis", int64_t{-1}}}),
            (Shape{6, 4}));
  EXPECT_EQ(shape_of("Flatten", {value_of(kF32, {2, 3})}, {{"axis", int64_t{0}}}), (Shape{1, 6}));
  EXPECT_EQ(shape_of("Transpose", {value_of(kF32, {2, 3, 4})}), (Shape{4, 3, 2}));
  EXPECT_EQ(shape_of("Transpose", {value_of(kF32, {2, 3, 4})}, {{"perm", Shape{1, 2, 0}}}),
            (Shape{3, 4, 2}));
  expect_error([] { shape_of("Transpose", {value_of(kF32, {2, 3})}, {{"perm", Shape{0, 0}}}); },
               {"not a permutation"});
  EXPECT_EQ(
      shape_of("Concat", {value_of(kF32, {2, 3}), value_of(kF32, {2, 5})}, {{"axis", int64_t{-1}}}),
      (Shape{2, 8}));
  expect_error(
      [] {
        shape_of("Concat", {value_of(kF32, {2, 3}), value_of(kF32, {4, 5})},
                 {{"axis", int64_t{1}}});
      },
      {"dims 2 and 4 differ"});
}

TEST(TensorInferTest, SplitByInputOrEvenly) {
  auto x = value_of(kF32, {6, 4});
  auto out = infer("Split", {x}, {}, 3);
  EXPECT_EQ(out[2].shape, (Shape{2, 4}));
  out = infer("Split", {x, constant_of(i64({2}, {1, 3}))}, {{"axis", int64_t{1}}}, 2);
  EXPECT_EQ(out[0].shape, (Shape{6, 1}));
  EXPECT_EQ(out[1].shape, (Shape{6, 3}));
  out = infer("Split", {x, constant_of(i64({2}, {4, 2}))}, {}, 2);
  EXPECT_EQ(out[0].shape, (Shape{4, 4}));
  EXPECT_EQ(out[1].shape, (Shape{2, 4}));
  expect_error([&] { infer("Split", {x}, {}, 4); }, {"does not split evenly"});
}

TEST(TensorInferTest, SliceInputs) {
  auto x = value_of(kF32, {10, 8, U});
  auto c = [](std::vector<double> v) {
    return constant_of(i64({static_cast<int64_t>(v.size())}, v));
  };
  // [1:-1, ::-2] with default axes; the unknown dim is not sliced.
  EXPECT_EQ(shape_of("Slice", {x, c({1, -1}), c({-1, -1000}), omitted(), c({1, -2})}),
            (Shape{8, 4, U}));
  EXPECT_EQ(shape_of("Slice", {x, c({2}), c({1000}), c({-1})}), (Shape{10, 8, U}));
  EXPECT_EQ(shape_of("Slice", {x, c({2}), c({1000}), c({0})}), (Shape{8, 8, U}));
  EXPECT_EQ(shape_of("Slice", {x, c({3}), c({5}), c({1})}), (Shape{10, 2, U}));
  expect_error([&] { shape_of("Slice", {x, c({0}), c({1}), c({0}), c({0})}); }, {"step"});
}

TEST(TensorInferTest, Gathers) {
  auto data = value_of(kF32, {5, 4, 3});
  EXPECT_EQ(shape_of("Gather", {data, value_of(DataType::i64(), {2, 7})}, {{"axis", int64_t{1}}}),
            (Shape{5, 2, 7, 3}));
  EXPECT_EQ(shape_of("Gather", {data, value_of(DataType::i64(), {})}), (Shape{4, 3}));
  EXPECT_EQ(shape_of("GatherElements", {data, value_of(DataType::i64(), {5, 2, 3})},
                     {{"axis", int64_t{1}}}),
            (Shape{5, 2, 3}));
  EXPECT_EQ(shape_of("GatherND", {data, value_of(DataType::i64(), {6, 2})}), (Shape{6, 3}));
  EXPECT_EQ(
      shape_of("GatherND", {data, value_of(DataType::i64(), {5, 1})}, {{"batch_dims", int64_t{1}}}),
      (Shape{5, 3}));
}

TEST(TensorInferTest, SqueezeUnsqueeze) {
  auto x = value_of(kF32, {1, 3, 1});
  EXPECT_EQ(shape_of("Squeeze", {x}), (Shape{3}));
  EXPECT_EQ(shape_of("Squeeze", {x, constant_of(i64({1}, {-1}))}), (Shape{1, 3}));
  EXPECT_EQ(shape_of("Squeeze", {x, constant_of(i64({1}, {0}))}), (Shape{3, 1}));
  expect_error([&] { shape_of("Squeeze", {x, constant_of(i64({1}, {1}))}); },
               {"cannot squeeze axis 1"});
  EXPECT_EQ(shape_of("Unsqueeze", {value_of(kF32, {3, 4}), constant_of(i64({2}, {0, -1}))}),
            (Shape{1, 3, 4, 1}));
  EXPECT_EQ(shape_of("Unsqueeze", {value_of(kF32, {3}), constant_of(i64({1}, {1}))}),
            (Shape{3, 1}));
}

TEST(TensorInferTest, ExpandTilePad) {
  EXPECT_EQ(shape_of("Expand", {value_of(kF32, {3, 1}), constant_of(i64({3}, {2, 1, 4}))}),
            (Shape{2, 3, 4}));
  EXPECT_EQ(shape_of("Tile", {value_of(kF32, {2, U}), constant_of(i64({2}, {3, 2}))}),
            (Shape{6, U}));
  EXPECT_EQ(shape_of("Pad", {value_of(kF32, {2, 3}), constant_of(i64({4}, {1, 0, 1, -1}))}),
            (Shape{4, 2}));
  EXPECT_EQ(shape_of("Pad", {value_of(kF32, {2, 3}), constant_of(i64({4}, {0, 2, 0, 2}))},
                     {{"mode", std::string("edge")}}),
            (Shape{2, 7}));
  expect_error(
      [] {
        shape_of("Pad", {value_of(kF32, {2, 3}), constant_of(i64({4}, {0, 0, 0, 0}))},
                 {{"mode", std::string("wrap")}});
      },
      {"unsupported pad mode 'wrap'"});
}

TEST(TensorInferTest, ShapeProducingOps) {
  auto x = value_of(kF32, {2, 3, 4});
  EXPECT_EQ(infer("Shape", {x})[0], (TensorType{DataType::i64(), {3}, {}}));
  EXPECT_EQ(shape_of("Shape", {x}, {{"start", int64_t{-2}}}), (Shape{2}));
  EXPECT_EQ(infer("Size", {x})[0], (TensorType{DataType::i64(), {}, {}}));
  EXPECT_EQ(infer("ConstantOfShape", {constant_of(i64({2}, {4, 5}))})[0],
            (TensorType{kF32, {4, 5}, {}}));
  EXPECT_EQ(infer("Range", {constant_of(i64({}, {1})), constant_of(i64({}, {10})),
                            constant_of(i64({}, {3}))})[0],
            (TensorType{DataType::i64(), {3}, {}}));
  EXPECT_EQ(infer("Constant", {}, {{"value_ints", Shape{1, 2, 3}}})[0],
            (TensorType{DataType::i64(), {3}, {}}));
  EXPECT_EQ(infer("Constant", {}, {{"value_float", 2.0}})[0], (TensorType{kF32, {}, {}}));
  EXPECT_EQ(infer("NonZero", {constant_of(f32({4}, {0, 1, 0, 2}))})[0].shape, (Shape{1, 2}));
  expect_error([] { infer("NonZero", {value_of(kF32, {4})}); },
               {"the data, on whose values the output shape depends) must be a constant"});
}

TEST(TensorInferTest, DepthSpaceAndOneHot) {
  EXPECT_EQ(shape_of("DepthToSpace", {value_of(kF32, {1, 8, 2, 3})}, {{"blocksize", int64_t{2}}}),
            (Shape{1, 2, 4, 6}));
  EXPECT_EQ(shape_of("SpaceToDepth", {value_of(kF32, {1, 2, 4, 6})}, {{"blocksize", int64_t{2}}}),
            (Shape{1, 8, 2, 3}));
  auto out = infer("OneHot",
                   {value_of(DataType::i64(), {2, 3}), constant_of(i64({}, {5})),
                    value_of(DataType::i32(), {2})},
                   {{"axis", int64_t{1}}});
  EXPECT_EQ(out[0], (TensorType{DataType::i32(), {2, 5, 3}, {}}));
}

TEST(TensorInferTest, CompressNeedsAConstantCondition) {
  TensorData cond = make_tensor(DataType::boolean(), {3}, {1, 0, 1});
  EXPECT_EQ(
      shape_of("Compress", {value_of(kF32, {2, 3}), constant_of(cond)}, {{"axis", int64_t{1}}}),
      (Shape{2, 2}));
  EXPECT_EQ(shape_of("Compress", {value_of(kF32, {2, 3}), constant_of(cond)}), (Shape{2}));
  expect_error(
      [] { shape_of("Compress", {value_of(kF32, {3}), value_of(DataType::boolean(), {3})}); },
      {"the condition, on whose values the output shape depends) must be a constant"});
  EXPECT_EQ(infer("EyeLike", {value_of(kF32, {2, 3})}, {{"dtype", int64_t{6}}})[0],
            (TensorType{DataType::i32(), {2, 3}, {}}));
}

}  // namespace
}  // namespace tessel::graph
