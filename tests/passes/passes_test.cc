// infer_type (with shape folding), fold_constant, simplify_inference, CSE, dead code and the
// pipeline; numeric checks run the graph before and after through the reference executor.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "graph_builder.h"
#include "ir/error.h"
#include "passes/eliminate_common_subexpr.h"
#include "passes/fold_constant.h"
#include "passes/graph_util.h"
#include "passes/infer_type.h"
#include "passes/pipeline.h"
#include "passes/simplify_inference.h"
#include "reference/reference.h"
#include "tests/common/compare.h"
#include "tests/common/expect_error.h"
#include "tests/common/tensor.h"

namespace tessel::passes {
namespace {
using tessel::testing::expect_all_close;
using tessel::testing::expect_error;
using tessel::testing::make_tensor;
using testing::Builder;
using testing::random_tensor;

graph::TensorData i64s(std::vector<int64_t> v) {
  return make_tensor(DataType::i64(), {static_cast<int64_t>(v.size())}, v);
}

void expect_same_outputs(const graph::Graph& before, const graph::Graph& after,
                         const graph::TensorData& x, double tol = 1e-5) {
  expect_all_close(reference::run(after, {{"x", x}}), reference::run(before, {{"x", x}}),
                   {tol, tol});
}

TEST(InferTypeTest, ShapeArithmeticFoldsSoReshapeIsTyped) {
  Builder b;
  auto x = b.input("x", {2, 3, 4});
  auto shape = b.op("Shape", {x}, {}, "shape");
  auto idx = b.constant("idx", i64s({0}));
  auto first = b.op("Gather", {shape, idx}, {{"axis", int64_t{0}}}, "gather");
  auto minus1 = b.constant("minus1", i64s({-1}));
  auto target = b.op("Concat", {first, minus1}, {{"axis", int64_t{0}}}, "concat");
  auto y = b.op("Reshape", {x, target}, {}, "reshape");
  graph::Graph g = b.finish({y});
  infer_type(g);
  ASSERT_EQ(g.nodes.size(), 1u) << g.str();  // only the Reshape is left
  EXPECT_EQ(g.nodes[0].op, graph::OpKind::Reshape);
  EXPECT_EQ(g.value(g.outputs[0]).type.shape, (std::vector<int64_t>{2, 12}));
}

TEST(FoldConstantTest, ConstantSubgraphsBecomeOneConstant) {
  Builder b;
  auto x = b.input("x", {4});
  auto c1 = b.constant("c1", random_tensor({4}, 1));
  auto c2 = b.constant("c2", random_tensor({4}, 2));
  auto sum = b.op("Add", {c1, c2}, {}, "const_add");
  auto e = b.op("Exp", {sum}, {}, "const_exp");
  auto y = b.op("Mul", {x, e}, {}, "mul");
  graph::Graph g = b.finish({y});
  infer_type(g);
  graph::Graph before = g;
  fold_constant(g);
  ASSERT_EQ(g.nodes.size(), 1u) << g.str();
  expect_same_outputs(before, g, random_tensor({4}, 3));
}

// The reference evaluators trust their operands: folding a malformed all-constant Conv read past a
// rank-1 weight's shape (found by the ONNX fuzzer). Its type relation now rejects it first.
TEST(FoldConstantTest, AMalformedConstantNodeIsAUserError) {
  Builder b;
  auto x = b.constant("x", random_tensor({2, 1, 3, 3}, 1));
  auto w = b.constant("w", random_tensor({2}, 2));
  graph::Graph g = b.finish({b.op("Conv", {x, w}, {}, "conv")});
  expect_error([&] { infer_type(g); }, {"node 'conv' (Conv)", "must have the rank of X"});
}

// Kernels index tensors with 32-bit integers: a tensor of more elements, declared or inferred,
// would have its flat indices wrap around; each dim alone fits.
TEST(InferTypeTest, TensorsOfMoreThanInt32MaxElementsAreRefused) {
  {
    Builder b;
    auto x = b.input("x", {65536, 65536});
    graph::Graph g = b.finish({b.op("Relu", {x}, {}, "relu")});
    expect_error([&] { infer_type(g); }, {"graph input 'x'", "float32[65536, 65536]", "32-bit"});
  }
  {
    Builder b;
    auto x = b.input("x", {65536, 1});
    auto y = b.input("y", {1, 65536});
    graph::Graph g = b.finish({b.op("Add", {x, y}, {}, "add")});
    expect_error([&] { infer_type(g); },
                 {"node 'add' (Add): output 'add_out0'", "float32[65536, 65536]", "2147483647"});
  }
}

TEST(SimplifyInferenceTest, BatchNormFoldsIntoConvWeights) {
  Builder b;
  auto x = b.input("x", {1, 3, 6, 6});
  auto w = b.constant("w", random_tensor({4, 3, 3, 3}, 1));
  auto c = b.op("Conv", {x, w}, {{"kernel_shape", std::vector<int64_t>{3, 3}}}, "conv");
  auto var = random_tensor({4}, 5);
  for (int i = 0; i < 4; ++i) var.data<float>()[i] = std::fabs(var.data<float>()[i]) + 0.1f;
  auto bn = b.op(
      "BatchNormalization",
      {c, b.constant("gamma", random_tensor({4}, 2)), b.constant("beta", random_tensor({4}, 3)),
       b.constant("mean", random_tensor({4}, 4)), b.constant("var", var)},
      {{"epsilon", 1e-5}}, "bn");
  auto r = b.op("Relu", {bn}, {}, "relu");
  graph::Graph g = b.finish({r});
  infer_type(g);
  graph::Graph before = g;
  simplify_inference(g);
  ASSERT_EQ(g.nodes.size(), 2u) << g.str();
  EXPECT_EQ(g.nodes[0].op, graph::OpKind::Conv);
  EXPECT_EQ(g.nodes[0].inputs.size(), 3u);  // a bias appeared
  expect_same_outputs(before, g, random_tensor({1, 3, 6, 6}, 9), 1e-4f);
}

// A BatchNorm over `conv` with random statistics (positive variances).
graph::ValueId batch_norm(Builder& b, graph::ValueId conv, int channels, int seed) {
  auto var = random_tensor({channels}, seed);
  for (int i = 0; i < channels; ++i) var.data<float>()[i] = std::fabs(var.data<float>()[i]) + 0.1f;
  return b.op("BatchNormalization",
              {conv, b.constant("gamma", random_tensor({channels}, seed + 1)),
               b.constant("beta", random_tensor({channels}, seed + 2)),
               b.constant("mean", random_tensor({channels}, seed + 3)), b.constant("var", var)});
}

// A weight that only its conv reads (and no other tensor shares) is scaled in place; one that two
// convs read is not, so each conv gets its own folded copy.
TEST(SimplifyInferenceTest, BatchNormFoldsInPlaceOnlyIntoAnUnsharedWeight) {
  Builder b;
  auto x = b.input("x", {1, 3, 6, 6});
  std::map<std::string, graph::Attr> k3{{"kernel_shape", std::vector<int64_t>{3, 3}}};
  auto own = b.constant("own", random_tensor({4, 3, 3, 3}, 1));
  auto shared = b.constant("shared", random_tensor({4, 3, 3, 3}, 2));
  auto y1 = batch_norm(b, b.op("Conv", {x, own}, k3, "conv1"), 4, 10);
  auto y2 = batch_norm(b, b.op("Conv", {x, shared}, k3, "conv2"), 4, 20);
  auto y3 = batch_norm(b, b.op("Conv", {x, shared}, k3, "conv3"), 4, 30);
  graph::Graph g = b.finish({b.op("Add", {b.op("Add", {y1, y2}), y3})});
  b.g = graph::Graph();  // the builder's copy shares the weights' bytes
  infer_type(g);
  graph::TensorData x_value = random_tensor({1, 3, 6, 6}, 9);
  // No copy of the graph: a copy would share the weights' bytes and keep them from changing.
  std::vector<graph::TensorData> want = reference::run(g, {{"x", x_value}});
  graph::TensorData shared_before = g.value(shared).constant->clone();
  graph::TensorData shared_alias = *g.value(shared).constant;  // sees any in-place change
  const void* own_bytes = g.value(own).constant->raw();        // not a TensorData: own stays unique
  simplify_inference(g);
  std::vector<const graph::Value*> weights;
  for (const graph::Node& n : g.nodes) {
    if (n.op == graph::OpKind::Conv) weights.push_back(&g.value(n.inputs[1]));
  }
  ASSERT_EQ(weights.size(), 3u) << g.str();
  EXPECT_EQ(weights[0]->name, "own");  // folded in place
  EXPECT_EQ(weights[0]->constant->raw(), own_bytes);
  EXPECT_EQ(weights[1]->name, "shared_bnfold");
  EXPECT_EQ(weights[2]->name, "shared_bnfold");
  EXPECT_NE(weights[1]->constant->raw(), weights[2]->constant->raw());
  expect_all_close(shared_alias, shared_before, {0, 0}, "the shared weight");
  expect_all_close(reference::run(g, {{"x", x_value}}), want, {1e-4, 1e-4});
}

TEST(SimplifyInferenceTest, StandaloneBatchNormBecomesScaleShiftAndDropoutGoes) {
  Builder b;
  auto x = b.input("x", {2, 3, 2, 2});
  auto d = b.op("Dropout", {x}, {}, "dropout");
  auto var = random_tensor({3}, 5);
  for (int i = 0; i < 3; ++i) var.data<float>()[i] = std::fabs(var.data<float>()[i]) + 0.1f;
  auto bn = b.op(
      "BatchNormalization",
      {d, b.constant("gamma", random_tensor({3}, 2)), b.constant("beta", random_tensor({3}, 3)),
       b.constant("mean", random_tensor({3}, 4)), b.constant("var", var)},
      {}, "bn");
  auto y = b.op("Identity", {bn}, {}, "identity");
  auto z = b.op("Relu", {y}, {}, "relu");
  graph::Graph g = b.finish({z});
  infer_type(g);
  graph::Graph before = g;
  simplify_inference(g);
  std::vector<std::string> ops;
  for (const auto& n : g.nodes) ops.emplace_back(graph::op_kind_name(n.op));
  EXPECT_EQ(ops, (std::vector<std::string>{"Mul", "Add", "Relu"})) << g.str();
  expect_same_outputs(before, g, random_tensor({2, 3, 2, 2}, 9));
}

TEST(SimplifyInferenceTest, TrainingModeDropoutStays) {
  Builder b;
  auto x = b.input("x", {4});
  graph::TensorData on(DataType::boolean(), {});
  on.data<uint8_t>()[0] = 1;
  auto d =
      b.op("Dropout", {x, b.constant("ratio", random_tensor({}, 1)), b.constant("training", on)},
           {}, "dropout");
  graph::Graph g = b.finish({d});
  infer_type(g);
  simplify_inference(g);
  ASSERT_EQ(g.nodes.size(), 1u) << g.str();
  EXPECT_EQ(g.nodes[0].op, graph::OpKind::Dropout);
}

TEST(SimplifyInferenceTest, InferenceModeDropoutWithAConstantFalseModeGoes) {
  Builder b;
  auto x = b.input("x", {4});
  graph::TensorData off(DataType::boolean(), {});
  auto d =
      b.op("Dropout", {x, b.constant("ratio", random_tensor({}, 1)), b.constant("training", off)},
           {}, "dropout");
  graph::Graph g = b.finish({b.op("Relu", {d}, {}, "relu")});
  infer_type(g);
  simplify_inference(g);
  ASSERT_EQ(g.nodes.size(), 1u) << g.str();
  EXPECT_EQ(g.nodes[0].op, graph::OpKind::Relu);
}

TEST(EliminateCommonSubexprTest, IdenticalNodesMerge) {
  Builder b;
  auto x = b.input("x", {8});
  auto a = b.op("Relu", {x}, {}, "relu_a");
  auto c = b.op("Relu", {x}, {}, "relu_b");
  auto s = b.op("Add", {a, c}, {}, "add");
  graph::Graph g = b.finish({s});
  infer_type(g);
  eliminate_common_subexpr(g);
  ASSERT_EQ(g.nodes.size(), 2u) << g.str();
  EXPECT_EQ(g.nodes[1].inputs[0], g.nodes[1].inputs[1]);
}

TEST(RemoveDeadCodeTest, UnusedNodesAndConstantsGo) {
  Builder b;
  auto x = b.input("x", {8});
  b.op("Exp", {b.constant("unused", random_tensor({8}, 1))}, {}, "dead");
  auto y = b.op("Relu", {x}, {}, "relu");
  graph::Graph g = b.finish({y});
  remove_dead_code(g);
  g.validate();
  EXPECT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.values.size(), 2u);
}

TEST(GraphPipelineTest, PassesRunInOrderWithTimings) {
  Builder b;
  auto x = b.input("x", {8});
  auto y = b.op("Relu", {b.op("Exp", {x}, {}, "exp")}, {}, "relu");
  graph::Graph g = b.finish({y});
  std::vector<std::string> seen;
  GraphPipelineOptions opt;
  opt.after_pass = [&](const std::string& p, const graph::Graph&) { seen.push_back(p); };
  opt.dump = "";
  auto result = run_graph_pipeline(g, opt);
  EXPECT_EQ(seen, graph_pass_names());
  EXPECT_EQ(result.timings.size(), seen.size());
  EXPECT_EQ(result.groups.size(), 1u);

  graph::Graph g0 = b.finish({y});
  GraphPipelineOptions o0;
  o0.opt_level = 0;
  o0.dump = "";
  EXPECT_EQ(run_graph_pipeline(g0, o0).groups.size(), 2u);  // no fusion at -O0

  GraphPipelineOptions bad;
  bad.dump = "infer_types";
  graph::Graph g1 = b.finish({y});
  EXPECT_THROW(run_graph_pipeline(g1, bad), Error);
}

TEST(GraphPipelineTest, DisabledPassesAreSkippedAndRequiredOnesRefused) {
  Builder b;
  auto x = b.input("x", {8});
  auto y = b.op("Relu", {b.op("Exp", {x}, {}, "exp")}, {}, "relu");
  std::vector<std::string> seen;
  GraphPipelineOptions opt;
  opt.dump = "";
  opt.after_pass = [&](const std::string& p, const graph::Graph&) { seen.push_back(p); };
  opt.disabled_passes = {"fold_constant", "fuse_ops"};
  graph::Graph g = b.finish({y});
  EXPECT_EQ(run_graph_pipeline(g, opt).groups.size(), 2u);  // fuse_ops disabled: a group per node
  EXPECT_EQ(std::count(seen.begin(), seen.end(), "fold_constant"), 0);

  auto expect_refused = [&](const std::string& pass, const std::string& why) {
    GraphPipelineOptions o;
    o.dump = "";
    o.disabled_passes = {pass};
    graph::Graph g1 = b.finish({y});
    expect_error([&] { run_graph_pipeline(g1, o); },
                 {"'" + pass + "' " + why, "pack_conv_weights"});
  };
  expect_refused("infer_type", "is required");
  expect_refused("fold_constants", "is not a graph pass");
}

}  // namespace
}  // namespace tessel::passes
