#include "tir/transforms/simplify.h"

#include <gtest/gtest.h>

#include "ir/printer.h"
#include "ir/structural_equal.h"

namespace tessel {
namespace {

void expect_simplified(const Stmt& before, const Stmt& expected) {
  Stmt after = simplify_stmt(before);
  EXPECT_TRUE(structural_equal(after, expected)) << "before:\n"
                                                 << before << "\nafter:\n"
                                                 << after << "\nexpected:\n"
                                                 << expected;
}

Stmt loop(const Var& v, PrimExpr extent, Stmt body, ForKind kind = ForKind::kSerial) {
  return ForNode::make(v, 0, std::move(extent), kind, std::move(body));
}

struct Fixture {
  Buffer a = Buffer::make("A", DataType::f32(), {1024});
  Buffer b = Buffer::make("B", DataType::f32(), {1024});
  Var io{"io"}, ii{"ii"}, i{"i"}, j{"j"};
  Stmt store(PrimExpr index, PrimExpr value = 1.0f) {
    return BufferStoreNode::make(a, std::move(value), {std::move(index)});
  }
};

TEST(SimplifyTest, RemovesAGuardTheTilingProves) {
  Fixture f;
  PrimExpr index = f.io * 32 + f.ii;
  Stmt guarded = IfThenElseNode::make(likely(index < 1024), f.store(index));
  expect_simplified(loop(f.io, 32, loop(f.ii, 32, guarded)),
                    loop(f.io, 32, loop(f.ii, 32, f.store(index))));
}

TEST(SimplifyTest, KeepsAGuardForANonDividingSplit) {
  Fixture f;
  PrimExpr index = f.io * 32 + f.ii;
  Stmt guarded = IfThenElseNode::make(likely(index < 1000), f.store(index));
  Stmt before = loop(f.io, 32, loop(f.ii, 32, guarded));
  expect_simplified(before, before);
}

TEST(SimplifyTest, ProvesGuardsAgainstSymbolicExtents) {
  Fixture f;
  Var n("n");
  Stmt before = loop(f.i, n, IfThenElseNode::make(f.i < n, f.store(f.i)));
  expect_simplified(before, loop(f.i, n, f.store(f.i)));
}

// A loop whose whole body is guarded by `v < c` runs only up to c: the loop shrinks and the
// guard goes (the scalar tails of partitioned loops).
TEST(SimplifyTest, ShrinksALoopToItsGuardedPrefix) {
  Fixture f;
  auto guarded = [&](PrimExpr cond) { return IfThenElseNode::make(cond, f.store(f.i)); };
  expect_simplified(loop(f.i, 16, guarded(likely(f.i < 12))), loop(f.i, 12, f.store(f.i)));
  expect_simplified(loop(f.i, 16, guarded(f.i < 12), ForKind::kUnrolled),
                    loop(f.i, 12, f.store(f.i), ForKind::kUnrolled));
  // From a nonzero min: i in [2, 5).
  expect_simplified(ForNode::make(f.i, 2, 14, ForKind::kSerial, guarded(likely(f.i < 5))),
                    ForNode::make(f.i, 2, 3, ForKind::kSerial, f.store(f.i)));
  // A bound past the end keeps the extent.
  expect_simplified(loop(f.i, 16, guarded(likely(f.i < 40))), loop(f.i, 16, f.store(f.i)));
}

TEST(SimplifyTest, KeepsGuardsItCannotTurnIntoAnExtent) {
  Fixture f;
  Var n("n");
  for (Stmt before : {
           // a symbolic bound, another var, an else branch, a vector loop
           loop(f.i, 16, IfThenElseNode::make(likely(f.i < n), f.store(f.i))),
           loop(f.i, 16, loop(f.j, 4, IfThenElseNode::make(likely(f.i < 12), f.store(f.j)))),
           loop(f.i, 16, IfThenElseNode::make(f.i < 12, f.store(f.i), f.store(f.i, 2.0f))),
           loop(f.i, 16, IfThenElseNode::make(likely(f.i < 12), f.store(f.i)),
                ForKind::kVectorized),
       }) {
    expect_simplified(before, before);
  }
}

TEST(SimplifyTest, UnwrapsLoopsOfExtentOne) {
  Fixture f;
  Stmt before = loop(f.i, 8, loop(f.j, 1, f.store(f.i * 4 + f.j * 2)));
  expect_simplified(before, loop(f.i, 8, f.store(f.i * 4)));
  // A loop starting elsewhere substitutes its min.
  Stmt shifted = loop(f.i, 8, ForNode::make(f.j, 3, 1, ForKind::kSerial, f.store(f.i + f.j)));
  expect_simplified(shifted, loop(f.i, 8, f.store(f.i + 3)));
}

TEST(SimplifyTest, KeepsThreadLoopsOfExtentOne) {
  Fixture f;
  Stmt before = ForNode::make(f.i, 0, 1, ForKind::kThreadBinding, f.store(f.i), "threadIdx.x");
  Stmt after = simplify_stmt(before);
  ASSERT_NE(after.as<ForNode>(), nullptr) << after;
  EXPECT_EQ(after.as<ForNode>()->thread_tag, "threadIdx.x");
}

TEST(SimplifyTest, DropsEmptyLoops) {
  Fixture f;
  expect_simplified(loop(f.i, 0, f.store(f.i)), EvaluateNode::make(0));
  expect_simplified(loop(f.i, PrimExpr(4) - 6, f.store(f.i)), EvaluateNode::make(0));
}

TEST(SimplifyTest, UndoesFuseThenSplitInIndices) {
  Buffer c = Buffer::make("C", DataType::f32(), {64, 64});
  Var fo("fo"), fi("fi");
  PrimExpr fused = fo * 8 + fi;
  Stmt before =
      loop(fo, 512,
           loop(fi, 8, BufferStoreNode::make(c, 0.0f, {floordiv(fused, 64), floormod(fused, 64)})));
  Stmt expected = loop(
      fo, 512,
      loop(fi, 8, BufferStoreNode::make(c, 0.0f, {floordiv(fo, 8), floormod(fo, 8) * 8 + fi})));
  expect_simplified(before, expected);
}

TEST(SimplifyTest, LeavesFloatMathAlone) {
  Fixture f;
  PrimExpr load = BufferLoadNode::make(f.b, {f.i});
  PrimExpr value = AddNode::make(AddNode::make(load, FloatImmNode::make(DataType::f32(), 1.0)),
                                 FloatImmNode::make(DataType::f32(), 2.0));
  Stmt before = loop(f.i, 1024, f.store(f.i, value));
  expect_simplified(before, before);
}

TEST(SimplifyTest, DecidedBranchesSelectOneSide) {
  Fixture f;
  Stmt then_case = f.store(f.i, 1.0f), else_case = f.store(f.i, 2.0f);
  Stmt taken = loop(f.i, 16, IfThenElseNode::make(f.i >= 16, then_case, else_case));
  expect_simplified(taken, loop(f.i, 16, else_case));
  Stmt dropped = loop(f.i, 16, IfThenElseNode::make(f.i > 20, then_case));
  expect_simplified(dropped, loop(f.i, 16, EvaluateNode::make(0)));
}

TEST(SimplifyTest, LetValuesInformTheBody) {
  Fixture f;
  Var k("k"), t("t");
  Stmt body = f.store(f.i * k);
  expect_simplified(loop(f.i, 8, LetStmtNode::make(k, 4, body)),
                    loop(f.i, 8, LetStmtNode::make(k, 4, f.store(f.i * 4))));
  // A let of a bounded value: t = i % 4 is below 4, so t < 4 holds.
  Stmt guarded = LetStmtNode::make(t, floormod(f.i, 4), IfThenElseNode::make(t < 4, f.store(t)));
  expect_simplified(loop(f.i, 8, guarded),
                    loop(f.i, 8, LetStmtNode::make(t, floormod(f.i, 4), f.store(t))));
}

TEST(SimplifyTest, DropsProvenAsserts) {
  Fixture f;
  Stmt before = loop(f.i, 8, AssertStmtNode::make(f.i < 8, "i in range", f.store(f.i)));
  expect_simplified(before, loop(f.i, 8, f.store(f.i)));
}

TEST(SimplifyTest, SimplifiesAPrimFuncBody) {
  Fixture f;
  Stmt body = loop(f.i, 1024, f.store(f.i + 0 * f.j + f.j - f.j));
  PrimFunc func = PrimFunc::make("fn", {f.a->data}, {f.a}, body);
  PrimFunc out = simplify(func);
  EXPECT_EQ(out->name, "fn");
  EXPECT_TRUE(structural_equal(out->body, loop(f.i, 1024, f.store(f.i)))) << out->body;
}

}  // namespace
}  // namespace tessel
