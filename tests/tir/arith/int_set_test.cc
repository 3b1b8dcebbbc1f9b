#include "tir/arith/int_set.h"

#include <gtest/gtest.h>

#include "ir/printer.h"
#include "ir/stmt.h"
#include "ir/structural_equal.h"

namespace tessel::arith {
namespace {

void expect_interval(const IntervalSet& got, const PrimExpr& lo, const PrimExpr& hi) {
  auto show = [](const PrimExpr& e) { return e.defined() ? to_string(e) : std::string("inf"); };
  EXPECT_TRUE(structural_equal(got.min, lo) && structural_equal(got.max, hi))
      << "got [" << show(got.min) << ", " << show(got.max) << "], want [" << show(lo) << ", "
      << show(hi) << "]";
}

TEST(IntSetTest, RelaxesTheInnerLoopOfATiledIndex) {
  Var io("io"), ii("ii");
  VarIntervals dom{{ii.get(), {0, 31}}};
  expect_interval(eval_interval(io * 32 + ii, dom), io * 32, io * 32 + 31);
}

TEST(IntSetTest, VarsOutsideTheDomainStayPoints) {
  Var n("n"), i("i");
  IntervalSet s = eval_interval(n * 2 + 1, {{i.get(), {0, 9}}});
  expect_interval(s, n * 2 + 1, n * 2 + 1);
}

TEST(IntSetTest, MultiplicationIsSignAware) {
  Var i("i");
  VarIntervals dom{{i.get(), {0, 9}}};
  expect_interval(eval_interval(i * 3, dom), 0, 27);
  expect_interval(eval_interval(i * -2, dom), -18, 0);
  expect_interval(eval_interval(10 - i, dom), 1, 10);
}

TEST(IntSetTest, DivAndModByPositiveConstants) {
  Var i("i"), io("io"), ii("ii");
  expect_interval(eval_interval(floordiv(i, 8), {{i.get(), {0, 63}}}), 0, 7);
  expect_interval(eval_interval(floormod(i, 8), {{i.get(), {0, 63}}}), 0, 7);
  // Inside one period the remainder keeps the operand's range.
  expect_interval(eval_interval(floormod(i, 8), {{i.get(), {8, 11}}}), 0, 3);
  expect_interval(eval_interval(floormod(io * 8 + ii, 8), {{ii.get(), {0, 7}}}), 0, 7);
  // The relaxed part stays inside one period of 16 too: only io's parity remains.
  expect_interval(eval_interval(floormod(io * 8 + ii, 16), {{ii.get(), {0, 7}}}),
                  floormod(io, 2) * 8, floormod(io, 2) * 8 + 7);
  expect_interval(eval_interval(floormod(i, 8), {{i.get(), {4, 11}}}), 0, 7);
}

TEST(IntSetTest, MinMaxAndSelect) {
  Var i("i"), c("c", DataType::boolean());
  VarIntervals dom{{i.get(), {0, 9}}};
  expect_interval(eval_interval(min(i, 5), dom), 0, 5);
  expect_interval(eval_interval(max(i, 5), dom), 5, 9);
  expect_interval(eval_interval(select(c, i, i + 10), dom), 0, 19);
}

TEST(IntSetTest, LoadsOfRelaxedIndicesAreUnbounded) {
  Var i("i"), j("j");
  Buffer buf = Buffer::make("A", DataType::i32(), {64});
  VarIntervals dom{{i.get(), {0, 9}}};
  IntervalSet relaxed = eval_interval(BufferLoadNode::make(buf, {i}) + 1, dom);
  EXPECT_FALSE(relaxed.min.defined());
  EXPECT_FALSE(relaxed.max.defined());
  PrimExpr fixed = BufferLoadNode::make(buf, {j});
  expect_interval(eval_interval(fixed, dom), fixed, fixed);
}

TEST(IntSetTest, SymbolicEnds) {
  Var i("i"), n("n");
  VarIntervals dom{{i.get(), {0, n - 1}}};
  expect_interval(eval_interval(i + 1, dom), 1, n);
  expect_interval(eval_interval(floordiv(i, 4), dom), 0, floordiv(n - 1, 4));
  // An unbounded end propagates.
  VarIntervals half{{i.get(), {0, PrimExpr()}}};
  IntervalSet s = eval_interval(i * 2, half);
  expect_interval(s, 0, PrimExpr());
}

TEST(IntSetTest, Union) {
  Var n("n");
  IntervalSet a{0, n - 1}, b{5, n + 3};
  expect_interval(union_of(a, b), 0, n + 3);
  expect_interval(union_of(a, IntervalSet::everything()), PrimExpr(), PrimExpr());
}

TEST(IntSetTest, FromRange) {
  Var n("n");
  IntervalSet s = IntervalSet::from_range(Range(2, n));
  expect_interval(s, 2, n + 1);
  EXPECT_TRUE(s.is_bounded());
  EXPECT_FALSE(IntervalSet::everything().is_bounded());
}

}  // namespace
}  // namespace tessel::arith
