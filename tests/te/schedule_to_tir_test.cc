// The loop nests schedule_to_tir builds, compared structurally with hand-written IR.
#include "te/schedule_to_tir.h"

#include <gtest/gtest.h>

#include "ir/printer.h"
#include "ir/structural_equal.h"
#include "te/operation.h"

namespace tessel::te {
namespace {

TEST(ScheduleToTirTest, ReductionInitBeforeTheReduceLoop) {
  Tensor A = placeholder({4, 4}, DataType::f32(), "A");
  Tensor B = placeholder({4, 4}, DataType::f32(), "B");
  IterVar k = reduce_axis(0, 4, "k");
  Tensor C = compute({4, 4}, [&](Expr i, Expr j) { return sum(A(i, k) * B(k, j), {k}); }, "C");
  PrimFunc f = schedule_to_tir(create_schedule({C}), {A, B, C}, "mm");

  Buffer a = f->buffers[0], b = f->buffers[1], c = f->buffers[2];
  Var i("i"), j("j"), kk("k");
  Stmt update =
      BufferStoreNode::make(c,
                            BufferLoadNode::make(c, {i, j}) +
                                BufferLoadNode::make(a, {i, kk}) * BufferLoadNode::make(b, {kk, j}),
                            {i, j});
  Stmt expected = ForNode::make(
      i, 0, 4, ForKind::kSerial,
      ForNode::make(j, 0, 4, ForKind::kSerial,
                    SeqStmtNode::make({BufferStoreNode::make(c, PrimExpr(0.0f), {i, j}),
                                       ForNode::make(kk, 0, 4, ForKind::kSerial, update)})));
  EXPECT_TRUE(structural_equal(f->body, expected, true)) << f << "\nexpected:\n" << expected;
}

TEST(ScheduleToTirTest, InitLoopsCopyTheInnerDataParallelLoops) {
  Tensor A = placeholder({8, 8}, DataType::f32(), "A");
  IterVar k = reduce_axis(0, 8, "k");
  Tensor C = compute({8, 8}, [&](Expr i, Expr j) { return sum(A(i, k) * A(k, j), {k}); }, "C");
  Schedule s = create_schedule({C});
  auto [io, jo, ii, ji] = s[C].tile(C.axis(0), C.axis(1), 4, 4);
  s[C].reorder({io, jo, k, ii, ji});
  s[C].vectorize(ji);
  std::string ir = to_string(schedule_to_tir(s, {A, C}, "f"));
  // The init nest sits before the k loop and keeps the vectorize annotation.
  size_t init = ir.find("vectorized for (j.inner.init, 0, 4)");
  size_t kloop = ir.find("for (k, 0, 8)");
  ASSERT_NE(init, std::string::npos) << ir;
  ASSERT_NE(kloop, std::string::npos) << ir;
  EXPECT_LT(init, kloop) << ir;
  EXPECT_EQ(ir.find("likely"), std::string::npos) << "4 divides 8: no guard expected\n" << ir;
}

TEST(ScheduleToTirTest, NonDividingSplitIsGuarded) {
  Tensor A = placeholder({10}, DataType::f32(), "A");
  Tensor B = compute({10}, [&](Expr i) { return A(i) + 1.0f; }, "B");
  Schedule s = create_schedule({B});
  s[B].split(B.axis(0), 4);
  std::string ir = to_string(schedule_to_tir(s, {A, B}, "f"));
  EXPECT_NE(ir.find("for (i.outer, 0, 3)"), std::string::npos) << ir;
  size_t guard = ir.find("if (likely(");
  ASSERT_NE(guard, std::string::npos) << ir;
  EXPECT_NE(ir.find("< 10))", guard), std::string::npos) << ir;
}

TEST(ScheduleToTirTest, AnUnloweredTeNodeIsAnInternalErrorNamingIt) {
  // A reducer whose combine reads a tensor: the read is not part of the body, so nothing lowers it.
  Tensor A = placeholder({4, 4}, DataType::f32(), "A");
  Tensor W = placeholder({1}, DataType::f32(), "W");
  Reducer weighted(
      "weighted", [&](PrimExpr x, PrimExpr y) { return x + y * W(0); },
      [](DataType t) { return make_zero(t); });
  IterVar k = reduce_axis(0, 4, "k");
  Tensor S = compute({4}, [&](Expr i) { return weighted(A(i, k), {k}); }, "S");
  try {
    schedule_to_tir(create_schedule({S}), {A, S}, "f");
    FAIL() << "expected an InternalError";
  } catch (const InternalError& e) {
    EXPECT_NE(std::string(e.what()).find("schedule_to_tir left a read of tensor 'W' in 'f'"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace tessel::te
