#include <gtest/gtest.h>

#include "ir/error.h"
#include "tests/reference/nn_test_util.h"

namespace tessel::reference::nn_testing {
namespace {

using Ints = std::vector<int64_t>;

std::vector<double> einsum(const std::string& eq, const std::vector<TensorData>& in,
                           Ints want_shape) {
  auto out = eval_op("Einsum", in, {{"equation", eq}});
  EXPECT_EQ(out[0].shape(), want_shape) << eq;
  return values_of(out[0]);
}

TEST(RefEinsumTest, MatmulTransposeTraceAndReductions) {
  TensorData a = ramp({2, 3}), b = ramp({3, 2}, 1, 1);
  expect_near(einsum("ij,jk->ik", {a, b}, {2, 2}), {13, 16, 40, 52});
  expect_near(einsum("ij,jk", {a, b}, {2, 2}), {13, 16, 40, 52});
  expect_near(einsum("ij->ji", {a}, {3, 2}), {0, 3, 1, 4, 2, 5});
  expect_near(einsum("ii", {ramp({3, 3})}, {}), {12});
  expect_near(einsum("ii->i", {ramp({3, 3})}, {3}), {0, 4, 8});
  expect_near(einsum("ij->i", {a}, {2}), {3, 12});
  expect_near(einsum("i,i", {f32({3}, {1, 2, 3}), f32({3}, {4, 5, 6})}, {}), {32});
  expect_near(einsum("i,j->ij", {f32({2}, {1, 2}), f32({2}, {3, 4})}, {2, 2}), {3, 4, 6, 8});
}

TEST(RefEinsumTest, BatchMatmulAndEllipsis) {
  TensorData a = ramp({2, 2, 3}, 0.5), b = ramp({2, 3, 1}, -1, 2);
  std::vector<double> av = values_of(a), bv = values_of(b), want;
  for (int n = 0; n < 2; ++n)
    for (int i = 0; i < 2; ++i) {
      double acc = 0;
      for (int k = 0; k < 3; ++k) acc += av[(n * 2 + i) * 3 + k] * bv[n * 3 + k];
      want.push_back(acc);
    }
  expect_near(einsum("bij,bjk->bik", {a, b}, {2, 2, 1}), want);
  expect_near(einsum("...ij,...jk->...ik", {a, b}, {2, 2, 1}), want);
  expect_near(einsum("...ij->...ji", {a}, {2, 3, 2}), einsum("bij->bji", {a}, {2, 3, 2}));
}

// then: y = a @ b;  else: y = a^T (its only input is `a`, found by name among the outer values).
graph::Graph make_if_graph() {
  auto branch = [](bool then) {
    auto g = std::make_shared<Graph>();
    graph::ValueId a = g->add_value("a", {DataType::f32(), {2, 2}, {}});
    g->inputs.push_back(a);
    graph::ValueId y = g->add_value("y", {DataType::f32(), {2, 2}, {}});
    if (then) {
      graph::ValueId b = g->add_value("b", {DataType::f32(), {2, 2}, {}});
      g->inputs.push_back(b);
      g->add_node(Node{graph::OpKind::MatMul, "mm", {a, b}, {y}, {}});
    } else {
      g->add_node(
          Node{graph::OpKind::Einsum, "tr", {a}, {y}, {{"equation", std::string("ij->ji")}}});
    }
    g->outputs.push_back(y);
    return g;
  };
  Graph g;
  graph::ValueId cond = g.add_value("cond", {DataType::boolean(), {}, {}});
  graph::ValueId a = g.add_value("a", {DataType::f32(), {2, 2}, {}});
  graph::ValueId b = g.add_value("b", {DataType::f32(), {2, 2}, {}});
  graph::ValueId y = g.add_value("out", {DataType::f32(), {2, 2}, {}});
  g.inputs = {cond, a, b};
  g.add_node(Node{graph::OpKind::If,
                  "if0",
                  {cond, a, b},
                  {y},
                  {{"then_branch", branch(true)}, {"else_branch", branch(false)}}});
  g.outputs.push_back(y);
  return g;
}

TEST(RefIfTest, RunsTheChosenBranchOnOuterValues) {
  Graph g = make_if_graph();
  TensorData a = f32({2, 2}, {1, 2, 3, 4}), b = f32({2, 2}, {0, 1, 1, 0});
  for (bool c : {true, false}) {
    TensorData cond(DataType::boolean(), {});
    cond.data<uint8_t>()[0] = c;
    auto out = run(g, {{"cond", cond}, {"a", a}, {"b", b}});
    expect_near(values_of(out[0]),
                c ? std::vector<double>{2, 1, 4, 3} : std::vector<double>{1, 3, 2, 4});
  }
  EXPECT_EQ(graph::find_op("If")->infer_type(g, g.nodes[0])[0].str(), "float32[2, 2]");
}

}  // namespace
}  // namespace tessel::reference::nn_testing
