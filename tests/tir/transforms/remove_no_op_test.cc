#include "tir/transforms/remove_no_op.h"

#include <gtest/gtest.h>

#include "test_util.h"

namespace tessel::tir {
namespace {

using testing::ir_equal;

TEST(RemoveNoOpTest, DropsEmptyStatements) {
  Buffer a = Buffer::make("A", DataType::f32(), {8});
  Buffer t = Buffer::make("T", DataType::f32(), {8}, MemScope::kLocal);
  Var i("i"), j("j"), x("x");
  Stmt work = BufferStoreNode::make(a, PrimExpr(1.0f), {i});
  Stmt body = SeqStmtNode::make({
      EvaluateNode::make(0),
      ForNode::make(i, 0, 8, ForKind::kSerial, SeqStmtNode::make({work, EvaluateNode::make(0)})),
      ForNode::make(j, 0, 8, ForKind::kSerial, EvaluateNode::make(1.0f)),
      AllocateNode::make(t, EvaluateNode::make(0)),
      LetStmtNode::make(x, 3, EvaluateNode::make(0)),
      IfThenElseNode::make(likely(x < 3), EvaluateNode::make(0), EvaluateNode::make(0)),
  });
  PrimFunc f = PrimFunc::make("f", {a->data}, {a}, body);
  PrimFunc expected = f.with_body(ForNode::make(i, 0, 8, ForKind::kSerial, work));
  EXPECT_TRUE(ir_equal(remove_no_op(f), expected));
}

TEST(RemoveNoOpTest, DropsSelfCopiesAndEmptyBranches) {
  Buffer a = Buffer::make("A", DataType::f32(), {8});
  Var i("i");
  Stmt copy_self = BufferStoreNode::make(a, BufferLoadNode::make(a, {i + 1}), {i + 1});
  Stmt shift = BufferStoreNode::make(a, BufferLoadNode::make(a, {i + 1}), {i});
  PrimExpr cond = i < 4;
  Stmt body = ForNode::make(
      i, 0, 7, ForKind::kSerial,
      SeqStmtNode::make({copy_self, IfThenElseNode::make(cond, EvaluateNode::make(0), shift)}));
  PrimFunc f = PrimFunc::make("f", {a->data}, {a}, body);
  PrimFunc expected =
      f.with_body(ForNode::make(i, 0, 7, ForKind::kSerial, IfThenElseNode::make(!cond, shift)));
  EXPECT_TRUE(ir_equal(remove_no_op(f), expected));
}

TEST(RemoveNoOpTest, ZeroTripLoopIsRemovedButWorkStays) {
  Buffer a = Buffer::make("A", DataType::f32(), {8});
  Var i("i"), j("j");
  Stmt work = BufferStoreNode::make(a, PrimExpr(1.0f), {j});
  Stmt empty_loop_work = BufferStoreNode::make(a, PrimExpr(1.0f), {i});
  Stmt body = SeqStmtNode::make({ForNode::make(i, 0, 0, ForKind::kSerial, empty_loop_work),
                                 ForNode::make(j, 0, 8, ForKind::kSerial, work)});
  PrimFunc f = PrimFunc::make("f", {a->data}, {a}, body);
  PrimFunc expected = f.with_body(ForNode::make(j, 0, 8, ForKind::kSerial, work));
  EXPECT_TRUE(ir_equal(remove_no_op(f), expected));
}

}  // namespace
}  // namespace tessel::tir
