#include "tir/transforms/vectorize_loops.h"

#include <gtest/gtest.h>

#include "test_util.h"
#include "tests/common/expect_error.h"

namespace tessel::tir {
namespace {

using tessel::testing::expect_error;
using testing::Interpreter;
using testing::ir_equal;

PrimExpr ramp(PrimExpr base, int lanes) { return RampNode::make(std::move(base), 1, lanes); }

TEST(VectorizeLoopsTest, ElementwiseBody) {
  Buffer a = Buffer::make("A", DataType::f32(), {64});
  Buffer b = Buffer::make("B", DataType::f32(), {64});
  Var s("s", DataType::f32());
  Var io("io"), ii("ii");
  PrimExpr idx = io * 8 + ii;
  Stmt body = BufferStoreNode::make(
      b, select(BufferLoadNode::make(a, {idx}) > 0.0f, exp(BufferLoadNode::make(a, {idx})), s),
      {idx});
  PrimFunc f = PrimFunc::make("f", {a->data, b->data}, {a, b},
                              ForNode::make(io, 0, 8, ForKind::kSerial,
                                            ForNode::make(ii, 0, 8, ForKind::kVectorized, body)));

  PrimExpr vidx = ramp(io * 8 + 0, 8);
  PrimExpr va = BufferLoadNode::make(a, {vidx});
  Stmt vbody = BufferStoreNode::make(
      b,
      SelectNode::make(GTNode::make(va, BroadcastNode::make(PrimExpr(0.0f), 8)),
                       CallNode::make(DataType::f32().with_lanes(8), Intrinsic::exp, {va}),
                       BroadcastNode::make(s, 8)),
      {vidx});
  PrimFunc expected = f.with_body(ForNode::make(io, 0, 8, ForKind::kSerial, vbody));
  EXPECT_TRUE(ir_equal(vectorize_loops(f), expected));
}

// An int32 loop var widened into an int64 index (a statistic's partials for a block of rows, the
// rows indexed in int64) stays a ramp: contiguous, and a read-modify-write of distinct elements.
TEST(VectorizeLoopsTest, WidenedLoopVarInAnIndexStaysARamp) {
  Buffer acc = Buffer::make("acc", DataType::f32(), {32});
  Var i("i", DataType::i64()), j("j");
  PrimExpr idx = i * int64_t{16} + cast(DataType::i64(), j);
  Stmt body = BufferStoreNode::make(acc, BufferLoadNode::make(acc, {idx}) + 1.0f, {idx});
  PrimFunc f = PrimFunc::make("f", {acc->data}, {acc},
                              ForNode::make(i, int64_t{0}, int64_t{2}, ForKind::kSerial,
                                            ForNode::make(j, 0, 16, ForKind::kVectorized, body)));
  PrimFunc v = vectorize_loops(f);
  const auto* store = v->body.as<ForNode>()->body.as<BufferStoreNode>();
  ASSERT_NE(store, nullptr) << to_string(v);
  EXPECT_NE(store->indices.back().as<RampNode>(), nullptr) << to_string(v);
  std::vector<double> want(32, 2.0), got(32, 1.0);
  Interpreter().run(v, {&got});
  EXPECT_EQ(got, want);
  // Narrowed, or to an unsigned type, it stays a cast of the ramp.
  for (DataType to : {DataType::i32(), DataType::u32()}) {
    Buffer out = Buffer::make("out", to, {16});
    Var k("k", DataType::i64());
    PrimFunc g = PrimFunc::make("g", {out->data}, {out},
                                ForNode::make(k, int64_t{0}, int64_t{16}, ForKind::kVectorized,
                                              BufferStoreNode::make(out, cast(to, k), {k})));
    PrimFunc gv = vectorize_loops(g);
    const auto* cast_store = gv->body.as<BufferStoreNode>();
    ASSERT_NE(cast_store, nullptr) << to_string(gv);
    EXPECT_NE(cast_store->value.as<CastNode>(), nullptr) << to_string(gv);
  }
}

// C[i] += A[i, k] * B[k] vectorized over i: the serial k loop stays around the vector body.
PrimFunc matvec(ForKind i_kind) {
  Buffer a = Buffer::make("A", DataType::f32(), {64});
  Buffer b = Buffer::make("B", DataType::f32(), {8});
  Buffer c = Buffer::make("C", DataType::f32(), {8});
  Var i("i"), k("k");
  Stmt update =
      BufferStoreNode::make(c,
                            BufferLoadNode::make(c, {i}) +
                                BufferLoadNode::make(a, {i * 8 + k}) * BufferLoadNode::make(b, {k}),
                            {i});
  Stmt body = ForNode::make(i, 0, 8, i_kind, ForNode::make(k, 0, 8, ForKind::kSerial, update));
  return PrimFunc::make("matvec", {a->data, b->data, c->data}, {a, b, c}, body);
}

TEST(VectorizeLoopsTest, ReductionInsideVectorLoopMatchesScalar) {
  PrimFunc vectorized = vectorize_loops(matvec(ForKind::kVectorized));
  const auto* k_loop = vectorized->body.as<ForNode>();
  ASSERT_NE(k_loop, nullptr) << to_string(vectorized);
  EXPECT_EQ(k_loop->kind, ForKind::kSerial);
  EXPECT_TRUE(k_loop->body.as<BufferStoreNode>()->value.dtype().is_vector());

  std::vector<double> a(64), b(8), c_ref(8, 1.0), c_vec(8, 1.0);
  for (int x = 0; x < 64; ++x) a[x] = x % 7 - 3;
  for (int x = 0; x < 8; ++x) b[x] = x + 1;
  Interpreter().run(matvec(ForKind::kSerial), {&a, &b, &c_ref});
  Interpreter().run(vectorized, {&a, &b, &c_vec});
  EXPECT_EQ(c_ref, c_vec);
}

TEST(VectorizeLoopsTest, NonConstantExtentIsAnError) {
  Var n("n");
  Buffer a = Buffer::make("A", DataType::f32(), {n});
  Var i("i");
  PrimFunc f = PrimFunc::make(
      "f", {a->data}, {a},
      ForNode::make(i, 0, n, ForKind::kVectorized, BufferStoreNode::make(a, PrimExpr(0.0f), {i})));
  expect_error([&] { vectorize_loops(f); }, {"cannot vectorize loop 'i'", "not a constant",
                                             "choose a split factor that divides the extent"});
}

TEST(VectorizeLoopsTest, GuardInsideVectorLoopIsAnError) {
  Var n("n");
  Buffer a = Buffer::make("A", DataType::f32(), {n});
  Var io("io"), ii("ii");
  Stmt guarded = IfThenElseNode::make(likely(io * 8 + ii < n),
                                      BufferStoreNode::make(a, PrimExpr(0.0f), {io * 8 + ii}));
  PrimFunc f =
      PrimFunc::make("f", {a->data}, {a},
                     ForNode::make(io, 0, ceildiv(n, 8), ForKind::kSerial,
                                   ForNode::make(ii, 0, 8, ForKind::kVectorized, guarded)));
  expect_error([&] { vectorize_loops(f); },
               {"cannot vectorize loop 'ii'", "guard", "keep loop_partition on"});
}

TEST(VectorizeLoopsTest, LoopCarriedDependenceIsAnError) {
  Buffer a = Buffer::make("A", DataType::f32(), {9});
  Var i("i");
  PrimFunc f = PrimFunc::make(
      "f", {a->data}, {a},
      ForNode::make(i, 0, 8, ForKind::kVectorized,
                    BufferStoreNode::make(a, BufferLoadNode::make(a, {i}), {i + 1})));
  expect_error([&] { vectorize_loops(f); }, {"buffer 'A' is accessed at different positions"});
}

TEST(VectorizeLoopsTest, InnerLoopBoundsDependingOnVarIsAnError) {
  Buffer a = Buffer::make("A", DataType::f32(), {64});
  Var i("i"), k("k");
  PrimFunc f = PrimFunc::make(
      "f", {a->data}, {a},
      ForNode::make(i, 0, 8, ForKind::kVectorized,
                    ForNode::make(k, 0, i, ForKind::kSerial,
                                  BufferStoreNode::make(a, PrimExpr(0.0f), {i * 8 + k}))));
  expect_error([&] { vectorize_loops(f); }, {"bounds of the inner loop 'k' depend on it"});
}

}  // namespace
}  // namespace tessel::tir
