// fuse_layer_norm: the layer normalization written op by op becomes one LayerNormalization node
// (Pow or a product for the square, epsilon on either side, with and without the affine
// constants, over one or two trailing axes, axes as an attribute or as input 1) that computes the
// same values, on the reference and compiled; chains that are not one (a leading axis, another
// exponent, an intermediate read elsewhere, dropped dims, different axes) are left alone.
#include "passes/fuse_layer_norm.h"

#include <gtest/gtest.h>

#include <map>

#include "driver/compile.h"
#include "graph_builder.h"
#include "passes/infer_type.h"
#include "passes/pipeline.h"
#include "reference/reference.h"
#include "tests/common/compare.h"

namespace tessel::passes {
namespace {

using graph::OpKind;
using graph::TensorData;
using graph::ValueId;
using tessel::testing::expect_all_close;
using testing::Builder;
using testing::random_tensor;

TensorData scalar(double v) {
  TensorData t(DataType::f32(), {});
  t.set_double(0, v);
  return t;
}

struct ChainSpec {
  std::vector<int64_t> x = {2, 8, 64};
  std::vector<int64_t> axes = {-1};    // both ReduceMeans'
  std::vector<int64_t> var_axes = {};  // the variance's, when they differ
  bool axes_as_input = false;          // opset 18's ReduceMean
  bool square_by_mul = false;          // d * d instead of Pow(d, 2)
  double exponent = 2;
  bool eps_first = false;             // Add(eps, var)
  std::vector<int64_t> gamma = {64};  // none when empty
  std::vector<int64_t> beta = {64};   // none when empty (or without gamma)
  int64_t keepdims = 1;
  bool d_is_output = false;             // x - mean is also a graph output
  bool mean_minus_x = false;            // Sub(mean, x)
  std::vector<int64_t> eps_shape = {};  // epsilon's shape (one element)
};

graph::Graph chain(const ChainSpec& s) {
  Builder b;
  ValueId x = b.input("x", s.x);
  auto mean_of = [&](ValueId v, const std::vector<int64_t>& axes) {
    if (!s.axes_as_input)
      return b.op("ReduceMean", {v}, {{"axes", axes}, {"keepdims", s.keepdims}});
    TensorData a(DataType::i64(), {static_cast<int64_t>(axes.size())});
    for (size_t i = 0; i < axes.size(); ++i) a.data<int64_t>()[i] = axes[i];
    return b.op("ReduceMean", {v, b.constant("axes", a)}, {{"keepdims", s.keepdims}});
  };
  ValueId mean = mean_of(x, s.axes);
  ValueId d = b.op("Sub", s.mean_minus_x ? std::vector{mean, x} : std::vector{x, mean});
  ValueId sq = s.square_by_mul ? b.op("Mul", {d, d})
                               : b.op("Pow", {d, b.constant("two", scalar(s.exponent))});
  ValueId var = mean_of(sq, s.var_axes.empty() ? s.axes : s.var_axes);
  ValueId eps = b.constant("eps", scalar(1e-5).reshaped(s.eps_shape));
  ValueId y = b.op("Div", {d, b.op("Sqrt", {b.op("Add", s.eps_first ? std::vector{eps, var}
                                                                    : std::vector{var, eps})})});
  if (!s.gamma.empty()) y = b.op("Mul", {y, b.constant("gamma", random_tensor(s.gamma, 2))});
  if (!s.gamma.empty() && !s.beta.empty())
    y = b.op("Add", {b.constant("beta", random_tensor(s.beta, 3)), y});
  std::vector<ValueId> outputs{b.op("Relu", {y})};
  if (s.d_is_output) outputs.push_back(d);
  return b.finish(outputs);
}

graph::Graph fused(const ChainSpec& s) {
  graph::Graph g = chain(s);
  infer_type(g);
  fuse_layer_norm(g);
  infer_type(g);
  return g;
}

size_t count(const graph::Graph& g, OpKind op) {
  return std::count_if(g.nodes.begin(), g.nodes.end(),
                       [&](const graph::Node& n) { return n.op == op; });
}

// One LayerNormalization then the Relu; the same values on the reference and compiled.
void expect_fused(const ChainSpec& s, int64_t axis) {
  graph::Graph before = chain(s);
  infer_type(before);
  graph::Graph g = fused(s);
  ASSERT_EQ(g.nodes.size(), 2u) << g.str();
  const graph::Node& ln = g.nodes[0];
  ASSERT_EQ(ln.op, OpKind::LayerNormalization) << g.str();
  EXPECT_EQ(ln.attr_int("axis", -1), axis);
  EXPECT_NEAR(ln.attr_float("epsilon", 0), 1e-5, 1e-10);
  EXPECT_EQ(ln.inputs.size(), s.gamma.empty() || s.beta.empty() ? 2u : 3u);
  std::map<std::string, TensorData> feeds{{"x", random_tensor(s.x, 4)}};
  std::vector<TensorData> want = reference::run(before, feeds);
  expect_all_close(reference::run(g, feeds), want, {1e-5, 1e-5});
  CompiledModel model = compile_graph(before);
  EXPECT_NE(model.fusion_summary().find("LayerNormalization"), std::string::npos)
      << model.fusion_summary();
  model.set_input("x", to_ndarray(feeds["x"]));
  model.run();
  expect_all_close({to_tensor_data(model.get_output(0))}, want, {1e-4, 1e-4});
}

TEST(FuseLayerNorm, ChainsBecomeOneNode) {
  expect_fused({}, 2);
  ChainSpec mul_square{.square_by_mul = true, .eps_first = true, .gamma = {}, .beta = {}};
  expect_fused(mul_square, 2);
  // Two trailing axes, a gamma with leading 1s, no beta.
  ChainSpec two_axes{.x = {3, 4, 16}, .axes = {1, 2}, .gamma = {1, 4, 16}, .beta = {}};
  expect_fused(two_axes, 1);
  ChainSpec as_input{
      .x = {5, 37}, .axes = {-1}, .axes_as_input = true, .gamma = {37}, .beta = {1, 37}};
  expect_fused(as_input, 1);
}

TEST(FuseLayerNorm, OtherChainsAreLeftAlone) {
  std::vector<std::pair<const char*, ChainSpec>> cases = {
      {"a leading axis", {.axes = {0}, .gamma = {}, .beta = {}}},
      {"a cube", {.exponent = 3}},
      {"d read elsewhere", {.d_is_output = true}},
      {"dims dropped", {.x = {64, 64}, .gamma = {}, .beta = {}, .keepdims = 0}},
      {"different axes", {.axes = {-1}, .var_axes = {1, 2}, .gamma = {}, .beta = {}}},
      {"mean - x", {.mean_minus_x = true}},
      // One element, but of rank 4: the Div's output gains a dim.
      {"an epsilon that widens", {.eps_shape = {1, 1, 1, 1}}},
  };
  for (const auto& [what, spec] : cases) {
    SCOPED_TRACE(what);
    graph::Graph g = fused(spec);
    EXPECT_EQ(count(g, OpKind::LayerNormalization), 0u) << g.str();
    EXPECT_EQ(count(g, OpKind::ReduceMean), 2u);
  }
}

// A gamma that would broadcast the output past x's shape, or that varies along a dim that is
// not normalized, stays a Mul after the fused node.
TEST(FuseLayerNorm, AGammaOverOtherDimsStaysAMul) {
  for (ChainSpec spec : {ChainSpec{.x = {8, 64}, .gamma = {3, 1, 64}, .beta = {}},
                         ChainSpec{.x = {2, 8, 64}, .gamma = {8, 1}, .beta = {}}}) {
    graph::Graph g = fused(spec);
    ASSERT_EQ(count(g, OpKind::LayerNormalization), 1u) << g.str();
    EXPECT_EQ(count(g, OpKind::Mul), 1u) << g.str();
  }
}

TEST(FuseLayerNorm, TheCompilerRunsItUnlessDisabled) {
  for (bool disabled : {false, true}) {
    graph::Graph g = chain({});
    GraphPipelineOptions opt;
    if (disabled) opt.disabled_passes = {"fuse_layer_norm"};
    run_graph_pipeline(g, opt);
    EXPECT_EQ(count(g, OpKind::LayerNormalization), disabled ? 0u : 1u) << g.str();
  }
}

}  // namespace
}  // namespace tessel::passes
