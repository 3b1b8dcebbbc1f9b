#include "tir/transforms/flatten_buffers.h"

#include <gtest/gtest.h>

#include "test_util.h"

namespace tessel::tir {
namespace {

using testing::ir_equal;

// A flat view of `b` sharing its data var, as flatten_buffers promises.
Buffer flat_view(const Buffer& b, PrimExpr size) {
  return make_node<BufferNode>(b->data, b->dtype, std::vector<PrimExpr>{size},
                               std::vector<PrimExpr>{}, b->name, b->scope);
}

TEST(FlattenBuffersTest, RowMajorParamsAndAllocations) {
  Var n("n");
  Buffer a = Buffer::make("A", DataType::f32(), {n, 16});
  Buffer b = Buffer::make("B", DataType::f32(), {n, 16});
  Buffer t = Buffer::make("T", DataType::f32(), {4, 16}, MemScope::kLocal);
  Var i("i"), j("j");
  // Build the N-d input by hand with one index per dimension.
  Stmt fill = BufferStoreNode::make(t, BufferLoadNode::make(a, {i, j}) * 2.0f, {i % 4, j});
  Stmt use = BufferStoreNode::make(b, BufferLoadNode::make(t, {i % 4, j}), {i, j});
  Stmt body = AllocateNode::make(
      t, ForNode::make(i, 0, n, ForKind::kSerial,
                       ForNode::make(j, 0, 16, ForKind::kSerial, SeqStmtNode::make({fill, use}))));
  PrimFunc before = PrimFunc::make("f", {a->data, b->data}, {a, b}, body);

  Buffer fa = flat_view(a, n * 16), fb = flat_view(b, n * 16), ft = flat_view(t, 64);
  Stmt efill =
      BufferStoreNode::make(ft, BufferLoadNode::make(fa, {i * 16 + j}) * 2.0f, {(i % 4) * 16 + j});
  Stmt euse = BufferStoreNode::make(fb, BufferLoadNode::make(ft, {(i % 4) * 16 + j}), {i * 16 + j});
  Stmt ebody = AllocateNode::make(
      ft,
      ForNode::make(i, 0, n, ForKind::kSerial,
                    ForNode::make(j, 0, 16, ForKind::kSerial, SeqStmtNode::make({efill, euse}))));
  PrimFunc expected = PrimFunc::make("f", {a->data, b->data}, {a, b}, ebody);

  PrimFunc after = flatten_buffers(before);
  EXPECT_TRUE(ir_equal(after, expected));
  // Parameters keep their N-d buffers; the body's flat buffers share their data vars.
  EXPECT_TRUE(after->buffers[0].same_as(a));
  const auto* seq = after->body.as<AllocateNode>()
                        ->body.as<ForNode>()
                        ->body.as<ForNode>()
                        ->body.as<SeqStmtNode>();
  const auto* load = seq->seq[0].as<BufferStoreNode>()->value.as<MulNode>()->a.as<BufferLoadNode>();
  EXPECT_TRUE(load->buffer->data.same_as(a->data));
  EXPECT_EQ(load->buffer->shape.size(), 1u);
}

TEST(FlattenBuffersTest, StridedBufferUsesStrides) {
  Buffer a = Buffer::make("A", DataType::f32(), {4, 8}, MemScope::kGlobal, {1, 4});
  Buffer b = Buffer::make("B", DataType::f32(), {32});
  Var i("i"), j("j");
  auto body = [&](const Buffer& A, PrimExpr idx) {
    return ForNode::make(
        i, 0, 4, ForKind::kSerial,
        ForNode::make(j, 0, 8, ForKind::kSerial,
                      BufferStoreNode::make(b, BufferLoadNode::make(A, {idx}), {i * 8 + j})));
  };
  Stmt nd = ForNode::make(
      i, 0, 4, ForKind::kSerial,
      ForNode::make(j, 0, 8, ForKind::kSerial,
                    BufferStoreNode::make(b, BufferLoadNode::make(a, {i, j}), {i * 8 + j})));
  PrimFunc before = PrimFunc::make("f", {a->data, b->data}, {a, b}, nd);
  // The storage spans (4-1)*1 + (8-1)*4 + 1 = 32 elements.
  PrimFunc expected = before.with_body(body(flat_view(a, 32), i * 1 + j * 4));
  EXPECT_TRUE(ir_equal(flatten_buffers(before), expected));
}

TEST(FlattenBuffersTest, FlatBuffersAreLeftAlone) {
  Buffer a = Buffer::make("A", DataType::f32(), {8});
  Var i("i");
  PrimFunc f = PrimFunc::make(
      "f", {a->data}, {a},
      ForNode::make(i, 0, 8, ForKind::kSerial, BufferStoreNode::make(a, PrimExpr(1.0f), {i})));
  EXPECT_TRUE(flatten_buffers(f).same_as(f));
}

}  // namespace
}  // namespace tessel::tir
