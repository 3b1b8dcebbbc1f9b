// tessel::compile_graph end to end, checked against the reference executor.
#include "driver/compile.h"

#include <gtest/gtest.h>

#include "../passes/graph_builder.h"
#include "reference/reference.h"
#include "tests/common/expect_error.h"

namespace tessel {
namespace {
using passes::testing::Builder;
using passes::testing::random_tensor;
using tessel::testing::expect_error;

graph::Graph elementwise_model() {
  Builder b;
  auto x = b.input("x", {2, 3, 16});
  auto y = b.input("y", {16});
  auto s = b.op("Add", {x, y}, {}, "add");
  auto r = b.op("Relu", {s}, {}, "relu");
  auto m = b.op("Mul", {r, b.constant("scale", random_tensor({3, 1}, 7))}, {}, "mul");
  auto t = b.op("Tanh", {m}, {}, "tanh");
  return b.finish({t, s});
}

TEST(CompileTest, ElementwiseModelMatchesTheReference) {
  graph::Graph g = elementwise_model();
  CompiledModel m = compile_graph(g);
  auto x = random_tensor({2, 3, 16}, 1), y = random_tensor({16}, 2);
  m.set_input("x", to_ndarray(x));
  m.set_input("y", to_ndarray(y));
  m.run();
  auto want = reference::run(g, {{"x", x}, {"y", y}});
  ASSERT_EQ(m.num_outputs(), 2);
  for (int o = 0; o < 2; ++o) {
    graph::TensorData got = to_tensor_data(m.get_output(o));
    ASSERT_EQ(got.shape(), want[o].shape());
    for (int64_t i = 0; i < got.numel(); ++i) {
      ASSERT_NEAR(got.get_double(i), want[o].get_double(i), 1e-5)
          << "output " << o << " element " << i;
    }
  }
  EXPECT_FALSE(m.timings().empty());
  // `add` is also a graph output, so fusion stops there (as in TVM); the rest fuses.
  EXPECT_NE(m.fusion_summary().find("[Relu+Mul+Tanh]"), std::string::npos) << m.fusion_summary();
}

TEST(CompileTest, InputErrorsNameTheInput) {
  CompiledModel m = compile_graph(elementwise_model());
  expect_error([&] { m.set_input("x", to_ndarray(random_tensor({2, 3, 15}, 1))); },
               {"input 'x' is float32[2, 3, 15] but the model expects float32[2, 3, 16]"});
  expect_error([&] { m.set_input("nope", to_ndarray(random_tensor({16}, 1))); },
               {"no input named 'nope'; its inputs are: x, y"});
}

TEST(CompileTest, UnknownDimsAreReportedByInputName) {
  Builder b;
  auto x = b.input("data", {graph::kUnknownDim, 4});
  graph::Graph g = b.finish({b.op("Relu", {x}, {}, "relu")});
  expect_error([&] { compile_graph(g); }, {"data"});
}

}  // namespace
}  // namespace tessel
