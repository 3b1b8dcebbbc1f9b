#include "tir/transforms/verify.h"

#include <gtest/gtest.h>

#include "test_util.h"

namespace tessel::tir {
namespace {

std::string error_of(const PrimFunc& f, const VerifyOptions& opt) {
  try {
    verify(f, opt);
  } catch (const InternalError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected an InternalError";
  return "";
}

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
  std::string msg = error_of(f, {.after_pass = "flatten_buffers", .require_flat = true});
  EXPECT_NE(msg.find("after pass 'flatten_buffers'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'A' has 2 indices"), std::string::npos) << msg;
}

TEST(VerifyTest, UndefinedVar) {
  Buffer a = Buffer::make("A", DataType::f32(), {8});
  Var i("i"), stray("stray");
  PrimFunc f = PrimFunc::make("f", {a->data}, {a},
                              ForNode::make(i, 0, 8, ForKind::kSerial,
                                            BufferStoreNode::make(a, PrimExpr(0.0f), {i + stray})));
  std::string msg = error_of(f, {.after_pass = "unroll_loops"});
  EXPECT_NE(msg.find("var 'stray' is used but not defined"), std::string::npos) << msg;
  EXPECT_NE(msg.find("unroll_loops"), std::string::npos) << msg;
}

TEST(VerifyTest, LoopVarOutOfScope) {
  Buffer a = Buffer::make("A", DataType::f32(), {8});
  Var i("i");
  Stmt loop =
      ForNode::make(i, 0, 8, ForKind::kSerial, BufferStoreNode::make(a, PrimExpr(0.0f), {i}));
  PrimFunc f =
      PrimFunc::make("f", {a->data}, {a},
                     SeqStmtNode::make({loop, BufferStoreNode::make(a, PrimExpr(1.0f), {i})}));
  EXPECT_NE(error_of(f, {}).find("var 'i' is used but not defined"), std::string::npos);
}

TEST(VerifyTest, VectorizedLoopLeft) {
  Buffer a = Buffer::make("A", DataType::f32(), {8});
  Var i("i");
  PrimFunc f = PrimFunc::make(
      "f", {a->data}, {a},
      ForNode::make(i, 0, 8, ForKind::kVectorized, BufferStoreNode::make(a, PrimExpr(0.0f), {i})));
  EXPECT_NO_THROW(verify(f));
  std::string msg =
      error_of(f, {.after_pass = "vectorize_loops", .require_no_vectorized_loops = true});
  EXPECT_NE(msg.find("vectorized loop 'i' is left"), std::string::npos) << msg;
}

TEST(VerifyTest, VectorValueAtScalarIndex) {
  Buffer a = Buffer::make("A", DataType::f32(), {8});
  PrimExpr vec = BroadcastNode::make(PrimExpr(1.0f), 4);
  PrimFunc f = PrimFunc::make("f", {a->data}, {a}, BufferStoreNode::make(a, vec, {0}));
  EXPECT_NE(error_of(f, {}).find("float32x4 value at an index of 1 lanes"), std::string::npos);
}

}  // namespace
}  // namespace tessel::tir
