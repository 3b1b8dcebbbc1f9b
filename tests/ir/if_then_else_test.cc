// if_then_else: a lazy conditional expression node, distinct from select (which evaluates both).
#include <gtest/gtest.h>

#include "ir/error.h"
#include "ir/functor.h"
#include "ir/printer.h"
#include "ir/structural_equal.h"

namespace tessel {
namespace {

struct Padding {
  Buffer a = Buffer::make("A", DataType::f32(), {16});
  Var i{"i"};
  PrimExpr in_bounds = i >= 1 && i < 17;
  PrimExpr guarded_load() const {
    return if_then_else(in_bounds, BufferLoadNode::make(a, {i - 1}), 0.0f);
  }
};

TEST(IfThenElseTest, IsItsOwnNodeKindNotASelect) {
  Padding p;
  PrimExpr e = p.guarded_load();
  const auto* node = e.as<IfThenElseExprNode>();
  ASSERT_NE(node, nullptr);
  EXPECT_FALSE(e.is<SelectNode>());
  EXPECT_EQ(e.dtype(), DataType::f32());
  EXPECT_TRUE(node->true_value.is<BufferLoadNode>());
  EXPECT_EQ(std::string(node_kind_name(e->kind())), "IfThenElseExpr");
}

TEST(IfThenElseTest, PrintsAsIfThenElse) {
  Padding p;
  EXPECT_EQ(to_string(p.guarded_load()), "if_then_else(i >= 1 && i < 17, A[i - 1], 0f)");
  EXPECT_EQ(to_string(select(p.in_bounds, BufferLoadNode::make(p.a, {p.i - 1}), 0.0f)),
            "select(i >= 1 && i < 17, A[i - 1], 0f)");
}

TEST(IfThenElseTest, StructuralEqualityAndHash) {
  Padding p;
  PrimExpr load = BufferLoadNode::make(p.a, {p.i - 1});
  EXPECT_TRUE(structural_equal(p.guarded_load(), p.guarded_load()));
  EXPECT_EQ(structural_hash(p.guarded_load()), structural_hash(p.guarded_load()));
  // Same operands, other kind: a select is not an if_then_else.
  PrimExpr sel = select(p.in_bounds, load, 0.0f);
  EXPECT_FALSE(structural_equal(p.guarded_load(), sel));
  EXPECT_NE(structural_hash(p.guarded_load()), structural_hash(sel));
  EXPECT_FALSE(structural_equal(p.guarded_load(), if_then_else(p.in_bounds, load, 1.0f)));
  EXPECT_FALSE(structural_equal(p.guarded_load(), if_then_else(p.i >= 1, load, 0.0f)));
  // Bound vars map by position inside it too.
  Var j("j");
  PrimExpr other = if_then_else(j >= 1 && j < 17, BufferLoadNode::make(p.a, {j - 1}), 0.0f);
  EXPECT_TRUE(structural_equal(p.guarded_load(), other, /*map_free_vars=*/true));
}

TEST(IfThenElseTest, ConstructionPromotesAndFolds) {
  Padding p;
  PrimExpr load = BufferLoadNode::make(p.a, {p.i});
  // A decided condition leaves the taken value alone.
  EXPECT_TRUE(if_then_else(make_const(DataType::boolean(), 1), load, 0.0f).same_as(load));
  EXPECT_TRUE(is_zero(if_then_else(make_const(DataType::boolean(), 0), p.i, 0)));
  // The constant adopts the other value's type.
  EXPECT_EQ(if_then_else(p.i < 4, p.i, 0.5).dtype(), DataType::f32());
  // A scalar condition stays scalar over vector values; a vector one widens scalar values.
  PrimExpr vec = BufferLoadNode::make(p.a, {RampNode::make(p.i, 1, 4)});
  PrimExpr over_vector = if_then_else(p.i < 4, vec, 0.0f);
  const auto* scalar_cond = over_vector.as<IfThenElseExprNode>();
  ASSERT_NE(scalar_cond, nullptr);
  EXPECT_TRUE(scalar_cond->condition.dtype().is_scalar());
  EXPECT_EQ(scalar_cond->dtype, DataType::f32().with_lanes(4));
  PrimExpr lanes_cond = RampNode::make(p.i, 1, 4) < BroadcastNode::make(PrimExpr(8), 4);
  EXPECT_EQ(if_then_else(lanes_cond, 1.0f, 0.0f).dtype(), DataType::f32().with_lanes(4));
}

TEST(IfThenElseTest, RejectsANonBoolCondition) {
  Padding p;
  EXPECT_THROW(if_then_else(p.i, 1.0f, 0.0f), Error);
}

TEST(IfThenElseTest, MutatorAndSubstituteKeepTheKind) {
  Padding p;
  Var k("k");
  PrimExpr e = substitute(p.guarded_load(), {{p.i, k + 1}});
  ASSERT_TRUE(e.is<IfThenElseExprNode>());
  EXPECT_EQ(to_string(e), "if_then_else(k + 1 >= 1 && k + 1 < 17, A[k + 1 - 1], 0f)");
  EXPECT_TRUE(uses_var(p.guarded_load(), {p.i.get()}));
}

}  // namespace
}  // namespace tessel
