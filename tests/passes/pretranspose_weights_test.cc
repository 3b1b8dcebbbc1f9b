// pretranspose_weights: Gemm(transB=1) with a constant B reads B^T without transB, and computes
// the same values; a B that is not a constant is left alone.
#include "passes/pretranspose_weights.h"

#include <gtest/gtest.h>

#include "driver/compile.h"
#include "graph_builder.h"
#include "passes/infer_type.h"
#include "reference/reference.h"
#include "tests/common/compare.h"

namespace tessel::passes {
namespace {

using testing::Builder;
using testing::random_tensor;

graph::Graph dense(bool constant_b) {
  Builder b;
  graph::ValueId x = b.input("x", {3, 5});
  graph::ValueId w = constant_b ? b.constant("w", random_tensor({4, 5}, 1)) : b.input("w", {4, 5});
  graph::ValueId c = b.constant("c", random_tensor({4}, 2));
  return b.finish({b.op("Gemm", {x, w, c}, {{"transB", int64_t{1}}, {"alpha", 0.5}}, "fc")});
}

TEST(PretransposeWeights, ConstantWeightsAreTransposedOnce) {
  graph::Graph g = dense(true);
  infer_type(g);
  graph::Graph before = g;
  pretranspose_weights(g);
  const graph::Node& fc = g.nodes[0];
  EXPECT_FALSE(fc.has_attr("transB"));
  const graph::Value& w = g.value(fc.inputs[1]);
  ASSERT_TRUE(w.constant);
  EXPECT_EQ(w.constant->shape(), (std::vector<int64_t>{5, 4}));
  const graph::TensorData& original = *before.value(before.nodes[0].inputs[1]).constant;
  for (int64_t r = 0; r < 4; ++r) {
    for (int64_t c = 0; c < 5; ++c)
      EXPECT_EQ(w.constant->get_double(c * 4 + r), original.get_double(r * 5 + c));
  }
  graph::TensorData x = random_tensor({3, 5}, 3);
  graph::TensorData want = reference::run(before, {{"x", x}})[0],
                    got = reference::run(g, {{"x", x}})[0];
  for (int64_t i = 0; i < want.numel(); ++i) EXPECT_FLOAT_EQ(got.get_double(i), want.get_double(i));

  // And through the compiler (which runs the pass), against the reference on the original graph.
  CompiledModel m = compile_graph(before);
  m.set_input("x", to_ndarray(x));
  m.run();
  tessel::testing::expect_all_close(to_tensor_data(m.get_output(0)), want, {1e-5, 0});
}

TEST(PretransposeWeights, GemmsSharingWeightsShareTheTransposedCopy) {
  Builder b;
  graph::ValueId w = b.constant("w", random_tensor({4, 5}, 1));
  graph::ValueId y1 = b.op("Gemm", {b.input("x1", {3, 5}), w}, {{"transB", int64_t{1}}});
  graph::ValueId y2 = b.op("Gemm", {b.input("x2", {2, 5}), w}, {{"transB", int64_t{1}}});
  graph::Graph g = b.finish({y1, y2});
  infer_type(g);
  size_t values = g.values.size();
  pretranspose_weights(g);
  EXPECT_EQ(g.nodes[0].inputs[1], g.nodes[1].inputs[1]);
  EXPECT_EQ(g.values.size(), values + 1);
}

TEST(PretransposeWeights, AGraphInputWeightIsLeftAlone) {
  graph::Graph g = dense(false);
  infer_type(g);
  pretranspose_weights(g);
  EXPECT_EQ(g.nodes[0].attr_int("transB", 0), 1);
  EXPECT_EQ(g.value(g.nodes[0].inputs[1]).name, "w");
}

}  // namespace
}  // namespace tessel::passes
