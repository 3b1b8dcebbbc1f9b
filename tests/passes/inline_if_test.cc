// inline_if: the compiled model (both branches, Where at run time) against the reference executor,
// which runs only the taken branch; constant conditions inline one branch; nesting.
#include "passes/inline_if.h"

#include <gtest/gtest.h>

#include "driver/compile.h"
#include "graph_builder.h"
#include "ir/error.h"
#include "passes/infer_type.h"
#include "reference/reference.h"
#include "tests/common/expect_error.h"

namespace tessel::passes {
namespace {
using graph::TensorData;
using graph::ValueId;
using testing::Builder;
using testing::random_tensor;

TensorData flag(bool v) {
  TensorData t(DataType::boolean(), {1});
  t.data<uint8_t>()[0] = v;
  return t;
}

// A branch reading the outer value `x` (its one capture) and applying `op`.
std::shared_ptr<graph::Graph> branch(const std::string& op) {
  Builder b;
  ValueId x = b.input("x", {2, 3});
  return std::make_shared<graph::Graph>(b.finish({b.op(op, {x})}));
}

graph::Graph if_model(std::shared_ptr<graph::Graph> then_g, std::shared_ptr<graph::Graph> else_g,
                      bool constant_cond, bool cond_value = true) {
  Builder b;
  ValueId cond = constant_cond ? b.constant("cond", flag(cond_value))
                               : b.g.add_value("cond", {DataType::boolean(), {1}, {}});
  if (!constant_cond) b.g.inputs.push_back(cond);
  ValueId x = b.input("x", {2, 3});
  ValueId y = b.op("If", {cond, x}, {{"then_branch", then_g}, {"else_branch", else_g}}, "if0");
  return b.finish({b.op("Abs", {y})});
}

void expect_compiled_matches_reference(const graph::Graph& g, bool cond) {
  TensorData x = random_tensor({2, 3}, 7);
  auto want = reference::run(g, {{"cond", flag(cond)}, {"x", x}});
  CompiledModel m = compile_graph(g);
  m.set_input("cond", to_ndarray(flag(cond)));
  m.set_input("x", to_ndarray(x));
  m.run();
  TensorData got = to_tensor_data(m.get_output(0));
  ASSERT_EQ(got.shape(), want[0].shape());
  for (int64_t i = 0; i < got.numel(); ++i)
    EXPECT_FLOAT_EQ(got.get_double(i), want[0].get_double(i)) << "cond " << cond;
}

TEST(InlineIfTest, RuntimeConditionSelectsTheBranchAtRunTime) {
  graph::Graph g = if_model(branch("Exp"), branch("Neg"), false);
  expect_compiled_matches_reference(g, true);
  expect_compiled_matches_reference(g, false);

  graph::Graph typed = g;
  infer_type(typed);
  ASSERT_TRUE(inline_if(typed));
  std::string text = typed.str();
  EXPECT_EQ(text.find("If("), std::string::npos) << text;
  EXPECT_NE(text.find("Where("), std::string::npos) << text;
  EXPECT_NE(text.find("if0/then/"), std::string::npos) << text;
  EXPECT_NE(text.find("if0/else/"), std::string::npos) << text;
}

TEST(InlineIfTest, ConstantConditionInlinesOnlyTheTakenBranch) {
  graph::Graph g = if_model(branch("Exp"), branch("Neg"), true, false);
  infer_type(g);
  ASSERT_TRUE(inline_if(g));
  std::string text = g.str();
  EXPECT_EQ(text.find("Exp("), std::string::npos) << text;
  EXPECT_NE(text.find("Neg("), std::string::npos) << text;
  EXPECT_EQ(text.find("Where("), std::string::npos) << text;
  EXPECT_FALSE(inline_if(g));  // nothing left to do
}

TEST(InlineIfTest, NestedIfInsideABranchIsInlinedToo) {
  // then: If(cond2: constant true) { Sigmoid } else { Tanh }; else: Neg.
  Builder inner;
  ValueId x = inner.input("x", {2, 3});
  ValueId c2 = inner.constant("cond2", flag(true));
  ValueId y =
      inner.op("If", {c2, x}, {{"then_branch", branch("Sigmoid")}, {"else_branch", branch("Tanh")}},
               "inner");
  auto then_g = std::make_shared<graph::Graph>(inner.finish({y}));
  graph::Graph g = if_model(then_g, branch("Neg"), false);
  expect_compiled_matches_reference(g, true);
  expect_compiled_matches_reference(g, false);
}

TEST(InlineIfTest, BranchesWithDifferentOutputCountsAreAnError) {
  Builder two;
  ValueId x = two.input("x", {2, 3});
  auto then_g =
      std::make_shared<graph::Graph>(two.finish({two.op("Exp", {x}), two.op("Neg", {x})}));
  graph::Graph g = if_model(then_g, branch("Neg"), false);
  tessel::testing::expect_error([&] { compile_graph(g); }, {"if0"});
}

}  // namespace
}  // namespace tessel::passes
