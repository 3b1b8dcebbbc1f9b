#include "tir/transforms/unroll_loops.h"

#include <gtest/gtest.h>

#include "test_util.h"
#include "tests/common/expect_error.h"

namespace tessel::tir {
namespace {

using tessel::testing::expect_error;
using testing::ir_equal;

TEST(UnrollLoopsTest, UnrolledLoopBecomesCopies) {
  Buffer a = Buffer::make("A", DataType::f32(), {8});
  Var i("i");
  auto store = [&](PrimExpr idx) { return BufferStoreNode::make(a, PrimExpr(0.0f), {idx}); };
  PrimFunc f =
      PrimFunc::make("f", {a->data}, {a}, ForNode::make(i, 2, 3, ForKind::kUnrolled, store(i * 2)));
  // substitute() rebuilds nodes without folding; simplify folds later in the pipeline.
  auto twice = [](int k) { return MulNode::make(PrimExpr(k), PrimExpr(2)); };
  PrimFunc expected =
      f.with_body(SeqStmtNode::make({store(twice(2)), store(twice(3)), store(twice(4))}));
  EXPECT_TRUE(ir_equal(unroll_loops(f), expected));
}

TEST(UnrollLoopsTest, CopiesGetFreshInnerLoopVars) {
  Buffer a = Buffer::make("A", DataType::f32(), {8});
  Var i("i"), j("j");
  Stmt inner = ForNode::make(j, 0, 4, ForKind::kSerial,
                             BufferStoreNode::make(a, PrimExpr(0.0f), {i * 4 + j}));
  PrimFunc f =
      PrimFunc::make("f", {a->data}, {a}, ForNode::make(i, 0, 2, ForKind::kUnrolled, inner));
  PrimFunc unrolled = unroll_loops(f);
  const auto* seq = unrolled->body.as<SeqStmtNode>();
  ASSERT_NE(seq, nullptr);
  ASSERT_EQ(seq->seq.size(), 2u);
  const auto* first = seq->seq[0].as<ForNode>();
  const auto* second = seq->seq[1].as<ForNode>();
  EXPECT_FALSE(first->loop_var.same_as(second->loop_var));
  EXPECT_FALSE(first->loop_var.same_as(j));
}

TEST(UnrollLoopsTest, NonConstantExtentIsAnError) {
  Var n("n");
  Buffer a = Buffer::make("A", DataType::f32(), {n});
  Var i("i");
  PrimFunc f = PrimFunc::make(
      "f", {a->data}, {a},
      ForNode::make(i, 0, n, ForKind::kUnrolled, BufferStoreNode::make(a, PrimExpr(0.0f), {i})));
  expect_error([&] { unroll_loops(f); }, {"cannot unroll loop 'i'"});
}

TEST(UnrollLoopsTest, AutoUnrollOnlySmallInnermostSerialLoops) {
  Buffer a = Buffer::make("A", DataType::f32(), {64});
  Var i("i"), j("j");
  auto store = [&](PrimExpr idx) { return BufferStoreNode::make(a, PrimExpr(0.0f), {idx}); };
  PrimFunc f =
      PrimFunc::make("f", {a->data}, {a},
                     ForNode::make(i, 0, 16, ForKind::kSerial,
                                   ForNode::make(j, 0, 2, ForKind::kSerial, store(i * 2 + j))));
  EXPECT_TRUE(unroll_loops(f).same_as(f));  // off by default
  PrimFunc expected =
      f.with_body(ForNode::make(i, 0, 16, ForKind::kSerial,
                                SeqStmtNode::make({store(AddNode::make(i * 2, PrimExpr(0))),
                                                   store(AddNode::make(i * 2, PrimExpr(1)))})));
  EXPECT_TRUE(ir_equal(unroll_loops(f, {.auto_max_extent = 4}), expected));
}

}  // namespace
}  // namespace tessel::tir
