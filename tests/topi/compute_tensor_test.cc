// Data-movement graph ops lowered through topi (topi/compute_tensor.cc), compiled and checked
// against the reference executor, over parameter forms and non-float dtypes.
#include <gtest/gtest.h>

#include "lowering_test_util.h"

namespace tessel::topi {
namespace {

using namespace testing;  // NOLINT

TEST(ComputeTensorTest, ReshapesAndTransposes) {
  OpGraph m;
  auto x = m.input("x", random_data(DataType::f32(), {2, 3, 4}, 1));
  auto i = m.input("i", random_data(DataType::i64(), {2, 1, 3, 1}, 2, -99, 99));
  m.op("reshape", "Reshape", {x, m.constant("s1", ints({4, -1}))});
  m.op("reshape_zero", "Reshape", {x, m.constant("s2", ints({0, 12}))});
  m.op("reshape_i64", "Reshape", {i, m.constant("s3", ints({3, 2}))});
  m.op("flatten", "Flatten", {x});
  m.op("flatten_0", "Flatten", {x}, {{"axis", int_attr(0)}});
  m.op("flatten_neg", "Flatten", {x}, {{"axis", int_attr(-1)}});
  m.op("flatten_3", "Flatten", {x}, {{"axis", int_attr(3)}});
  m.op("squeeze_all", "Squeeze", {i});
  m.op("squeeze_axis", "Squeeze", {i, m.constant("sq_axes", ints({-1}))});
  m.op("unsqueeze", "Unsqueeze", {x, m.constant("unsq_axes", ints({0, -1}))});
  m.op("transpose_default", "Transpose", {x});
  m.op("transpose_perm", "Transpose", {x}, {{"perm", ints_attr({1, 2, 0})}});
  m.op("transpose_i64", "Transpose", {i}, {{"perm", ints_attr({2, 0, 3, 1})}});
  m.check();
}

TEST(ComputeTensorTest, SqueezeUnsqueezeAndSplitOverSeveralAxes) {
  OpGraph m;
  auto x = m.input("x", random_data(DataType::f32(), {1, 6, 1}, 3));
  m.op("squeeze", "Squeeze", {x, m.constant("sq_axes", ints({0, 2}))});
  m.op("unsqueeze", "Unsqueeze", {x, m.constant("unsq_axes", ints({1}))});
  m.op("split", "Split", {x, m.constant("sizes", ints({1, 2, 3}))}, {{"axis", int_attr(1)}}, 3);
  m.op("split_even", "Split", {x}, {{"axis", int_attr(-2)}}, 2);
  m.check();
}

TEST(ComputeTensorTest, ConcatAndSplit) {
  OpGraph m;
  auto a = m.input("a", random_data(DataType::f32(), {2, 3, 4}, 4));
  auto b = m.input("b", random_data(DataType::f32(), {2, 1, 4}, 5));
  auto c = m.input("c", random_data(DataType::f32(), {2, 5, 4}, 6));
  auto p = m.input("p", random_data(DataType::boolean(), {2, 2}, 7));
  auto q = m.input("q", random_data(DataType::boolean(), {2, 3}, 8));
  m.op("concat", "Concat", {a, b, c}, {{"axis", int_attr(1)}});
  m.op("concat_last", "Concat", {a, a}, {{"axis", int_attr(-1)}});
  m.op("concat_bool", "Concat", {p, q}, {{"axis", int_attr(1)}});
  m.op("split_input", "Split", {c, m.constant("sizes", ints({2, 3}))}, {{"axis", int_attr(1)}}, 2);
  m.check();
}

TEST(ComputeTensorTest, SliceWithNegativeStepsAndClampedEnds) {
  OpGraph m;
  auto x = m.input("x", random_data(DataType::f32(), {5, 6, 7}, 9));
  auto i = m.input("i", random_data(DataType::i64(), {10}, 10, -99, 99));
  auto slice = [&](const std::string& name, ValueId data, std::vector<int64_t> starts,
                   std::vector<int64_t> ends, std::vector<int64_t> axes,
                   std::vector<int64_t> steps) {
    m.op(name, "Slice",
         {data, m.constant(name + "_s", ints(starts)), m.constant(name + "_e", ints(ends)),
          m.constant(name + "_a", ints(axes)), m.constant(name + "_st", ints(steps))});
  };
  slice("basic", x, {1, 2}, {4, 6}, {0, 2}, {1, 2});
  slice("negative_step", x, {-1, 5}, {-100, 0}, {1, -1}, {-1, -2});
  slice("clamped", x, {-10, 3}, {100, 1000}, {0, 1}, {3, 1});
  slice("empty", i, {5}, {5}, {0}, {1});
  slice("reverse_i64", i, {100}, {-100}, {0}, {-3});
  m.check();
}

TEST(ComputeTensorTest, SliceWithoutSteps) {
  OpGraph m;
  auto x = m.input("x", random_data(DataType::f32(), {4, 5}, 11));
  m.op("slice", "Slice",
       {x, m.constant("starts", ints({1, -3})), m.constant("ends", ints({3, 100})),
        m.constant("axes", ints({0, 1}))});
  m.check();
}

TEST(ComputeTensorTest, GathersWrapNegativeIndices) {
  OpGraph m;
  auto x = m.input("x", random_data(DataType::f32(), {4, 5, 3}, 12));
  auto idx = m.input("idx", make_tensor<int64_t>(DataType::i64(), {2, 3}, {0, -1, 3, -4, 2, 1}));
  auto idx32 = m.input("idx32", make_tensor<int64_t>(DataType::i32(), {2}, {-5, 4}));
  auto scalar = m.input("scalar", make_tensor<int64_t>(DataType::i64(), {}, {-2}));
  auto el = m.input("el", random_data(DataType::i64(), {4, 2, 3}, 13, -5, 4));
  m.op("gather_0", "Gather", {x, idx});
  m.op("gather_1", "Gather", {x, idx32}, {{"axis", int_attr(1)}});
  m.op("gather_scalar", "Gather", {x, scalar}, {{"axis", int_attr(-1)}});
  m.op("gather_elements", "GatherElements", {x, el}, {{"axis", int_attr(1)}});
  auto lo = m.constant("lo", ints({-4}).reshaped({})),
       hi = m.constant("hi", ints({3}).reshaped({}));
  m.op("gather_elements_0", "GatherElements", {x, m.op("el_clip", "Clip", {el, lo, hi})[0]});
  m.check();
}

// The reference rejects an out-of-range index; the kernel must clamp instead of reading outside.
TEST(ComputeTensorTest, OutOfRangeGatherIndicesAreClampedInsideTheKernel) {
  OpGraph m;
  auto x = m.input("x", make_tensor<double>(DataType::f32(), {4}, {10, 20, 30, 40}));
  auto idx = m.input(
      "idx", make_tensor<int64_t>(DataType::i64(), {4}, {1, 1000000, -1000000, int64_t{1} << 40}));
  m.op("gather", "Gather", {x, idx});
  CompiledModel model = compile_graph(m.b.g);
  for (const auto& [name, value] : m.feeds) model.set_input(name, to_ndarray(value));
  model.run();
  TensorData got = to_tensor_data(model.get_output(0));
  EXPECT_EQ(got.get_double(0), 20);
  EXPECT_EQ(got.get_double(1), 40);
  EXPECT_EQ(got.get_double(2), 10);
  EXPECT_EQ(got.get_double(3), 40);
}

// A training-mode Dropout is random: compiling it is an error naming the node, never an identity.
// A runtime training_mode asks for the graph inputs to bind as constants first.
TEST(ComputeTensorTest, TrainingModeDropoutIsRejected) {
  OpGraph runtime;
  auto x = runtime.input("x", random_data(DataType::f32(), {4}, 3));
  auto ratio = runtime.constant("ratio", make_tensor<double>(DataType::f32(), {}, {0.5}));
  runtime.op(
      "drop", "Dropout",
      {x, ratio, runtime.input("training", make_tensor<int64_t>(DataType::boolean(), {}, {1}))});
  auto e = tessel::testing::expect_error<graph::ConstantRequiredError>(
      [&] { compile_graph(runtime.b.g); }, {"node 'drop' (Dropout)"});
  ASSERT_TRUE(e);
  EXPECT_EQ(e->inputs(), std::vector<std::string>{"training"});
  for (bool with_ratio : {true, false}) {
    OpGraph m;
    auto y = m.input("x", random_data(DataType::f32(), {4}, 3));
    auto on = m.constant("training", make_tensor<int64_t>(DataType::boolean(), {}, {1}));
    auto r = with_ratio ? m.constant("ratio", make_tensor<double>(DataType::f32(), {}, {0.5}))
                        : graph::kNoValue;
    m.op("drop", "Dropout", {y, r, on});
    SCOPED_TRACE(with_ratio ? "ratio 0.5" : "no ratio");
    expect_compile_error(m.b.g, "node 'drop' (Dropout): training-mode Dropout is random");
  }
}

TEST(ComputeTensorTest, ExpandTileAndTrilu) {
  OpGraph m;
  auto x = m.input("x", random_data(DataType::f32(), {3, 1}, 14));
  auto i = m.input("i", random_data(DataType::i64(), {2, 3}, 15, -9, 9));
  m.op("expand", "Expand", {x, m.constant("shape", ints({2, 1, 4}))});
  m.op("expand_keep", "Expand", {x, m.constant("shape1", ints({1, 1}))});
  m.op("tile", "Tile", {i, m.constant("repeats", ints({2, 3}))});
  m.op("tile_one", "Tile", {x, m.constant("repeats1", ints({1, 5}))});
  auto sq = m.input("sq", random_data(DataType::f32(), {2, 4, 5}, 16));
  m.op("triu", "Trilu", {sq, m.constant("k", ints({1}).reshaped({}))});
  m.op("tril", "Trilu", {sq, m.constant("k2", ints({-1}).reshaped({}))}, {{"upper", int_attr(0)}});
  m.check();
}

TEST(ComputeTensorTest, PadModes) {
  OpGraph m;
  auto x = m.input("x", random_data(DataType::f32(), {2, 3, 4}, 17));
  auto i = m.input("i", random_data(DataType::i64(), {3, 4}, 18, -9, 9));
  auto pads = [&](const std::string& name, std::vector<int64_t> p) {
    return m.constant(name, ints(std::move(p)));
  };
  auto value = m.constant("value", make_tensor<double>(DataType::f32(), {}, {2.5}));
  m.op("constant", "Pad", {x, pads("p1", {0, 1, 2, 0, 2, 1}), value});
  m.op("constant_default", "Pad", {i, pads("p2", {1, 1, 1, 1})});
  m.op("crop", "Pad", {x, pads("p3", {0, -1, 1, 0, 0, -2})});
  m.op("reflect", "Pad", {x, pads("p4", {0, 2, 3, 0, 1, 3})},
       {{"mode", Attr(std::string("reflect"))}});
  m.op("edge", "Pad", {i, pads("p5", {2, 0, 1, 5})}, {{"mode", Attr(std::string("edge"))}});
  m.check();
}

TEST(ComputeTensorTest, DepthSpaceAndOneHot) {
  OpGraph m;
  auto x = m.input("x", random_data(DataType::f32(), {2, 8, 2, 3}, 20));
  auto y = m.input("y", random_data(DataType::f32(), {1, 3, 4, 6}, 21));
  m.op("d2s_dcr", "DepthToSpace", {x}, {{"blocksize", int_attr(2)}});
  m.op("d2s_crd", "DepthToSpace", {x},
       {{"blocksize", int_attr(2)}, {"mode", Attr(std::string("CRD"))}});
  m.op("s2d", "SpaceToDepth", {y}, {{"blocksize", int_attr(2)}});
  auto idx = m.input("idx", make_tensor<int64_t>(DataType::i64(), {2, 3}, {0, 4, -1, -5, 9, 2}));
  auto depth = m.constant("depth", make_tensor<int64_t>(DataType::i64(), {}, {5}));
  auto values = m.input("values", make_tensor<double>(DataType::f32(), {2}, {-1, 3}));
  m.op("one_hot", "OneHot", {idx, depth, values});
  m.op("one_hot_0", "OneHot", {idx, depth, values}, {{"axis", int_attr(0)}});
  m.op("one_hot_int", "OneHot", {idx, depth, m.constant("ivalues", ints({0, 7}))},
       {{"axis", int_attr(-2)}});
  m.check();
}

TEST(ComputeTensorTest, DropoutMaskAndShapeOps) {
  OpGraph m;
  auto x = m.input("x", random_data(DataType::f32(), {3, 5}, 22));
  m.op("dropout", "Dropout", {x}, {}, 2);
  m.op("shape", "Shape", {x});
  m.op("size", "Size", {x});
  m.check();
}

TEST(ComputeTensorTest, InjectiveChainsFuseIntoOneKernel) {
  OpGraph m;
  auto x = m.input("x", random_data(DataType::f32(), {2, 3, 4}, 23));
  auto t = m.b.op("Transpose", {x}, {{"perm", ints_attr({2, 0, 1})}}, "t");
  auto s = m.b.op("Slice", {t, m.constant("st", ints({1})), m.constant("en", ints({4}))}, {}, "s");
  auto r = m.b.op("Reshape", {s, m.constant("shp", ints({3, 6}))}, {}, "r");
  m.op("pad", "Pad", {r, m.constant("pads", ints({1, 0, 0, 1}))},
       {{"mode", Attr(std::string("reflect"))}});
  std::string summary = m.check();
  EXPECT_NE(summary.find("[Transpose+Slice+Reshape+Pad]"), std::string::npos) << summary;
}

// Compress reads its constant condition at compile time: with and without an axis (the input
// flattened), a negative axis, a condition shorter than the axis, and none kept.
TEST(ComputeTensorTest, CompressWithConstantConditions) {
  OpGraph m;
  auto x = m.input("x", random_data(DataType::f32(), {3, 4, 5}, 24));
  auto cond = [&](const std::string& name, std::vector<int64_t> keep) {
    auto n = static_cast<int64_t>(keep.size());
    return m.constant(name, make_tensor<int64_t>(DataType::boolean(), {n}, keep));
  };
  m.op("axis0", "Compress", {x, cond("c3", {0, 1, 1})}, {{"axis", int_attr(0)}});
  m.op("axis1_short", "Compress", {x, cond("c2", {1, 0})}, {{"axis", int_attr(1)}});
  m.op("axis_neg", "Compress", {x, cond("c5", {1, 0, 1, 1, 0})}, {{"axis", int_attr(-1)}});
  m.op("flat", "Compress", {x, cond("c8", {0, 1, 1, 0, 1, 0, 0, 1})});
  m.op("none_kept", "Compress", {x, cond("c0", {0, 0, 0})}, {{"axis", int_attr(0)}});
  auto i = m.input("i", random_data(DataType::i64(), {6}, 25, -9, 9));
  m.op("int_all", "Compress", {i, cond("c6", {1, 1, 1, 1, 1, 1})}, {{"axis", int_attr(0)}});
  m.check();
}

// A condition longer than the axis cannot be compressed: an error naming the node.
TEST(ComputeTensorTest, CompressConditionLongerThanTheAxisIsAnErrorNamingTheNode) {
  OpGraph m;
  auto x = m.input("x", random_data(DataType::f32(), {4}, 24));
  auto keep = m.constant("keep", make_tensor<int64_t>(DataType::boolean(), {5}, {1, 0, 1, 1, 1}));
  m.op("compress", "Compress", {x, keep}, {{"axis", int_attr(0)}});
  expect_compile_error(m.b.g, "node 'compress' (Compress): the condition has 5 entries");
}

}  // namespace
}  // namespace tessel::topi
