#include <gtest/gtest.h>

#include "runtime/thread_pool.h"
#include "tests/codegen/codegen_test_util.h"
#include "tests/common/expect_error.h"

namespace tessel {
namespace {

using namespace tessel::testing;

// C[i] += 1 over a parallel loop of n iterations: each element must end up exactly 1, whether the
// loop has fewer iterations than its tasks (8 per thread) or more, in chunks that do not divide it.
TEST(CodeGenCPUTest, ParallelLoopWritesEveryElementOnce) {
  struct RestoreThreads {
    ~RestoreThreads() { runtime::set_num_threads(0); }
  } restore;
  for (int threads : {1, 2, 3}) {
    runtime::set_num_threads(threads);
    for (int64_t n : {1, 7, 16, 17, 23, 1000}) {
      Buffer c = Buffer::make("C", DataType::i32(), {PrimExpr(n)});
      Var i("i");
      Stmt body = loop(i, PrimExpr(n), store(c, load(c, i) + 1, i), ForKind::kParallel);
      runtime::Module mod = build(make_func("count", {c}, body), host_target());
      auto arr = make_array<int32_t>({n}, DataType::i32(), [](int64_t) { return 0; });
      mod.get_function("count")(arr);
      for (int64_t k = 0; k < n; ++k) {
        ASSERT_EQ(arr.data<int32_t>()[k], 1) << threads << " threads, n=" << n << " k=" << k;
      }
    }
  }
}

// A parallel loop inside another runs serially within the outer task.
TEST(CodeGenCPUTest, NestedParallelLoopRunsInsideTheOuterTask) {
  runtime::set_num_threads(2);
  Buffer c = Buffer::make("C", DataType::i32(), {PrimExpr(6 * 5)});
  Var i("i"), j("j");
  Stmt inner = loop(j, 5, store(c, load(c, i * 5 + j) + i + j, i * 5 + j), ForKind::kParallel);
  runtime::Module mod =
      build(make_func("nested", {c}, loop(i, 6, inner, ForKind::kParallel)), host_target());
  auto arr = make_array<int32_t>({30}, DataType::i32(), [](int64_t) { return 0; });
  mod.get_function("nested")(arr);
  for (int64_t k = 0; k < 30; ++k) EXPECT_EQ(arr.data<int32_t>()[k], k / 5 + k % 5) << k;
  runtime::set_num_threads(0);
}

// C = A * 2 + B with A, B, C of symbolic length n.
TEST(CodeGenCPUTest, SymbolicShapeIsBoundFromTheArgument) {
  Var n("n");
  Buffer a = Buffer::make("A", DataType::f32(), {n});
  Buffer b = Buffer::make("B", DataType::f32(), {n});
  Buffer c = Buffer::make("C", DataType::f32(), {n});
  Var i("i");
  Stmt body = loop(i, n, store(c, load(a, i) * 2.0f + load(b, i), i), ForKind::kParallel);
  runtime::Module mod = build(make_func("axpy", {a, b, c}, body), host_target());
  runtime::Function fn = mod.get_function("axpy");
  for (int64_t len : {5, 17}) {
    auto x = float_array({len}, [](int64_t k) { return float(k); });
    auto y = float_array({len}, [](int64_t k) { return 100.0f - k; });
    auto z = float_array({len}, [](int64_t) { return -1.0f; });
    fn(x, y, z);
    for (int64_t k = 0; k < len; ++k) EXPECT_EQ(z.data<float>()[k], 100.0f + k) << len << " " << k;
  }
  auto x5 = float_array({5}, [](int64_t) { return 0.0f; });
  auto x6 = float_array({6}, [](int64_t) { return 0.0f; });
  expect_error([&] { fn(x5, x6, x5); }, {"axpy: argument 1 (B) has shape [6] but expects [5]"});
}

PrimFunc matmul_shaped() {
  Buffer a = Buffer::make("A", DataType::f32(), {64, 64});
  Buffer b = Buffer::make("B", DataType::f32(), {64, 64});
  Buffer c = Buffer::make("C", DataType::f32(), {64, 64});
  Var i("i");
  Stmt body = loop(i, 64 * 64, store(flat(c), load(flat(a), i) + load(flat(b), i), i));
  return make_func("matmul", {a, b, c}, body);
}

TEST(CodeGenCPUTest, ArgumentErrorsNameTheArgument) {
  runtime::Module mod = build(matmul_shaped(), host_target());
  runtime::Function fn = mod.get_function("matmul");
  auto ok = float_array({64, 64}, [](int64_t) { return 1.0f; });
  fn(ok, ok, ok);  // accepted
  auto narrow = float_array({64, 32}, [](int64_t) { return 1.0f; });
  expect_error([&] { fn(ok, narrow, ok); },
               {"matmul: argument 1 (B) has shape [64, 32] but expects [64, 64]"});
  auto flat_arr = float_array({64}, [](int64_t) { return 1.0f; });
  expect_error([&] { fn(ok, flat_arr, ok); }, {"argument 1 (B) has 1 dimensions, expects 2"});
  auto f64 = runtime::NDArray::empty({64, 64}, DataType::f64());
  expect_error([&] { fn(ok, f64, ok); }, {"argument 1 (B) has dtype float64, expects float32"});
  auto i32 = runtime::NDArray::empty({64, 64}, DataType::i32());
  expect_error([&] { fn(i32, ok, ok); }, {"argument 0 (A) has dtype int32, expects float32"});
  expect_error([&] { fn(ok, ok); }, {"matmul: expects 3 arguments, got 2"});
  expect_error([&] { fn(ok, 3, ok); }, {"argument 1 (B) expects a tensor, got type code 0"});
}

// Generated code also serves C callers whose DLTensors NDArray would refuse, so the test edits
// an array's DLTensor in place to play such a caller.
TEST(CodeGenCPUTest, RejectsNonCompactOrMisalignedTensors) {
  runtime::Module mod = build(matmul_shaped(), host_target());
  runtime::Function fn = mod.get_function("matmul");
  auto ok = float_array({64, 64}, [](int64_t) { return 1.0f; });
  auto odd = float_array({64, 64}, [](int64_t) { return 1.0f; });
  DLTensor* t = odd.dltensor();
  int64_t* own_strides = t->strides;
  t->strides[0] = 1;
  t->strides[1] = 64;
  expect_error([&] { fn(odd, ok, ok); }, {"argument 0 (A) has non-compact strides"});
  t->strides = nullptr;  // NULL strides mean compact
  fn(odd, ok, ok);
  t->byte_offset = 4;
  expect_error([&] { fn(ok, odd, ok); }, {"argument 1 (B) has data that is not 64-byte aligned"});
  t->byte_offset = 0;
  t->strides = own_strides;
}

TEST(CodeGenCPUTest, AssertFailureReturnsItsMessage) {
  Var n("n");
  Buffer a = Buffer::make("A", DataType::f32(), {n});
  Var i("i");
  Stmt body =
      AssertStmtNode::make(n > 3, "A needs more than 3 elements", loop(i, n, store(a, 1.0f, i)));
  runtime::Module mod = build(make_func("check", {a}, body), host_target());
  auto big = float_array({4}, [](int64_t) { return 0.0f; });
  mod.get_function("check")(big);
  EXPECT_EQ(big.data<float>()[3], 1.0f);
  auto small = float_array({3}, [](int64_t) { return 0.0f; });
  expect_error([&] { mod.get_function("check")(small); }, {"check: A needs more than 3 elements"});
}

// A failing check inside a parallel task (holding a workspace) reaches the caller's thread.
TEST(CodeGenCPUTest, AssertInParallelTaskReportsItsMessage) {
  runtime::set_num_threads(2);
  Buffer a = Buffer::make("A", DataType::f32(), {64});
  Buffer t = Buffer::make("T", DataType::f32(), {20000});
  Var i("i");
  Stmt checked =
      AssertStmtNode::make(load(a, i) >= 0.0f, "A must be non-negative", store(t, load(a, i), i));
  Stmt body = loop(i, 64, AllocateNode::make(t, checked), ForKind::kParallel);
  runtime::Module mod = build(make_func("check_all", {a}, body), host_target());
  auto good = float_array({64}, [](int64_t k) { return float(k); });
  mod.get_function("check_all")(good);
  auto bad = float_array({64}, [](int64_t k) { return k == 50 ? -1.0f : 1.0f; });
  expect_error([&] { mod.get_function("check_all")(bad); }, {"check_all: A must be non-negative"});
  runtime::set_num_threads(0);
}

// T = A * 2 into a temporary of `size` elements, then C = T + 1.
PrimFunc through_temporary(PrimExpr size, Buffer a, Buffer c, ForKind kind = ForKind::kSerial) {
  Buffer t = Buffer::make("T", DataType::f32(), {size}, MemScope::kLocal);
  Var i("i"), j("j");
  Stmt fill = loop(i, size, store(t, load(a, i) * 2.0f, i));
  Stmt use = loop(j, size, store(c, load(t, j) + 1.0f, j));
  return make_func("temp", {a, c}, AllocateNode::make(t, SeqStmtNode::make({fill, use})));
}

TEST(CodeGenCPUTest, SmallAllocationsUseTheStackLargeOnesTheWorkspace) {
  for (int64_t n : {16, 100000}) {
    Buffer a = Buffer::make("A", DataType::f32(), {PrimExpr(n)});
    Buffer c = Buffer::make("C", DataType::f32(), {PrimExpr(n)});
    runtime::Module mod = build(through_temporary(PrimExpr(n), a, c), host_target());
    auto x = float_array({n}, [](int64_t k) { return float(k % 100); });
    auto y = float_array({n}, [](int64_t) { return 0.0f; });
    mod.get_function("temp")(x, y);
    for (int64_t k = 0; k < n; ++k) ASSERT_EQ(y.data<float>()[k], 2.0f * (k % 100) + 1) << k;
    bool uses_workspace = mod.source("ll").find("TesselBackendAllocWorkspace") != std::string::npos;
    EXPECT_EQ(uses_workspace, n > 1000) << "n=" << n;
  }
}

TEST(CodeGenCPUTest, SymbolicAllocationInsideParallelTasks) {
  runtime::set_num_threads(2);
  Var n("n");
  Buffer a = Buffer::make("A", DataType::f32(), {4, n});
  Buffer c = Buffer::make("C", DataType::f32(), {4, n});
  Buffer t = Buffer::make("T", DataType::f32(), {n});
  Var r("r"), i("i"), j("j");
  Stmt fill = loop(i, n, store(t, load(flat(a), r * n + i) * 2.0f, i));
  Stmt use = loop(j, n, store(flat(c), load(t, j) + 1.0f, r * n + j));
  Stmt row = AllocateNode::make(t, SeqStmtNode::make({fill, use}));
  runtime::Module mod =
      build(make_func("rows", {a, c}, loop(r, 4, row, ForKind::kParallel)), host_target());
  for (int64_t len : {3, 5000}) {
    auto x = float_array({4, len}, [](int64_t k) { return float(k % 7); });
    auto y = float_array({4, len}, [](int64_t) { return 0.0f; });
    mod.get_function("rows")(x, y);
    for (int64_t k = 0; k < 4 * len; ++k) ASSERT_EQ(y.data<float>()[k], 2.0f * (k % 7) + 1) << k;
  }
  runtime::set_num_threads(0);
}

TEST(CodeGenCPUTest, ScalarParameters) {
  Buffer a = Buffer::make("A", DataType::f32(), {8});
  Var alpha("alpha", DataType::f32());
  Var count("count", DataType::i32());
  Var i("i");
  Stmt body = loop(i, count, store(a, load(a, i) * alpha, i));
  PrimFunc f = PrimFunc::make("scale", {a->data, alpha, count}, {a, Buffer(), Buffer()}, body);
  runtime::Module mod = build(f, host_target());
  auto x = float_array({8}, [](int64_t k) { return float(k); });
  mod.get_function("scale")(x, 0.5, 6);
  EXPECT_EQ(x.data<float>()[5], 2.5f);
  EXPECT_EQ(x.data<float>()[6], 6.0f);
  expect_error([&] { mod.get_function("scale")(x, 2, 6); },
               {"argument 1 (alpha) expects a float, got type code 0"});
}

}  // namespace
}  // namespace tessel
