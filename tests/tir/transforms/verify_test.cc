#include "tir/transforms/verify.h"

#include <gtest/gtest.h>

#include "test_util.h"
#include "tests/common/expect_error.h"

namespace tessel::tir {
namespace {

using tessel::testing::expect_error;

TEST(VerifyTest, AcceptsWellFormedFunction) {
  Var n("n");
  Buffer a = Buffer::make("A", DataType::f32(), {n, 4});
  Buffer t = Buffer::make("T", DataType::f32(), {4}, MemScope::kLocal);
  Var i("i"), j("j"), x("x");
  Stmt body = AllocateNode::make(
      t, ForNode::make(
             i, 0, n, ForKind::kSerial,
             LetStmtNode::make(
                 x, i * 4,
                 ForNode::make(j, 0, 4, ForKind::kSerial,
                               BufferStoreNode::make(a, BufferLoadNode::make(t, {j}), {i, j})))));
  PrimFunc f = PrimFunc::make("f", {a->data}, {a}, body);
  EXPECT_NO_THROW(verify(f));
  expect_error<InternalError>(
      [&] { verify(f, {.after_pass = "flatten_buffers", .require_flat = true}); },
      {"after pass 'flatten_buffers'", "'A' has 2 indices"});
}

TEST(VerifyTest, UndefinedVar) {
  Buffer a = Buffer::make("A", DataType::f32(), {8});
  Var i("i"), stray("stray");
  PrimFunc f = PrimFunc::make("f", {a->data}, {a},
                              ForNode::make(i, 0, 8, ForKind::kSerial,
                                            BufferStoreNode::make(a, PrimExpr(0.0f), {i + stray})));
  expect_error<InternalError>([&] { verify(f, {.after_pass = "unroll_loops"}); },
                              {"var 'stray' is used but not defined", "unroll_loops"});
}

TEST(VerifyTest, LoopVarOutOfScope) {
  Buffer a = Buffer::make("A", DataType::f32(), {8});
  Var i("i");
  Stmt loop =
      ForNode::make(i, 0, 8, ForKind::kSerial, BufferStoreNode::make(a, PrimExpr(0.0f), {i}));
  PrimFunc f =
      PrimFunc::make("f", {a->data}, {a},
                     SeqStmtNode::make({loop, BufferStoreNode::make(a, PrimExpr(1.0f), {i})}));
  expect_error<InternalError>([&] { verify(f); }, {"var 'i' is used but not defined"});
}

TEST(VerifyTest, VectorizedLoopLeft) {
  Buffer a = Buffer::make("A", DataType::f32(), {8});
  Var i("i");
  PrimFunc f = PrimFunc::make(
      "f", {a->data}, {a},
      ForNode::make(i, 0, 8, ForKind::kVectorized, BufferStoreNode::make(a, PrimExpr(0.0f), {i})));
  EXPECT_NO_THROW(verify(f));
  expect_error<InternalError>(
      [&] { verify(f, {.after_pass = "vectorize_loops", .require_no_vectorized_loops = true}); },
      {"vectorized loop 'i' is left"});
}

TEST(VerifyTest, VectorValueAtScalarIndex) {
  Buffer a = Buffer::make("A", DataType::f32(), {8});
  PrimExpr vec = BroadcastNode::make(PrimExpr(1.0f), 4);
  PrimFunc f = PrimFunc::make("f", {a->data}, {a}, BufferStoreNode::make(a, vec, {0}));
  expect_error<InternalError>([&] { verify(f); }, {"float32x4 value at an index of 1 lanes"});
}

}  // namespace
}  // namespace tessel::tir
