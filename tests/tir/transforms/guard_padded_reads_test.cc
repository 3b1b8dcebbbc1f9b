// guard_padded_reads: a sum's update of a zero-filled window read becomes a guarded update (with
// a factor or without), other updates stay as they are, and the guarded function computes the
// same sums.
#include "tir/transforms/guard_padded_reads.h"

#include <gtest/gtest.h>

#include "test_util.h"

namespace tessel::tir {
namespace {

using testing::Interpreter;
using testing::ir_equal;

// OUT[i] accumulates over k the window X[i + k - 1] of a 6-long X (zero outside) times W[k].
struct Window {
  Buffer x = Buffer::make("X", DataType::f32(), {6});
  Buffer w = Buffer::make("W", DataType::f32(), {3});
  Buffer out = Buffer::make("OUT", DataType::f32(), {6});
  Var i{"i"}, k{"k"};
  PrimExpr inside() const { return i + k - 1 >= 0 && i + k - 1 < 6; }
  PrimExpr read() const {
    return if_then_else(inside(), BufferLoadNode::make(x, {i + k - 1}), PrimExpr(0.0f));
  }
  PrimExpr acc() const { return BufferLoadNode::make(out, {i}); }
  PrimFunc func(const PrimExpr& update) const {
    Stmt body = ForNode::make(
        i, 0, 6, ForKind::kSerial,
        SeqStmtNode::make(
            {BufferStoreNode::make(out, PrimExpr(0.0f), {i}),
             ForNode::make(k, 0, 3, ForKind::kSerial, BufferStoreNode::make(out, update, {i}))}));
    return PrimFunc::make("f", {x->data, w->data, out->data}, {x, w, out}, body);
  }
  PrimFunc with_update(const PrimFunc& f, const Stmt& update) const {
    Stmt body =
        ForNode::make(i, 0, 6, ForKind::kSerial,
                      SeqStmtNode::make({BufferStoreNode::make(out, PrimExpr(0.0f), {i}),
                                         ForNode::make(k, 0, 3, ForKind::kSerial, update)}));
    return f.with_body(body);
  }
};

TEST(GuardPaddedReadsTest, AWeightedWindowReadBecomesAGuardedUpdate) {
  Window t;
  PrimExpr weight = BufferLoadNode::make(t.w, {t.k});
  PrimFunc f = t.func(t.acc() + t.read() * weight);
  Stmt guarded = IfThenElseNode::make(
      likely(t.inside()),
      BufferStoreNode::make(t.out, t.acc() + BufferLoadNode::make(t.x, {t.i + t.k - 1}) * weight,
                            {t.i}));
  EXPECT_TRUE(ir_equal(guard_padded_reads(f), t.with_update(f, guarded)));

  // The same sums: 1..6 convolved with (1, 2, 3), zero outside.
  std::vector<double> x = {1, 2, 3, 4, 5, 6}, w = {1, 2, 3}, before(6), after(6);
  Interpreter().run(f, {&x, &w, &before});
  Interpreter().run(guard_padded_reads(f), {&x, &w, &after});
  EXPECT_EQ(before, after);
  EXPECT_EQ(after, (std::vector<double>{8, 14, 20, 26, 32, 17}));
}

TEST(GuardPaddedReadsTest, AWindowSumWithoutAFactorAndTheOperandsSwapped) {
  Window t;
  PrimFunc f = t.func(t.read() + t.acc());
  Stmt guarded = IfThenElseNode::make(
      likely(t.inside()),
      BufferStoreNode::make(t.out, t.acc() + BufferLoadNode::make(t.x, {t.i + t.k - 1}), {t.i}));
  EXPECT_TRUE(ir_equal(guard_padded_reads(f), t.with_update(f, guarded)));
}

// A fill other than zero, a read added to another element than the one stored, and a window read
// that the update does not add (here the update is a difference) are left alone.
TEST(GuardPaddedReadsTest, OtherUpdatesAreLeftAlone) {
  Window t;
  PrimExpr one_filled =
      if_then_else(t.inside(), BufferLoadNode::make(t.x, {t.i + t.k - 1}), PrimExpr(1.0f));
  PrimExpr other_element = BufferLoadNode::make(t.out, {t.k});
  for (PrimExpr update : {t.acc() + one_filled, other_element + t.read(),
                          t.acc() + t.read() - BufferLoadNode::make(t.w, {t.k})}) {
    PrimFunc f = t.func(update);
    EXPECT_TRUE(guard_padded_reads(f).same_as(f)) << to_string(f);
  }
}

// A window whose edge runs across a vectorized loop's lanes keeps its select: a guard there would
// make the loop's guarded parts serial (or, unpartitioned, could not be vectorized at all).
TEST(GuardPaddedReadsTest, AConditionOnVectorLanesStaysASelect) {
  Window t;
  PrimFunc f = t.func(t.acc() + t.read());
  const auto* outer = f->body.as<ForNode>();
  Stmt vector_loop =
      ForNode::make(outer->loop_var, outer->min, outer->extent, ForKind::kVectorized, outer->body);
  PrimFunc vectorized = f.with_body(vector_loop);
  EXPECT_TRUE(guard_padded_reads(vectorized).same_as(vectorized));
}

// Inside unrolled loops of more than 64 iterations in all the update stays a select: each loop
// that partitioning splits around it would copy them.
TEST(GuardPaddedReadsTest, ALargeUnrolledBodyStaysASelect) {
  Window t;
  Var u("u");
  Stmt update = BufferStoreNode::make(t.out, t.acc() + t.read(), {t.i});
  auto func = [&](int64_t unrolled) {
    Stmt body =
        ForNode::make(t.i, 0, 6, ForKind::kSerial,
                      ForNode::make(t.k, 0, 3, ForKind::kSerial,
                                    ForNode::make(u, 0, unrolled, ForKind::kUnrolled, update)));
    return PrimFunc::make("f", {t.x->data, t.w->data, t.out->data}, {t.x, t.w, t.out}, body);
  };
  PrimFunc small = func(64), large = func(65);
  EXPECT_FALSE(guard_padded_reads(small).same_as(small));
  EXPECT_TRUE(guard_padded_reads(large).same_as(large));
}

}  // namespace
}  // namespace tessel::tir
