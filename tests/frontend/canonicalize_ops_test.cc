// Opset canonicalization: a model written against an old opset imports as the same computation
// written against the newest one. Each case pairs an old-opset model with the same computation
// written by hand in opset-17 form, runs both through the reference executor and compares; the
// Softmax case also checks against naive loops, since its opset-17 spelling is the rewrite itself.
#include "frontend/canonicalize_ops.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <utility>

#include "frontend/onnx_importer.h"
#include "reference/reference.h"
#include "tests/common/expect_error.h"

namespace tessel::frontend {
namespace {

using graph::Graph;
using graph::TensorData;

Graph import_text(const std::string& text) {
  return import_onnx_bytes(onnx_text_to_model_bytes(text), {}, "m.onnx");
}

// Values that differ everywhere and have both signs: 0.25 * (i - n/2) + small fractions.
TensorData ramp(std::vector<int64_t> shape) {
  TensorData t(DataType::f32(), std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i)
    t.data<float>()[i] = 0.25f * static_cast<float>(i - t.numel() / 2) + 0.01f * (i % 3);
  return t;
}

std::vector<double> values(const TensorData& t) {
  std::vector<double> out;
  for (int64_t i = 0; i < t.numel(); ++i) out.push_back(t.get_double(i));
  return out;
}

const graph::Node* find_node(const Graph& g, const std::string& op) {
  for (const auto& n : g.nodes) {
    if (graph::op_kind_name(n.op) == op) return &n;
  }
  return nullptr;
}

// Runs both models on `x` and expects the same outputs (shapes and values, exactly).
void expect_same_as_modern(const std::string& old_text, const std::string& modern_text,
                           std::vector<int64_t> x_shape) {
  Graph old_g = import_text(old_text), modern_g = import_text(modern_text);
  EXPECT_EQ(old_g.opset, kMaxOpset);
  std::map<std::string, TensorData> in{{"x", ramp(std::move(x_shape))}};
  std::vector<TensorData> got = reference::run(old_g, in), want = reference::run(modern_g, in);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].shape(), want[i].shape()) << "output " << i;
    EXPECT_EQ(values(got[i]), values(want[i])) << "output " << i << "\n" << old_g.str();
  }
}

std::string model(int opset, const std::string& signature, const std::string& body) {
  return "<ir_version: 7, opset_import: [\"\" : " + std::to_string(opset) + "]> g " + signature +
         " {" + body + "}";
}

TEST(CanonicalizeOpsTest, ReduceSumAxesBecomeAnInput) {
  std::string sig = "(float[2, 3, 4] x) => (float[2, 4] y)";
  std::string old_text = model(11, sig, "y = ReduceSum<axes = [1], keepdims = 0>(x)");
  expect_same_as_modern(old_text,
                        model(17, sig,
                              "a = Constant<value = int64[1] {1}>()\n"
                              "y = ReduceSum<keepdims = 0>(x, a)"),
                        {2, 3, 4});
  Graph g = import_text(old_text);
  const graph::Node* sum = find_node(g, "ReduceSum");
  ASSERT_NE(sum, nullptr);
  EXPECT_FALSE(sum->has_attr("axes"));
  ASSERT_EQ(sum->inputs.size(), 2u);
  EXPECT_EQ(values(*g.value(sum->inputs[1]).constant), std::vector<double>{1});
}

TEST(CanonicalizeOpsTest, SliceAttributesBecomeInputs) {
  expect_same_as_modern(model(9, "(float[4, 6] x) => (float[2, 3] y)",
                              "y = Slice<starts = [1, 2], ends = [3, -1], axes = [0, 1]>(x)"),
                        model(17, "(float[4, 6] x) => (float[2, 3] y)",
                              "s = Constant<value = int64[2] {1, 2}>()\n"
                              "e = Constant<value = int64[2] {3, -1}>()\n"
                              "a = Constant<value = int64[2] {0, 1}>()\n"
                              "y = Slice(x, s, e, a)"),
                        {4, 6});
}

TEST(CanonicalizeOpsTest, SplitSizesBecomeAnInput) {
  expect_same_as_modern(model(11, "(float[2, 6] x) => (float[2, 2] a, float[2, 4] b)",
                              "a, b = Split<axis = 1, split = [2, 4]>(x)"),
                        model(17, "(float[2, 6] x) => (float[2, 2] a, float[2, 4] b)",
                              "s = Constant<value = int64[2] {2, 4}>()\n"
                              "a, b = Split<axis = 1>(x, s)"),
                        {2, 6});
}

TEST(CanonicalizeOpsTest, SqueezeAndUnsqueezeAxesBecomeInputs) {
  expect_same_as_modern(model(11, "(float[1, 3, 1] x) => (float[3, 1, 1] y)",
                              "s = Squeeze<axes = [0]>(x)\ny = Unsqueeze<axes = [2]>(s)"),
                        model(17, "(float[1, 3, 1] x) => (float[3, 1, 1] y)",
                              "a = Constant<value = int64[1] {0}>()\n"
                              "b = Constant<value = int64[1] {2}>()\n"
                              "s = Squeeze(x, a)\ny = Unsqueeze(s, b)"),
                        {1, 3, 1});
}

TEST(CanonicalizeOpsTest, TopKCountBecomesAnInput) {
  expect_same_as_modern(
      model(9, "(float[2, 5] x) => (float[2, 2] v, int64[2, 2] i)", "v, i = TopK<k = 2>(x)"),
      model(17, "(float[2, 5] x) => (float[2, 2] v, int64[2, 2] i)",
            "k = Constant<value = int64[1] {2}>()\nv, i = TopK(x, k)"),
      {2, 5});
}

TEST(CanonicalizeOpsTest, PadAmountsAndValueBecomeInputs) {
  expect_same_as_modern(model(10, "(float[2, 3] x) => (float[3, 6] y)",
                              "y = Pad<pads = [0, 1, 1, 2], value = 1.5>(x)"),
                        model(17, "(float[2, 3] x) => (float[3, 6] y)",
                              "p = Constant<value = int64[4] {0, 1, 1, 2}>()\n"
                              "v = Constant<value = float {1.5}>()\n"
                              "y = Pad(x, p, v)"),
                        {2, 3});
}

TEST(CanonicalizeOpsTest, ClipBoundsBecomeInputsOfTheDataType) {
  std::string sig = "(float[3, 4] x) => (float[3, 4] y)";
  expect_same_as_modern(model(10, sig, "y = Clip<min = -0.5, max = 0.75>(x)"),
                        model(17, sig,
                              "lo = Constant<value = float {-0.5}>()\n"
                              "hi = Constant<value = float {0.75}>()\n"
                              "y = Clip(x, lo, hi)"),
                        {3, 4});
  // Only a max: the min input stays omitted.
  expect_same_as_modern(model(10, sig, "y = Clip<max = 0.5>(x)"),
                        model(17, sig, "hi = Constant<value = float {0.5}>()\ny = Clip(x, , hi)"),
                        {3, 4});
  Graph g = import_text(model(6, "(double[2] x) => (double[2] y)", "y = Clip<min = 0.0>(x)"));
  const graph::Node* clip = find_node(g, "Clip");
  ASSERT_NE(clip, nullptr);
  EXPECT_EQ(g.value(clip->inputs.at(1)).type.dtype, DataType::f64());
}

TEST(CanonicalizeOpsTest, OldDropoutLosesItsTrainingAttributes) {
  Graph g =
      import_text(model(10, "(float[2, 3] x) => (float[2, 3] y)", "y = Dropout<ratio = 0.3>(x)"));
  const graph::Node* dropout = find_node(g, "Dropout");
  ASSERT_NE(dropout, nullptr);
  EXPECT_TRUE(dropout->attrs.empty());
  std::map<std::string, TensorData> in{{"x", ramp({2, 3})}};
  EXPECT_EQ(values(reference::run(g, in)[0]), values(in["x"]));
}

// Softmax before opset 13 normalizes over every dim from `axis` on.
TEST(CanonicalizeOpsTest, OldSoftmaxNormalizesTheTrailingDimsTogether) {
  Graph g = import_text(
      model(11, "(float[2, 3, 4] x) => (float[2, 3, 4] y)", "y = Softmax<axis = 1>(x)"));
  TensorData x = ramp({2, 3, 4});
  std::vector<double> want(24);
  for (int b = 0; b < 2; ++b) {
    double sum = 0;
    for (int k = 0; k < 12; ++k) sum += std::exp(static_cast<double>(x.data<float>()[b * 12 + k]));
    for (int k = 0; k < 12; ++k)
      want[b * 12 + k] = std::exp(static_cast<double>(x.data<float>()[b * 12 + k])) / sum;
  }
  std::vector<double> got = values(reference::run(g, {{"x", x}})[0]);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-6) << i;
  EXPECT_NE(find_node(g, "Flatten"), nullptr);
  EXPECT_NE(find_node(g, "Reshape"), nullptr);
}

// The old default axis is 1: on a [2, 2, 2] input, Hardmax marks the first maximum of each block
// of 4 and Softmax normalizes over it (the opset-13 ops would work on pairs).
TEST(CanonicalizeOpsTest, OldDefaultAxisCoversEveryDimFromOneOn) {
  std::string sig = "(float[2, 2, 2] x) => (float[2, 2, 2] y)";
  TensorData x(DataType::f32(), {2, 2, 2});
  const std::vector<float> xs{1, 3, 3, -1, 0, 2, 5, 5};
  std::copy(xs.begin(), xs.end(), x.data<float>());
  Graph hardmax = import_text(model(12, sig, "y = Hardmax(x)"));
  EXPECT_EQ(values(reference::run(hardmax, {{"x", x}})[0]),
            (std::vector<double>{0, 1, 0, 0, 0, 0, 1, 0}));
  Graph softmax = import_text(model(11, sig, "y = Softmax(x)"));
  std::vector<double> got = values(reference::run(softmax, {{"x", x}})[0]);
  ASSERT_EQ(got.size(), xs.size());
  for (size_t block = 0; block < 2; ++block) {
    double sum = 0;
    for (size_t k = 0; k < 4; ++k) sum += std::exp(static_cast<double>(xs[block * 4 + k]));
    for (size_t k = 0; k < 4; ++k) {
      size_t i = block * 4 + k;
      EXPECT_NEAR(got[i], std::exp(static_cast<double>(xs[i])) / sum, 1e-6) << i;
    }
  }
}

TEST(CanonicalizeOpsTest, OldSoftmaxOverTheLastAxisKeepsOneNode) {
  std::string sig = "(float[2, 3, 4] x) => (float[2, 3, 4] y)";
  std::string old_text = model(11, sig, "y = LogSoftmax<axis = 2>(x)");
  expect_same_as_modern(old_text, model(17, sig, "y = LogSoftmax<axis = -1>(x)"), {2, 3, 4});
  Graph g = import_text(old_text);
  EXPECT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].attr_int("axis", 0), -1);
  // The old default axis, 1, is the last of a rank-2 input.
  expect_same_as_modern(model(11, "(float[3, 5] x) => (float[3, 5] y)", "y = Softmax(x)"),
                        model(17, "(float[3, 5] x) => (float[3, 5] y)", "y = Softmax(x)"), {3, 5});
}

TEST(CanonicalizeOpsTest, UpsampleBecomesResizeWithTheLegacyCoordinates) {
  std::string sig = "(float[1, 1, 2, 3] x) => (float[1, 1, 4, 6] y)";
  std::string modern = model(17, sig,
                             "s = Constant<value = float[4] {1.0, 1.0, 2.0, 2.0}>()\n"
                             "y = Resize<mode = \"linear\", coordinate_transformation_mode = "
                             "\"asymmetric\", nearest_mode = \"floor\">(x, , s)");
  std::string upsample7 =
      model(7, sig, "y = Upsample<mode = \"linear\", scales = [1.0, 1.0, 2.0, 2.0]>(x)");
  expect_same_as_modern(upsample7, modern, {1, 1, 2, 3});
  expect_same_as_modern(model(9, sig,
                              "s = Constant<value = float[4] {1.0, 1.0, 2.0, 2.0}>()\n"
                              "y = Upsample<mode = \"linear\">(x, s)"),
                        modern, {1, 1, 2, 3});
  expect_same_as_modern(model(10, sig,
                              "s = Constant<value = float[4] {1.0, 1.0, 2.0, 2.0}>()\n"
                              "y = Resize<mode = \"linear\">(x, s)"),
                        modern, {1, 1, 2, 3});
  // Upsample's 2-D name of the linear mode.
  expect_same_as_modern(
      model(7, sig, "y = Upsample<mode = \"bilinear\", scales = [1.0, 1.0, 2.0, 2.0]>(x)"), modern,
      {1, 1, 2, 3});
  Graph g = import_text(upsample7);
  EXPECT_EQ(find_node(g, "Upsample"), nullptr);
  const graph::Node* resize = find_node(g, "Resize");
  ASSERT_NE(resize, nullptr);
  EXPECT_FALSE(resize->has_attr("scales"));
}

// An opset-10 graph of one node `name` from an input of `input_dtype` to an output of unknown type.
Graph one_node_graph(graph::OpKind op, const std::string& name, DataType input_dtype,
                     std::map<std::string, graph::Attr> attrs) {
  Graph g;
  g.opset = 10;
  graph::ValueId x = g.add_value("x", {input_dtype, {}, {}});
  graph::ValueId y = g.add_value("y", {DataType::void_type(), {}, {}});
  g.inputs = {x};
  g.outputs = {y};
  g.add_node(graph::Node{op, name, {x}, {y}, std::move(attrs)});
  return g;
}

// Clip-6's bounds become constants of the data's type, which must be known.
TEST(CanonicalizeOpsTest, AnOldClipOfUnknownTypeNamesTheNode) {
  auto old_clip = [] {
    return one_node_graph(graph::OpKind::Clip, "clip1", DataType::void_type(), {{"min", 0.0}});
  };
  Graph g = old_clip();
  testing::expect_error([&] { canonicalize_ops(g); },
                        {"node 'clip1' (Clip)", "attribute 'min'", "opset 10", "not a float type"});
  // In a branch, the If that holds it is named too.
  Graph outer = one_node_graph(graph::OpKind::If, "cond", DataType::boolean(),
                               {{"then_branch", std::make_shared<Graph>(old_clip())}});
  testing::expect_error([&] { canonicalize_ops(outer); },
                        {"in attribute 'then_branch' of node 'cond' (If): node 'clip1' (Clip)"});
}

TEST(CanonicalizeOpsTest, NewModelsAreLeftAsTheyAre) {
  Graph g = import_text(model(17, "(float[2, 3] x) => (float[2, 3] y)",
                              "y = Clip(x)"));  // no bounds: nothing to add
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].inputs.size(), 1u);
}

}  // namespace
}  // namespace tessel::frontend
