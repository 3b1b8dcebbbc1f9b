// The lazy if_then_else through the tir passes: the simplifier never makes it a select, the
// vectorizer keeps it lazy per lane, and the lowered padding idiom reads nothing out of bounds
// (the interpreter checks every access it performs).
#include <gtest/gtest.h>

#include "test_util.h"
#include "tir/arith/analyzer.h"
#include "tir/pipeline.h"
#include "tir/transforms/simplify.h"
#include "tir/transforms/vectorize_loops.h"

namespace tessel::tir {
namespace {

using testing::Interpreter;

constexpr int kWidth = 16;

// P[i] = if_then_else(1 <= i < 17, A[i - 1], 0) for i in [0, 18): padding by one on each side.
struct Pad {
  Buffer a = Buffer::make("A", DataType::f32(), {kWidth});
  Buffer p = Buffer::make("P", DataType::f32(), {kWidth + 2});
  Var i{"i"};

  PrimExpr value(const PrimExpr& at) const {
    return if_then_else(at >= 1 && at < kWidth + 1, BufferLoadNode::make(a, {at - 1}), 0.0f);
  }
  // With `split`, i = io*factor + ii and ii is `inner`.
  PrimFunc func(ForKind inner, int factor) const {
    Var io("io"), ii("ii");
    PrimExpr at = io * factor + ii;
    Stmt body = ForNode::make(
        io, 0, (kWidth + 2) / factor, ForKind::kSerial,
        ForNode::make(ii, 0, factor, inner, BufferStoreNode::make(p, value(at), {at})));
    return PrimFunc::make("pad", {a->data, p->data}, {a, p}, body);
  }
  // Runs `f` on A = 1..16; the interpreter fails the test on any out-of-bounds read.
  std::vector<double> run(const PrimFunc& f) const {
    std::vector<double> in(kWidth), out(kWidth + 2, -1);
    for (int x = 0; x < kWidth; ++x) in[x] = x + 1;
    Interpreter().run(f, {&in, &out});
    return out;
  }
  static std::vector<double> expected() {
    std::vector<double> want(kWidth + 2, 0.0);
    for (int x = 0; x < kWidth; ++x) want[x + 1] = x + 1;
    return want;
  }
};

TEST(IfThenElseTirTest, SimplifierKeepsItLazy) {
  Pad pad;
  arith::Analyzer ana;
  ana.bind(pad.i, Range(0, kWidth + 2));
  PrimExpr e = ana.simplify(pad.value(pad.i + 0));
  ASSERT_TRUE(e.is<IfThenElseExprNode>()) << to_string(e);
  EXPECT_FALSE(e.is<SelectNode>());
  // Its parts are simplified in place.
  PrimExpr messy =
      if_then_else(pad.i * 2 - pad.i >= 1, BufferLoadNode::make(pad.a, {pad.i + 1 - 2}), 0.0f);
  EXPECT_EQ(to_string(ana.simplify(messy)), "if_then_else(i >= 1, A[i - 1], 0f)");
}

TEST(IfThenElseTirTest, SimplifierDecidesProvenConditions) {
  Pad pad;
  arith::Analyzer ana;
  ana.bind(pad.i, Range(1, kWidth));
  // Every i in [1, 17) is inside: the load needs no guard.
  EXPECT_EQ(to_string(ana.simplify(pad.value(pad.i))), "A[i - 1]");
  ana.bind(pad.i, Range(kWidth + 1, 1));
  EXPECT_EQ(to_string(ana.simplify(pad.value(pad.i))), "0f");
  // Equal values: one of them is evaluated whatever the condition says.
  PrimExpr same = if_then_else(pad.i < 3, BufferLoadNode::make(pad.a, {pad.i}),
                               BufferLoadNode::make(pad.a, {pad.i}));
  EXPECT_TRUE(ana.simplify(same).is<BufferLoadNode>());
}

TEST(IfThenElseTirTest, BoundsCoverBothValues) {
  Var i("i");
  arith::Analyzer ana;
  ana.bind(i, Range(0, 10));
  arith::ConstIntBound b = ana.const_int_bound(if_then_else(i < 5, i + 100, i - 20));
  EXPECT_EQ(b.min_value, -20);
  EXPECT_EQ(b.max_value, 109);
}

TEST(IfThenElseTirTest, StatementSimplifyKeepsTheGuardedLoad) {
  Pad pad;
  PrimFunc f = simplify(pad.func(ForKind::kSerial, 1));
  EXPECT_NE(to_string(f).find("if_then_else("), std::string::npos) << to_string(f);
  EXPECT_EQ(to_string(f).find("select("), std::string::npos) << to_string(f);
  EXPECT_EQ(pad.run(f), Pad::expected());
}

TEST(IfThenElseTirTest, VectorizerGivesAVectorConditionOverLazyValues) {
  Pad pad;
  PrimFunc f = vectorize_loops(pad.func(ForKind::kVectorized, 6));
  const auto* io = f->body.as<ForNode>();
  ASSERT_NE(io, nullptr) << to_string(f);
  const auto* store = io->body.as<BufferStoreNode>();
  ASSERT_NE(store, nullptr) << to_string(f);
  const auto* ite = store->value.as<IfThenElseExprNode>();
  ASSERT_NE(ite, nullptr) << to_string(f);
  EXPECT_EQ(ite->condition.dtype(), DataType::boolean(6));
  EXPECT_EQ(ite->dtype, DataType::f32().with_lanes(6));
  const auto* load = ite->true_value.as<BufferLoadNode>();
  ASSERT_NE(load, nullptr) << to_string(f);
  EXPECT_TRUE(load->indices[0].is<RampNode>()) << to_string(f);
  // Lanes that fall outside A (i = 0 and i = 17) read nothing.
  EXPECT_EQ(pad.run(f), Pad::expected());
}

TEST(IfThenElseTirTest, VectorizerKeepsAnInvariantConditionScalar) {
  Buffer a = Buffer::make("A", DataType::f32(), {8});
  Buffer c = Buffer::make("C", DataType::f32(), {8});
  Var n("n"), i("i");
  Stmt body = ForNode::make(
      i, 0, 8, ForKind::kVectorized,
      BufferStoreNode::make(c, if_then_else(n > 0, BufferLoadNode::make(a, {i}), 1.0f), {i}));
  PrimFunc f = vectorize_loops(PrimFunc::make("f", {a->data, c->data}, {a, c}, body));
  const auto* ite = f->body.as<BufferStoreNode>()->value.as<IfThenElseExprNode>();
  ASSERT_NE(ite, nullptr) << to_string(f);
  EXPECT_TRUE(ite->condition.dtype().is_scalar());
  EXPECT_EQ(ite->dtype, DataType::f32().with_lanes(8));
}

TEST(IfThenElseTirTest, LoweredPaddingReadsOnlyInsideTheInput) {
  Pad pad;
  for (ForKind kind : {ForKind::kSerial, ForKind::kVectorized}) {
    PipelineOptions checked;
    checked.verify = true;
    PrimFunc lowered = lower_tir(pad.func(kind, 6), checked);
    EXPECT_NE(to_string(lowered).find("if_then_else("), std::string::npos) << to_string(lowered);
    EXPECT_EQ(pad.run(lowered), Pad::expected()) << to_string(lowered);
  }
}

}  // namespace
}  // namespace tessel::tir
