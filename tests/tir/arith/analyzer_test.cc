#include "tir/arith/analyzer.h"

#include <gtest/gtest.h>

#include "ir/printer.h"
#include "ir/structural_equal.h"

namespace tessel::arith {
namespace {

using B = ConstIntBound;

void expect_simplify(Analyzer& a, const PrimExpr& in, const PrimExpr& want) {
  PrimExpr got = a.simplify(in);
  EXPECT_TRUE(structural_equal(got, want))
      << "input: " << in << "\n  got: " << got << "\n want: " << want;
  // Simplification reaches its fixed point in one call.
  PrimExpr again = a.simplify(got);
  EXPECT_TRUE(structural_equal(again, got)) << "not idempotent: " << got << " -> " << again;
}

// Loop vars of a 1024 loop split by 32.
struct TiledLoop {
  Var io{"io"}, ii{"ii"};
  Analyzer a;
  TiledLoop() {
    a.bind(io, Range(0, 32));
    a.bind(ii, Range(0, 32));
  }
};

TEST(AnalyzerTest, FoldsConstantsAndCollectsLikeTerms) {
  Analyzer a;
  Var x("x"), i("i"), j("j");
  expect_simplify(a, AddNode::make(IntImmNode::make(DataType::i32(), 3), 4), 7);
  expect_simplify(a, x - x, 0);
  expect_simplify(a, (x + 3) - x + 4, 7);
  expect_simplify(a, (i * 4 + j) * 2 - i * 8, j * 2);
  expect_simplify(a, x * 2 + x * 3 - 1, x * 5 - 1);
  expect_simplify(a, 5 - x, 5 - x);
  expect_simplify(a, 0 - x, x * -1);
}

TEST(AnalyzerTest, SortsTermsDeterministically) {
  Analyzer a;
  Var i("i"), j("j"), k("k");
  PrimExpr one = a.simplify(i + j + k * 8);
  PrimExpr two = a.simplify(j + k * 8 + i);
  EXPECT_TRUE(structural_equal(one, two)) << one << " vs " << two;
  expect_simplify(a, j + i * 32, i * 32 + j);  // larger stride first
  expect_simplify(a, j - i, j - i);
}

TEST(AnalyzerTest, ProductsDistributeOnlyOverMonomials) {
  Analyzer a;
  Var x("x"), y("y"), n("n");
  expect_simplify(a, (x + 1) * n - n, n * x);  // factors sort by name
  expect_simplify(a, n * x - x * n, 0);
  PrimExpr product = a.simplify((x + 1) * (y + 1));
  EXPECT_NE(product.as<MulNode>(), nullptr) << product;
}

TEST(AnalyzerTest, TiledIndexDivModCancel) {
  TiledLoop t;
  expect_simplify(t.a, floordiv(t.io * 32 + t.ii, 32), t.io);
  expect_simplify(t.a, floormod(t.io * 32 + t.ii, 32), t.ii);
  expect_simplify(t.a, floordiv(t.ii + t.io * 32, 32) * 32 + floormod(t.ii + t.io * 32, 32),
                  t.io * 32 + t.ii);
}

TEST(AnalyzerTest, FuseThenSplitRecoversTheParts) {
  Analyzer a;
  Var fo("fo"), fi("fi");
  a.bind(fo, Range(0, 512));
  a.bind(fi, Range(0, 8));
  expect_simplify(a, floordiv(fo * 8 + fi, 64), floordiv(fo, 8));
  expect_simplify(a, floormod(fo * 8 + fi, 64), floormod(fo, 8) * 8 + fi);
}

TEST(AnalyzerTest, DivModOfSmallOperand) {
  Analyzer a;
  Var x("x");
  a.bind(x, Range(0, 7));
  expect_simplify(a, floordiv(x, 8), 0);
  expect_simplify(a, floormod(x, 8), x);
  expect_simplify(a, floordiv(x + 16, 8), 2);
  expect_simplify(a, floormod(x + 16, 8), x);
}

TEST(AnalyzerTest, DivModRulesWithoutBounds) {
  Analyzer a;
  Var x("x"), y("y");
  expect_simplify(a, floordiv(floordiv(x, 4), 8), floordiv(x, 32));
  expect_simplify(a, floormod(x * 8, 8), 0);
  expect_simplify(a, floormod(x * 16 + y, 8), floormod(y, 8));
  expect_simplify(a, floordiv(x * 16 + y, 8), x * 2 + floordiv(y, 8));
  expect_simplify(a, floordiv(x + 9, 4), floordiv(x + 1, 4) + 2);
  expect_simplify(a, floordiv(x, 8) * 8 + floormod(x, 8), x);
  expect_simplify(a, floormod(floormod(x, 16), 8), floormod(x, 8));
  expect_simplify(a, floordiv(x * 4, 8), floordiv(x, 2));
  // x in [-2^31, 2^31): dividing by 8 cannot be removed.
  PrimExpr kept = a.simplify(floordiv(x, 8));
  EXPECT_NE(kept.as<FloorDivNode>(), nullptr) << kept;
}

TEST(AnalyzerTest, MinMaxRemovedWhenOrderIsProvable) {
  Analyzer a;
  Var x("x"), i("i");
  a.bind(i, Range(0, 1024));
  expect_simplify(a, min(x, x + 1), x);
  expect_simplify(a, max(x, x + 1), x + 1);
  expect_simplify(a, min(i, 1023), i);
  expect_simplify(a, max(i, 0), i);
  expect_simplify(a, min(i, 1000), min(i, 1000));
  expect_simplify(a, min(min(x, 10), 4), min(x, 4));
  expect_simplify(a, min(3, x), min(x, 3));
}

TEST(AnalyzerTest, ComparisonsDecidedByBounds) {
  TiledLoop t;
  expect_simplify(t.a, t.io * 32 + t.ii < 1024, make_const(DataType::boolean(), 1));
  expect_simplify(t.a, t.io * 32 + t.ii >= 1024, make_const(DataType::boolean(), 0));
  Var n("n");
  t.a.bind(n, PrimExpr(1000));
  EXPECT_FALSE(t.a.can_prove(t.io * 32 + t.ii < n));
  EXPECT_FALSE(t.a.can_prove(t.io * 32 + t.ii >= n));
  EXPECT_TRUE(t.a.can_prove(t.io * 32 + t.ii < 1024));
}

TEST(AnalyzerTest, UndecidedComparisonsKeepTheirShape) {
  Analyzer a;
  Var i("i"), n("n");
  expect_simplify(a, i < n, i < n);
  expect_simplify(a, i + 1 < n + 1, i < n);
  expect_simplify(a, 5 < i, i > 5);
  expect_simplify(a, i * 4 + 3 < 100, i * 4 < 97);
}

// A bound on floordiv(x, c) is one on x, which keeps the guard of a split over fused loops linear
// (floordiv(o*6 + i, 14) < 14 is o*6 + i < 196) for loop partitioning.
TEST(AnalyzerTest, ABoundOnAQuotientIsABoundOnItsDividend) {
  Analyzer a;
  Var x("x"), n("n");
  expect_simplify(a, floordiv(x * 6 + 2, 14) < 14, x * 3 < 97);  // (x*3 + 1) // 7 < 14
  expect_simplify(a, floordiv(x, 7) <= 3, x < 28);
  expect_simplify(a, floordiv(x, 7) >= 1, x >= 7);
  expect_simplify(a, floordiv(x, 7) > 1, x >= 14);
  expect_simplify(a, 2 < floordiv(x, 7), x >= 21);
  expect_simplify(a, floordiv(x, 7) < n, floordiv(x, 7) < n);
  expect_simplify(a, floordiv(x, n) < 3, floordiv(x, n) < 3);
  expect_simplify(a, floordiv(x, 7) == 3, floordiv(x, 7) == 3);
  expect_simplify(a, floordiv(x, 7) * 2 < 5, floordiv(x, 7) * 2 < 5);
  // Decided where the dividend's bounds decide it.
  a.bind(x, Range(0, 98));
  expect_simplify(a, floordiv(x, 7) < 14, make_const(DataType::boolean(), 1));
}

TEST(AnalyzerTest, SymbolicRangesProveLoopGuards) {
  Analyzer a;
  Var i("i"), n("n");
  a.bind(i, Range(0, n));
  EXPECT_TRUE(a.can_prove(i < n));
  EXPECT_TRUE(a.can_prove(i <= n - 1));
  EXPECT_TRUE(a.can_prove(i >= 0));
  EXPECT_FALSE(a.can_prove(i < n - 1));
  expect_simplify(a, min(i, n - 1), i);
}

TEST(AnalyzerTest, BooleanFolding) {
  Analyzer a;
  Var x("x"), y("y");
  PrimExpr t = make_const(DataType::boolean(), 1);
  PrimExpr f = make_const(DataType::boolean(), 0);
  expect_simplify(a, AndNode::make(x < y, t), x < y);
  expect_simplify(a, AndNode::make(x < y, f), f);
  expect_simplify(a, OrNode::make(x < y, t), t);
  expect_simplify(a, OrNode::make(f, x < y), x < y);
  expect_simplify(a, NotNode::make(x < y), x >= y);
  expect_simplify(a, NotNode::make(NotNode::make(x == y)), x == y);
  Var p("p", DataType::f32()), q("q", DataType::f32());
  // !(p < q) is not p >= q when either is NaN.
  expect_simplify(a, NotNode::make(p < q), NotNode::make(p < q));
}

TEST(AnalyzerTest, SelectAndLikely) {
  TiledLoop t;
  Var x("x");
  expect_simplify(t.a, select(t.ii < 32, x, x + 1), x);
  expect_simplify(t.a, select(x < 3, x + 1, 1 + x), x + 1);
  expect_simplify(t.a, likely(t.io * 32 + t.ii < 1024), make_const(DataType::boolean(), 1));
  expect_simplify(t.a, likely(t.io * 32 + t.ii < x), likely(t.io * 32 + t.ii < x));
}

TEST(AnalyzerTest, FloatsOnlyFoldConstants) {
  Analyzer a;
  Var f("f", DataType::f32());
  PrimExpr one = FloatImmNode::make(DataType::f32(), 1.0);
  PrimExpr two = FloatImmNode::make(DataType::f32(), 2.0);
  expect_simplify(a, AddNode::make(one, two), FloatImmNode::make(DataType::f32(), 3.0));
  PrimExpr reassoc = AddNode::make(AddNode::make(f, one), two);
  expect_simplify(a, reassoc, reassoc);
  PrimExpr cancel = SubNode::make(f, f);
  expect_simplify(a, cancel, cancel);
}

TEST(AnalyzerTest, VectorRampBroadcastAlgebra) {
  Analyzer a;
  Var x("x"), y("y");
  auto ramp = [](PrimExpr b, PrimExpr s) { return RampNode::make(b, s, 4); };
  auto bc = [](PrimExpr v) { return BroadcastNode::make(v, 4); };
  expect_simplify(a, AddNode::make(ramp(x, 1), bc(y)), ramp(x + y, 1));
  expect_simplify(a, AddNode::make(bc(x), bc(y)), bc(x + y));
  expect_simplify(a, MulNode::make(ramp(x, 1), bc(3)), ramp(x * 3, 3));
  expect_simplify(a, SubNode::make(ramp(x, 2), ramp(x, 1)), ramp(0, 1));
  // Base x*8 + 4 with 4 lanes stays inside one multiple of 8.
  PrimExpr base = x * 8 + 4;
  expect_simplify(a, FloorDivNode::make(ramp(base, 1), bc(8)), bc(x));
  expect_simplify(a, FloorModNode::make(ramp(base, 1), bc(8)), ramp(4, 1));
  // Base x*8 + 5 crosses the next multiple: left alone.
  PrimExpr crossing = a.simplify(FloorDivNode::make(ramp(x * 8 + 5, 1), bc(8)));
  EXPECT_NE(crossing.as<FloorDivNode>(), nullptr) << crossing;
  expect_simplify(a, FloorDivNode::make(ramp(x * 8, 8), bc(8)), ramp(x, 1));
}

TEST(AnalyzerTest, VectorComparisonsDecidedForAllLanes) {
  Analyzer a;
  Var i("i");
  a.bind(i, Range(0, 4));
  PrimExpr lt = LTNode::make(RampNode::make(i * 8, 1, 8), BroadcastNode::make(PrimExpr(32), 8));
  expect_simplify(a, lt, make_const(DataType::boolean(8), 1));
}

TEST(AnalyzerTest, ConstIntBoundRules) {
  Analyzer a;
  Var x("x"), y("y"), b("b", DataType::i64());
  a.bind(x, Range(-4, 12));  // [-4, 7]
  a.bind(y, Range(1, 4));    // [1, 4]
  auto expect_bound = [&](const PrimExpr& e, int64_t lo, int64_t hi) {
    B r = a.const_int_bound(e);
    EXPECT_EQ(r.min_value, lo) << e;
    EXPECT_EQ(r.max_value, hi) << e;
  };
  expect_bound(x + y, -3, 11);
  expect_bound(x - y, -8, 6);
  expect_bound(x * y, -16, 28);
  expect_bound(x * -2, -14, 8);
  expect_bound(FloorDivNode::make(x, y), -4, 7);
  expect_bound(floordiv(x, 4), -1, 1);
  expect_bound(floormod(x, 4), 0, 3);
  expect_bound(FloorModNode::make(x, y), 0, 3);
  expect_bound(min(x, y), -4, 4);
  expect_bound(max(x, y), 1, 7);
  expect_bound(select(x < 0, y, x + 100), 1, 107);
  expect_bound(cast(DataType::i8(), x * 100), -128, 127);
  expect_bound(cast(DataType::i64(), x), -4, 7);
  expect_bound(x < y, 0, 1);
  Var u("u");
  expect_bound(u, -(int64_t{1} << 31), (int64_t{1} << 31) - 1);
  // Unbounded i64 arithmetic saturates instead of overflowing.
  expect_bound(b * 2 + 1, B::kNegInf, B::kPosInf);
  expect_bound(b * b, B::kNegInf, B::kPosInf);
}

TEST(AnalyzerTest, LetBindingsAndUnbind) {
  Analyzer a;
  Var x("x"), y("y"), z("z");
  a.bind(x, PrimExpr(5));
  expect_simplify(a, x + 1, 6);
  a.bind(y, floormod(x + z, 4));
  EXPECT_EQ(a.const_int_bound(y).max_value, 3);
  a.unbind(x);
  PrimExpr kept = a.simplify(x + 1);
  EXPECT_TRUE(structural_equal(kept, x + 1)) << kept;
  a.bind(x, Range(0, 1));  // a single point
  expect_simplify(a, x * 7 + 2, 2);
  a.bind(x, Range(3, 5));  // rebinding replaces
  EXPECT_EQ(a.const_int_bound(x).min_value, 3);
  EXPECT_EQ(a.const_int_bound(x).max_value, 7);
}

TEST(AnalyzerTest, LetExpressions) {
  Analyzer a;
  Var x("x"), y("y");
  expect_simplify(a, LetNode::make(x, 3, x + y - 3), y);
  a.bind(y, Range(0, 8));
  PrimExpr let = a.simplify(LetNode::make(x, y * 4, floordiv(x + 3, 4)));
  const auto* op = let.as<LetNode>();
  ASSERT_NE(op, nullptr) << let;
  EXPECT_TRUE(structural_equal(op->body, floordiv(x + 3, 4))) << let;
}

TEST(AnalyzerTest, ProveEqual) {
  TiledLoop t;
  EXPECT_TRUE(t.a.can_prove_equal(floordiv(t.io * 32 + t.ii, 32), t.io));
  EXPECT_TRUE(t.a.can_prove_equal((t.io + 1) * 32, t.io * 32 + 32));
  EXPECT_FALSE(t.a.can_prove_equal(t.io, t.ii));
  Var f("f", DataType::f32());
  EXPECT_TRUE(t.a.can_prove_equal(f + 1.0f, f + 1.0f));
}

}  // namespace
}  // namespace tessel::arith
