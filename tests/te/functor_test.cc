// te's nodes are not ir: ir's functors, equality and the simplifier reject them with an
// InternalError, and te's functors walk them.
#include "te/functor.h"

#include <gtest/gtest.h>

#include "ir/structural_equal.h"
#include "te/operation.h"
#include "te/printer.h"
#include "tests/common/expect_error.h"
#include "tir/arith/analyzer.h"

namespace tessel::te {
namespace {
using tessel::testing::expect_error;

struct RowSum {
  Tensor A = placeholder({4, 8}, DataType::f32(), "A");
  IterVar k = reduce_axis(0, 8, "k");
  Var i{"i"};
  PrimExpr load = A(i, k);
  PrimExpr reduction = sum(load * 2.0f, {k});
};

TEST(TeKindTest, TeKindsFollowIrKinds) {
  EXPECT_EQ(static_cast<int>(ProducerLoadNode::kKind), kNumIrNodeKinds);
  for (TeKind k : {TeKind::ProducerLoad, TeKind::Reduce, TeKind::IterVar, TeKind::CommReducer,
                   TeKind::PlaceholderOp, TeKind::ComputeOp}) {
    EXPECT_EQ(te_kind(node_kind(k)), k);
  }
  EXPECT_STREQ(te_kind_name(te_kind(ReduceNode::kKind)), "Reduce");
  EXPECT_STREQ(node_kind_name(ReduceNode::kKind), "non-ir node");
  EXPECT_THROW(te_kind(NodeKind::Add), InternalError);
}

TEST(TeFunctorTest, IrFunctorsRejectTeNodes) {
  RowSum r;
  PrimExpr e = r.load + 1.0f;
  expect_error<InternalError>([&] { uses_var(e, {r.i.get()}); },
                              {"a te node (kind #", "IRVisitor"});
  expect_error<InternalError>([&] { substitute(e, {{r.i, PrimExpr(0)}}); }, {"IRMutator"});
  expect_error<InternalError>([&] { structural_equal(r.load, r.A(r.i, r.k)); },
                              {"structural_equal"});
  expect_error<InternalError>([&] { arith::Analyzer().simplify(e); }, {"simplifier"});
}

TEST(TeFunctorTest, TeVisitorWalksIntoReadsAndReductions) {
  RowSum r;
  struct Counter : TeVisitor {
    int loads = 0, reduces = 0, vars = 0;
    void visit_ProducerLoad(const ProducerLoadNode* op, const PrimExpr& self) override {
      ++loads;
      TeVisitor::visit_ProducerLoad(op, self);
    }
    void visit_Reduce(const ReduceNode* op, const PrimExpr& self) override {
      ++reduces;
      TeVisitor::visit_Reduce(op, self);
    }
    void visit_Var(const VarNode*, const PrimExpr&) override { ++vars; }
  } c;
  c.visit_expr(r.reduction);
  EXPECT_EQ(c.loads, 1);
  EXPECT_EQ(c.reduces, 1);
  EXPECT_EQ(c.vars, 2);  // i and k, in the read's indices
}

TEST(TeFunctorTest, SubstituteBodyReplacesInsideReadsAndReductions) {
  RowSum r;
  PrimExpr out = substitute_body(r.reduction, {{r.i, PrimExpr(3)}});
  EXPECT_EQ(body_to_string(out), "sum(A(3, k)*2f, axis=[k])");
  EXPECT_TRUE(substitute_body(r.reduction, {{Var("other"), PrimExpr(3)}}).same_as(r.reduction));
}

}  // namespace
}  // namespace tessel::te
