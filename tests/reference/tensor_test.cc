#include <gtest/gtest.h>

#include "tests/reference/ref_test_util.h"

namespace tessel::reference {
namespace {

using namespace testing;  // NOLINT
using Shape = std::vector<int64_t>;
const DataType kF32 = DataType::f32(), kI64 = DataType::i64();

// [[0, 1, 2], [3, 4, 5]]
TensorData m2x3() { return f32({2, 3}, {0, 1, 2, 3, 4, 5}); }

TEST(TensorRefTest, ReshapeFlattenSqueeze) {
  expect_tensor(eval1("Reshape", {m2x3(), i64({2}, {-1, 2})}), kF32, {3, 2}, {0, 1, 2, 3, 4, 5});
  expect_tensor(eval1("Flatten", {f32({1, 2, 2}, {1, 2, 3, 4})}, {{"axis", int64_t{2}}}), kF32,
                {2, 2}, {1, 2, 3, 4});
  expect_tensor(eval1("Unsqueeze", {m2x3(), i64({1}, {1})}), kF32, {2, 1, 3}, {0, 1, 2, 3, 4, 5});
  expect_tensor(eval1("Squeeze", {f32({1, 2}, {7, 8}), i64({1}, {0})}), kF32, {2}, {7, 8});
}

TEST(TensorRefTest, TransposeConcatSplit) {
  expect_tensor(eval1("Transpose", {m2x3()}), kF32, {3, 2}, {0, 3, 1, 4, 2, 5});
  TensorData x = f32({1, 2, 3}, {0, 1, 2, 3, 4, 5});
  expect_tensor(eval1("Transpose", {x}, {{"perm", Shape{2, 0, 1}}}), kF32, {3, 1, 2},
                {0, 3, 1, 4, 2, 5});
  expect_tensor(eval1("Concat", {m2x3(), f32({2, 1}, {9, 8})}, {{"axis", int64_t{-1}}}), kF32,
                {2, 4}, {0, 1, 2, 9, 3, 4, 5, 8});
  auto parts = eval("Split", {m2x3(), i64({2}, {2, 1})}, {{"axis", int64_t{1}}}, 2);
  expect_tensor(parts[0], kF32, {2, 2}, {0, 1, 3, 4});
  expect_tensor(parts[1], kF32, {2, 1}, {2, 5});
  parts = eval("Split", {m2x3()}, {}, 2);
  expect_tensor(parts[1], kF32, {1, 3}, {3, 4, 5});
}

TEST(TensorRefTest, SliceWithNegativeStepsAndClampedEnds) {
  TensorData x = f32({2, 4}, {0, 1, 2, 3, 4, 5, 6, 7});
  // x[:, ::-2] and x[1:, 1:3]
  expect_tensor(
      eval1("Slice", {x, i64({1}, {-1}), i64({1}, {INT64_MIN}), i64({1}, {1}), i64({1}, {-2})}),
      kF32, {2, 2}, {3, 1, 7, 5});
  expect_tensor(eval1("Slice", {x, i64({2}, {1, 1}), i64({2}, {100, 3})}), kF32, {1, 2}, {5, 6});
}

TEST(TensorRefTest, Gathers) {
  TensorData x = f32({3, 2}, {0, 1, 2, 3, 4, 5});
  expect_tensor(eval1("Gather", {x, i64({2}, {-1, 0})}), kF32, {2, 2}, {4, 5, 0, 1});
  expect_tensor(eval1("Gather", {x, i64({2, 1}, {1, 0})}, {{"axis", int64_t{1}}}), kF32, {3, 2, 1},
                {1, 0, 3, 2, 5, 4});
  expect_tensor(eval1("GatherElements", {x, i64({2, 2}, {2, 0, 1, -1})}), kF32, {2, 2},
                {4, 1, 2, 5});
  expect_tensor(eval1("GatherND", {x, i64({2, 2}, {2, 1, 0, 0})}), kF32, {2}, {5, 0});
  expect_tensor(eval1("GatherND", {x, i64({1, 1}, {1})}), kF32, {1, 2}, {2, 3});
  TensorData b = f32({2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  expect_tensor(eval1("GatherND", {b, i64({2, 1}, {1, 0})}, {{"batch_dims", int64_t{1}}}), kF32,
                {2, 2}, {2, 3, 4, 5});
  expect_error([&] { eval1("Gather", {x, i64({1}, {3})}); }, {"index 3 is out of range"});
}

TEST(TensorRefTest, Scatters) {
  TensorData x = f32({2, 3}, {0, 0, 0, 0, 0, 0});
  expect_tensor(eval1("ScatterElements", {x, i64({1, 2}, {2, 0}), f32({1, 2}, {5, 6})},
                      {{"axis", int64_t{1}}}),
                kF32, {2, 3}, {6, 0, 5, 0, 0, 0});
  expect_tensor(eval1("ScatterElements", {m2x3(), i64({1, 2}, {1, 1}), f32({1, 2}, {10, 20})},
                      {{"axis", int64_t{1}}, {"reduction", std::string("add")}}),
                kF32, {2, 3}, {0, 31, 2, 3, 4, 5});
  expect_tensor(eval1("ScatterND", {m2x3(), i64({1, 1}, {1}), f32({1, 3}, {7, 8, 9})}), kF32,
                {2, 3}, {0, 1, 2, 7, 8, 9});
  expect_tensor(eval1("ScatterND", {m2x3(), i64({2, 2}, {0, 0, 1, 2}), f32({2}, {2, 3})},
                      {{"reduction", std::string("mul")}}),
                kF32, {2, 3}, {0, 1, 2, 3, 4, 15});
}

TEST(TensorRefTest, ExpandTile) {
  expect_tensor(eval1("Expand", {f32({2, 1}, {1, 2}), i64({3}, {2, 1, 3})}), kF32, {2, 2, 3},
                {1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2});
  expect_tensor(eval1("Tile", {f32({1, 2}, {1, 2}), i64({2}, {2, 2})}), kF32, {2, 4},
                {1, 2, 1, 2, 1, 2, 1, 2});
}

TEST(TensorRefTest, PadModes) {
  TensorData x = f32({1, 3}, {1, 2, 3});
  TensorData pads = i64({4}, {0, 2, 0, 1});
  expect_tensor(eval1("Pad", {x, pads, f32({}, {9})}), kF32, {1, 6}, {9, 9, 1, 2, 3, 9});
  expect_tensor(eval1("Pad", {x, pads}, {{"mode", std::string("reflect")}}), kF32, {1, 6},
                {3, 2, 1, 2, 3, 2});
  expect_tensor(eval1("Pad", {x, pads}, {{"mode", std::string("edge")}}), kF32, {1, 6},
                {1, 1, 1, 2, 3, 3});
  expect_tensor(eval1("Pad", {x, i64({4}, {0, -1, 0, 0})}), kF32, {1, 2},
                {2, 3});  // negative pads crop
  expect_tensor(eval1("Pad", {x, i64({4}, {1, 0, 0, 0}), f32({}, {1.5})}), kF32, {2, 3},
                {1.5, 1.5, 1.5, 1, 2, 3});
}

TEST(TensorRefTest, ShapeOps) {
  TensorData x = f32({2, 3, 4}, std::vector<double>(24, 0));
  expect_tensor(eval1("Shape", {x}), kI64, {3}, {2, 3, 4});
  expect_tensor(eval1("Shape", {x}, {{"start", int64_t{1}}, {"end", int64_t{-1}}}), kI64, {1}, {3});
  expect_tensor(eval1("Size", {x}), kI64, {}, {24});
  TensorData seven = make_tensor(DataType::i32(), {1}, {7});
  expect_tensor(eval1("ConstantOfShape", {i64({2}, {2, 1})}, {{"value", seven}}), DataType::i32(),
                {2, 1}, {7, 7});
  expect_tensor(eval1("ConstantOfShape", {i64({1}, {2})}), kF32, {2}, {0, 0});
  expect_tensor(eval1("Range", {f32({}, {1}), f32({}, {2}), f32({}, {0.25})}), kF32, {4},
                {1, 1.25, 1.5, 1.75});
  expect_tensor(eval1("Range", {i64({}, {10}), i64({}, {4}), i64({}, {-3})}), kI64, {2}, {10, 7});
  expect_tensor(eval1("Constant", {}, {{"value_floats", std::vector<double>{1.5, 2}}}), kF32, {2},
                {1.5, 2});
}

TEST(TensorRefTest, DepthToSpaceModesAndSpaceToDepth) {
  // x[0, c, 0, 0] = c for 4 channels, blocksize 2.
  TensorData x = f32({1, 4, 1, 1}, {0, 1, 2, 3});
  expect_tensor(eval1("DepthToSpace", {x}, {{"blocksize", int64_t{2}}}), kF32, {1, 1, 2, 2},
                {0, 1, 2, 3});
  TensorData x8 = f32({1, 8, 1, 1}, {0, 1, 2, 3, 4, 5, 6, 7});
  // DCR: out[c][i][j] = x[(i*2 + j)*2 + c]; CRD: out[c][i][j] = x[c*4 + i*2 + j].
  expect_tensor(eval1("DepthToSpace", {x8}, {{"blocksize", int64_t{2}}}), kF32, {1, 2, 2, 2},
                {0, 2, 4, 6, 1, 3, 5, 7});
  expect_tensor(
      eval1("DepthToSpace", {x8}, {{"blocksize", int64_t{2}}, {"mode", std::string("CRD")}}), kF32,
      {1, 2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  TensorData y = f32({1, 1, 2, 2}, {0, 1, 2, 3});
  expect_tensor(eval1("SpaceToDepth", {y}, {{"blocksize", int64_t{2}}}), kF32, {1, 4, 1, 1},
                {0, 1, 2, 3});
  // SpaceToDepth inverts DepthToSpace in DCR mode.
  TensorData back =
      eval1("SpaceToDepth", {eval1("DepthToSpace", {x8}, {{"blocksize", int64_t{2}}})},
            {{"blocksize", int64_t{2}}});
  expect_tensor(back, kF32, {1, 8, 1, 1}, {0, 1, 2, 3, 4, 5, 6, 7});
}

TEST(TensorRefTest, OneHotNonZeroTrilu) {
  expect_tensor(eval1("OneHot", {i64({3}, {0, 2, -1}), f32({}, {3}), f32({2}, {0, 5})}), kF32,
                {3, 3}, {5, 0, 0, 0, 0, 5, 0, 0, 5});
  expect_tensor(
      eval1("OneHot", {i64({2}, {1, 0}), i64({}, {2}), i64({2}, {-1, 1})}, {{"axis", int64_t{0}}}),
      kI64, {2, 2}, {-1, 1, 1, -1});
  expect_tensor(eval1("NonZero", {f32({2, 2}, {1, 0, 0, 3})}), kI64, {2, 2}, {0, 1, 0, 1});
  TensorData m = f32({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  expect_tensor(eval1("Trilu", {m}), kF32, {3, 3}, {1, 2, 3, 0, 5, 6, 0, 0, 9});
  expect_tensor(eval1("Trilu", {m, i64({}, {-1})}, {{"upper", int64_t{0}}}), kF32, {3, 3},
                {0, 0, 0, 4, 0, 0, 7, 8, 0});
}

TEST(TensorRefTest, CompressReverseSequenceEyeLike) {
  TensorData cond = make_tensor(DataType::boolean(), {2}, {0, 1});
  expect_tensor(eval1("Compress", {m2x3(), cond}, {{"axis", int64_t{0}}}), kF32, {1, 3}, {3, 4, 5});
  expect_tensor(eval1("Compress", {m2x3(), make_tensor(DataType::boolean(), {3}, {1, 0, 1})}), kF32,
                {2}, {0, 2});
  // time_axis 0, batch_axis 1: column b reverses its first lens[b] rows.
  TensorData x = f32({3, 2}, {0, 1, 2, 3, 4, 5});
  expect_tensor(eval1("ReverseSequence", {x, i64({2}, {3, 2})}), kF32, {3, 2}, {4, 3, 2, 1, 0, 5});
  expect_tensor(eval1("EyeLike", {m2x3()}, {{"k", int64_t{1}}, {"dtype", int64_t{7}}}), kI64,
                {2, 3}, {0, 1, 0, 0, 0, 1});
}

}  // namespace
}  // namespace tessel::reference
