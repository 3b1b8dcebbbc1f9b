#include "tir/transforms/loop_partition.h"

#include <gtest/gtest.h>

#include "ir/functor.h"
#include "test_util.h"
#include "tir/arith/analyzer.h"
#include "tir/transforms/vectorize_loops.h"

namespace tessel::tir {
namespace {

using testing::Interpreter;
using testing::ir_equal;

// B[x] = A[x] * 2 for x < n, split by 8 with the inner loop of kind `inner`.
PrimFunc guarded_split(PrimExpr n, ForKind inner, Buffer* a_out = nullptr, Buffer* b_out = nullptr,
                       ForKind outer = ForKind::kSerial) {
  Buffer a = Buffer::make("A", DataType::f32(), {n});
  Buffer b = Buffer::make("B", DataType::f32(), {n});
  Var io("io"), ii("ii");
  PrimExpr x = io * 8 + ii;
  Stmt store = BufferStoreNode::make(b, BufferLoadNode::make(a, {x}) * 2.0f, {x});
  Stmt body =
      ForNode::make(io, 0, ceildiv(n, 8), outer,
                    ForNode::make(ii, 0, 8, inner, IfThenElseNode::make(likely(x < n), store)));
  if (a_out) *a_out = a;
  if (b_out) *b_out = b;
  return PrimFunc::make("f", {a->data, b->data}, {a, b}, body);
}

TEST(LoopPartitionTest, ConstantExtentSplitsMainAndTail) {
  Buffer a, b;
  PrimFunc f = guarded_split(100, ForKind::kSerial, &a, &b);
  Var io("io"), ii("ii"), jo("io"), ji("ii");
  auto store = [&](PrimExpr x) {
    return BufferStoreNode::make(b, BufferLoadNode::make(a, {x}) * 2.0f, {x});
  };
  Stmt main = ForNode::make(io, 0, 12, ForKind::kSerial,
                            ForNode::make(ii, 0, 8, ForKind::kSerial, store(io * 8 + ii)));
  Stmt tail = ForNode::make(
      jo, 12, 1, ForKind::kSerial,
      ForNode::make(ji, 0, 8, ForKind::kSerial,
                    IfThenElseNode::make(likely(jo * 8 + ji < 100), store(jo * 8 + ji))));
  EXPECT_TRUE(ir_equal(loop_partition(f), f.with_body(SeqStmtNode::make({main, tail}))));
}

// A parallel loop runs as equal chunks of its iterations, one per thread: its partial last tile
// stays in the loop (a branch of its body) where that shortens the longest chunk, and runs after
// the main part, a launch of its own, where it does not.
TEST(LoopPartitionTest, AParallelLoopKeepsItsTailWhereThatShortensTheLongestChunk) {
  auto parallel_split = [](int64_t n) {
    return guarded_split(n, ForKind::kSerial, nullptr, nullptr, ForKind::kParallel);
  };
  // 7 whole tiles and a partial one on two threads: chunks of 4 against 4 and the tail after.
  PrimFunc f = parallel_split(60);
  PrimFunc one = loop_partition(f, 2);
  const auto* loop = one->body.as<ForNode>();
  ASSERT_NE(loop, nullptr) << to_string(one);
  EXPECT_EQ(loop->kind, ForKind::kParallel);
  EXPECT_TRUE(is_const_int(loop->extent, 8)) << to_string(one);
  const auto* branch = loop->body.as<IfThenElseNode>();
  ASSERT_NE(branch, nullptr) << to_string(one);
  ASSERT_TRUE(branch->else_case.defined());
  // The main part has no guard; the tail's is on its one iteration, io = 7, for simplify to decide.
  EXPECT_EQ(to_string(branch->then_case).find("likely"), std::string::npos) << to_string(one);
  EXPECT_NE(to_string(branch->else_case).find("7*8"), std::string::npos) << to_string(one);
  std::vector<double> a(60), want(60, -1), got(60, -1);
  for (int64_t x = 0; x < 60; ++x) a[x] = static_cast<double>(x) - 3;
  Interpreter().run(f, {&a, &want});
  Interpreter().run(one, {&a, &got});
  EXPECT_EQ(want, got);
  // 10 whole tiles and a partial one: chunks of 5 and the tail (6 at most) against 6.
  PrimFunc eleven = loop_partition(parallel_split(84), 2);
  const auto* apart = eleven->body.as<SeqStmtNode>();
  ASSERT_NE(apart, nullptr);
  EXPECT_EQ(apart->seq.size(), 2u);
  // Without the threads' count the parts stay apart.
  EXPECT_NE(loop_partition(f)->body.as<SeqStmtNode>(), nullptr);
}

TEST(LoopPartitionTest, SymbolicExtentKeepsVectorMainAndScalarTail) {
  Var n("n");
  PrimFunc f = guarded_split(n, ForKind::kVectorized);
  PrimFunc parts = loop_partition(f);
  const auto* seq = parts->body.as<SeqStmtNode>();
  ASSERT_NE(seq, nullptr) << to_string(parts);
  ASSERT_EQ(seq->seq.size(), 2u) << to_string(parts);
  const auto* main = seq->seq[0].as<ForNode>();
  const auto* tail = seq->seq[1].as<ForNode>();
  arith::Analyzer ana;
  ana.bind(n, Range(0, 1 << 20));
  EXPECT_TRUE(ana.can_prove_equal(main->extent, floordiv(n, 8))) << to_string(parts);
  // The main part has no guard and stays vectorized; the tail keeps it and runs serially.
  const auto* main_inner = main->body.as<ForNode>();
  EXPECT_EQ(main_inner->kind, ForKind::kVectorized);
  EXPECT_TRUE(main_inner->body.is<BufferStoreNode>()) << to_string(parts);
  const auto* tail_inner = tail->body.as<ForNode>();
  EXPECT_EQ(tail_inner->kind, ForKind::kSerial);
  EXPECT_TRUE(tail_inner->body.is<IfThenElseNode>());
  EXPECT_FALSE(tail->loop_var.same_as(main->loop_var));

  // The partitioned loop vectorizes, and computes what the original loop does.
  PrimFunc vectorized = vectorize_loops(parts);
  for (int64_t size : {0, 5, 8, 37, 64}) {
    std::vector<double> a(size), b_ref(size, -1), b_got(size, -1);
    for (int64_t x = 0; x < size; ++x) a[x] = static_cast<double>(x) - 3;
    Interpreter().run(f, {&a, &b_ref}, {{n, size}});
    Interpreter().run(vectorized, {&a, &b_got}, {{n, size}});
    EXPECT_EQ(b_ref, b_got) << "n = " << size;
  }
}

TEST(LoopPartitionTest, GuardedVectorLoopKeepsAConstantWidthVectorMain) {
  // With n = 5 < 8 the outer loop has one iteration: the vectorized loop itself is split.
  Buffer a, b;
  PrimFunc f = guarded_split(5, ForKind::kVectorized, &a, &b);
  PrimFunc single = f.with_body(f->body.as<ForNode>()->body);  // io's extent-1 loop simplified away
  single =
      single.with_body(substitute(single->body, {{f->body.as<ForNode>()->loop_var, PrimExpr(0)}}));
  PrimFunc parts = loop_partition(single);
  const auto* seq = parts->body.as<SeqStmtNode>();
  ASSERT_NE(seq, nullptr) << to_string(parts);
  const auto* main = seq->seq[0].as<ForNode>();
  ASSERT_NE(main, nullptr) << to_string(parts);
  EXPECT_EQ(main->kind, ForKind::kVectorized) << to_string(parts);
  EXPECT_TRUE(is_const_int(main->extent, 5)) << to_string(parts);
  EXPECT_TRUE(main->body.is<BufferStoreNode>()) << to_string(parts);
  for (size_t i = 1; i < seq->seq.size(); ++i) {
    EXPECT_EQ(seq->seq[i].as<ForNode>()->kind, ForKind::kSerial) << to_string(parts);
  }
  // And the whole thing vectorizes.
  EXPECT_NO_THROW(vectorize_loops(parts));
}

TEST(LoopPartitionTest, TwoDimensionalGuardSplitsBothLoops) {
  Var n("n"), m("m");
  Buffer a = Buffer::make("A", DataType::f32(), {n * m});
  Var io("io"), ii("ii"), jo("jo"), ji("ji");
  PrimExpr x = io * 4 + ii, y = jo * 4 + ji;
  Stmt store = BufferStoreNode::make(a, cast(DataType::f32(), x * 100 + y), {x * m + y});
  Stmt body = ForNode::make(
      io, 0, ceildiv(n, 4), ForKind::kSerial,
      ForNode::make(
          jo, 0, ceildiv(m, 4), ForKind::kSerial,
          ForNode::make(ii, 0, 4, ForKind::kSerial,
                        ForNode::make(ji, 0, 4, ForKind::kSerial,
                                      IfThenElseNode::make(likely(x < n && y < m), store)))));
  PrimFunc f = PrimFunc::make("f", {a->data}, {a}, body);
  PrimFunc parts = loop_partition(f);
  // Main of io holds a jo loop split again: one unguarded nest in total.
  const auto* io_main = parts->body.as<SeqStmtNode>()->seq[0].as<ForNode>();
  const auto* jo_seq = io_main->body.as<SeqStmtNode>();
  ASSERT_NE(jo_seq, nullptr) << to_string(parts);
  Stmt innermost = jo_seq->seq[0].as<ForNode>()->body.as<ForNode>()->body.as<ForNode>()->body;
  EXPECT_TRUE(innermost.is<BufferStoreNode>()) << to_string(parts);
  for (auto [sn, sm] : {std::pair<int64_t, int64_t>{9, 6}, {8, 8}, {3, 13}}) {
    std::vector<double> ref(sn * sm, -1), got(sn * sm, -1);
    Interpreter().run(f, {&ref}, {{n, sn}, {m, sm}});
    Interpreter().run(parts, {&got}, {{n, sn}, {m, sm}});
    EXPECT_EQ(ref, got) << sn << "x" << sm;
  }
}

TEST(LoopPartitionTest, NonLinearGuardIsLeftAlone) {
  Var n("n");
  Buffer a = Buffer::make("A", DataType::f32(), {n});
  Var i("i");
  Stmt body = ForNode::make(
      i, 0, n, ForKind::kSerial,
      IfThenElseNode::make(likely(i * i < n), BufferStoreNode::make(a, PrimExpr(0.0f), {i})));
  PrimFunc f = PrimFunc::make("f", {a->data}, {a}, body);
  EXPECT_TRUE(loop_partition(f).same_as(f));
}

}  // namespace
}  // namespace tessel::tir
