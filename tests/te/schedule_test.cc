// Every primitive checked numerically against naive loops.
#include "te_test_util.h"

namespace tessel::te {
namespace {
using testing::build_and_run;
using testing::expect_near;
using testing::naive_matmul;
using testing::random_array;
using testing::zeros;

struct Matmul {
  Tensor A, B, C;
  IterVar k;
  Matmul(int64_t m, int64_t n, int64_t kk) {
    A = placeholder({int(m), int(kk)}, DataType::f32(), "A");
    B = placeholder({int(kk), int(n)}, DataType::f32(), "B");
    k = reduce_axis(0, int(kk), "k");
    C = compute({int(m), int(n)}, [&](Expr i, Expr j) { return sum(A(i, k) * B(k, j), {k}); }, "C");
  }
  void check(const Schedule& s, int64_t m, int64_t n, int64_t kk) const {
    auto a = random_array({m, kk}, 1), b = random_array({kk, n}, 2), c = zeros({m, n});
    build_and_run(s, {A, B, C}, {a, b, c});
    expect_near(c, naive_matmul(a, b, m, n, kk));
  }
};

// C[i] = A[i] * 2 + 1 over n elements.
struct Elementwise {
  Tensor A, C;
  explicit Elementwise(PrimExpr n) {
    A = placeholder({n}, DataType::f32(), "A");
    C = compute({n}, [&](Expr i) { return A(i) * 2.0f + 1.0f; }, "C");
  }
  void check(const Schedule& s, int64_t n) const {
    auto a = random_array({n}), c = zeros({n});
    build_and_run(s, {A, C}, {a, c});
    std::vector<float> want(n);
    for (int64_t i = 0; i < n; ++i) want[i] = a.data<float>()[i] * 2 + 1;
    expect_near(c, want);
  }
};

TEST(ScheduleTest, DefaultScheduleMatmul) {
  Matmul mm(17, 19, 23);
  mm.check(create_schedule({mm.C}), 17, 19, 23);
}

TEST(ScheduleTest, SplitThatDivides) {
  Elementwise ew(64);
  Schedule s = create_schedule({ew.C});
  s[ew.C].split(ew.C.axis(0), 8);
  ew.check(s, 64);
}

TEST(ScheduleTest, SplitThatDoesNotDivide) {
  for (int64_t factor : {3, 7, 64, 100}) {
    Elementwise ew(61);
    Schedule s = create_schedule({ew.C});
    s[ew.C].split(ew.C.axis(0), factor);
    ew.check(s, 61);
  }
}

TEST(ScheduleTest, SplitByNparts) {
  Elementwise ew(61);
  Schedule s = create_schedule({ew.C});
  s[ew.C].split_nparts(ew.C.axis(0), 4);
  ew.check(s, 61);
}

TEST(ScheduleTest, NestedSplitsThatDoNotDivide) {
  Elementwise ew(50);
  Schedule s = create_schedule({ew.C});
  auto [o, i] = s[ew.C].split(ew.C.axis(0), 8);
  s[ew.C].split(i, 3);  // inner split overruns the inner extent 8
  ew.check(s, 50);
}

TEST(ScheduleTest, TileAndReorderMatmul) {
  Matmul mm(45, 37, 29);
  Schedule s = create_schedule({mm.C});
  auto [io, jo, ii, ji] = s[mm.C].tile(mm.C.axis(0), mm.C.axis(1), 8, 16);
  s[mm.C].reorder({io, jo, mm.k, ii, ji});
  mm.check(s, 45, 37, 29);
}

TEST(ScheduleTest, SplitReductionAxis) {
  Matmul mm(8, 8, 37);
  Schedule s = create_schedule({mm.C});
  auto [ko, ki] = s[mm.C].split(mm.k, 5);
  s[mm.C].reorder({ko, mm.C.axis(0), ki, mm.C.axis(1)});
  mm.check(s, 8, 8, 37);
}

TEST(ScheduleTest, FuseThenSplit) {
  Matmul mm(13, 11, 5);
  Schedule s = create_schedule({mm.C});
  IterVar f = s[mm.C].fuse(mm.C.axis(0), mm.C.axis(1));
  s[mm.C].split(f, 8);  // 143 = 17*8 + 7 does not divide
  mm.check(s, 13, 11, 5);
}

TEST(ScheduleTest, VectorizeParallelUnrollTogether) {
  Matmul mm(64, 64, 32);
  Schedule s = create_schedule({mm.C});
  auto [io, jo, ii, ji] = s[mm.C].tile(mm.C.axis(0), mm.C.axis(1), 4, 16);
  s[mm.C].reorder({io, jo, mm.k, ii, ji});
  s[mm.C].vectorize(ji);
  s[mm.C].unroll(ii);
  s[mm.C].parallel(io);
  mm.check(s, 64, 64, 32);
}

TEST(ScheduleTest, VectorizeUnderNonDividingSplit) {
  Elementwise ew(100);
  Schedule s = create_schedule({ew.C});
  auto [o, i] = s[ew.C].split(ew.C.axis(0), 16);
  s[ew.C].vectorize(i);
  ew.check(s, 100);
}

TEST(ScheduleTest, VectorizeWhenTheTileExceedsTheExtent) {
  for (int64_t n : {1, 5, 17}) {
    Elementwise ew(static_cast<int>(n));
    Schedule s = create_schedule({ew.C});
    auto [o, i] = s[ew.C].split(ew.C.axis(0), 8);
    s[ew.C].vectorize(i);
    ew.check(s, n);
  }
}

TEST(ScheduleTest, ComputeAtProducerConsumer) {
  Tensor A = placeholder({40, 24}, DataType::f32(), "A");
  Tensor B = compute({40, 24}, [&](Expr i, Expr j) { return A(i, j) * 3.0f; }, "B");
  Tensor C = compute({40, 24}, [&](Expr i, Expr j) { return B(i, j) + 1.0f; }, "C");
  Schedule s = create_schedule({C});
  auto [io, ii] = s[C].split(C.axis(0), 8);
  s[B].compute_at(s[C], io);
  auto a = random_array({40, 24}), c = zeros({40, 24});
  build_and_run(s, {A, C}, {a, c});
  std::vector<float> want(40 * 24);
  for (int i = 0; i < 40 * 24; ++i) want[i] = a.data<float>()[i] * 3 + 1;
  expect_near(c, want);
  // B holds only the 8 rows (8*24 elements) the consumer's loop needs.
  std::string ir = to_string(lower(s, {A, C}, "f"));
  EXPECT_NE(ir.find("allocate B: float32[192]"), std::string::npos) << ir;
}

// Shapes given as int64 make int64 axes; their splits, fuses and attached producers stay int64.
TEST(ScheduleTest, Int64AxesSplitFuseAndComputeAt) {
  const int64_t rows = 30, cols = 12;
  Tensor A = placeholder({rows, cols}, DataType::f32(), "A");
  Tensor B = compute({rows, cols}, [&](Expr i, Expr j) { return A(i, j) * 3.0f; }, "B");
  Tensor C = compute({rows - 1, cols}, [&](Expr i, Expr j) { return B(i, j) + B(i + 1, j); }, "C");
  EXPECT_EQ(C.axis(0)->var.dtype(), DataType::i64());
  Schedule s = create_schedule({C});
  auto [io, ii] = s[C].split(C.axis(0), 8);
  IterVar fused = s[C].fuse(ii, C.axis(1));
  EXPECT_EQ(fused->var.dtype(), DataType::i64());
  s[B].compute_at(s[C], io);
  auto a = random_array({rows, cols}), c = zeros({rows - 1, cols});
  build_and_run(s, {A, C}, {a, c});
  std::vector<float> want((rows - 1) * cols);
  const float* x = a.data<float>();
  for (int64_t k = 0; k < (rows - 1) * cols; ++k) want[k] = x[k] * 3 + x[k + cols] * 3;
  expect_near(c, want);
}

TEST(ScheduleTest, ComputeAtUnderNonDividingSplitWithStencil) {
  // C[i] = B[i] + B[i+1]: the producer region overlaps between iterations and the last block is
  // short.
  Tensor A = placeholder({51}, DataType::f32(), "A");
  Tensor B = compute({51}, [&](Expr i) { return A(i) * 2.0f; }, "B");
  Tensor C = compute({50}, [&](Expr i) { return B(i) + B(i + 1); }, "C");
  Schedule s = create_schedule({C});
  auto [o, i] = s[C].split(C.axis(0), 8);
  s[B].compute_at(s[C], o);
  auto a = random_array({51}), c = zeros({50});
  build_and_run(s, {A, C}, {a, c});
  std::vector<float> want(50);
  for (int x = 0; x < 50; ++x) want[x] = a.data<float>()[x] * 2 + a.data<float>()[x + 1] * 2;
  expect_near(c, want);
}

TEST(ScheduleTest, ComputeAtProducerReadThroughAGather) {
  // C[i] = B[I[g(i)]]: the index depends on data, so B's region is its whole domain. (A constant
  // g used to leave a read of I in the loop IR: an InternalError.)
  for (bool constant_index : {false, true}) {
    Tensor A = placeholder({16}, DataType::f32(), "A");
    Tensor I = placeholder({8}, DataType::i32(), "I");
    Tensor B = compute({16}, [&](Expr i) { return A(i) * 2.0f; }, "B");
    Tensor C = compute({8}, [&](Expr i) { return B(I(constant_index ? Expr(0) : i)); }, "C");
    Schedule s = create_schedule({C});
    s[B].compute_at(s[C], C.axis(0));
    auto a = random_array({16}), c = zeros({8});
    auto idx = runtime::NDArray::empty({8}, DataType::i32());
    for (int x = 0; x < 8; ++x) idx.data<int32_t>()[x] = (x * 7 + 3) % 16;
    build_and_run(s, {A, I, C}, {a, idx, c});
    std::vector<float> want(8);
    for (int x = 0; x < 8; ++x) {
      want[x] = a.data<float>()[idx.data<int32_t>()[constant_index ? 0 : x]] * 2;
    }
    expect_near(c, want);
    std::string ir = to_string(lower(s, {A, I, C}, "f"));
    EXPECT_NE(ir.find("allocate B: float32[16]"), std::string::npos) << ir;
  }
}

// A -> B -> C -> D, 30 x 20: D = (A + 1) * 2 - 3, with D tiled 8 x 8 and C computed inside D's
// inner tile loop.
struct TiledChain {
  Tensor A = placeholder({30, 20}, DataType::f32(), "A");
  Tensor B = compute({30, 20}, [&](Expr i, Expr j) { return A(i, j) + 1.0f; }, "B");
  Tensor C = compute({30, 20}, [&](Expr i, Expr j) { return B(i, j) * 2.0f; }, "C");
  Tensor D = compute({30, 20}, [&](Expr i, Expr j) { return C(i, j) - 3.0f; }, "D");
  Schedule s = create_schedule({D});
  IterVar io, jo;

  TiledChain() {
    auto tiles = s[D].tile(D.axis(0), D.axis(1), 8, 8);
    io = std::get<0>(tiles);
    jo = std::get<1>(tiles);
    s[C].compute_at(s[D], jo);
  }
  void expect_computes_the_chain() {
    auto a = random_array({30, 20}), d = zeros({30, 20});
    build_and_run(s, {A, D}, {a, d});
    std::vector<float> want(600);
    for (int x = 0; x < 600; ++x) want[x] = (a.data<float>()[x] + 1) * 2 - 3;
    expect_near(d, want);
  }
};

TEST(ScheduleTest, NestedComputeAt) {
  TiledChain c;
  c.s[c.B].compute_at(c.s[c.C], c.C.axis(0));
  c.expect_computes_the_chain();
}

TEST(ScheduleTest, ComputeAtAnOuterLoopOfTheConsumersHost) {
  // B is read by C alone, and C is computed inside D's inner tile loop: B may be computed once
  // per row of D's tiles (a padded input per row of conv tiles), above C.
  TiledChain c;
  c.s[c.B].compute_at(c.s[c.D], c.io);
  c.expect_computes_the_chain();
  std::string ir = to_string(lower(c.s, {c.A, c.D}, "f"));
  EXPECT_NE(ir.find("allocate B: float32[192]"), std::string::npos)
      << ir;  // 8 rows of D's 3 column tiles of 8
}

TEST(ScheduleTest, ComputeInlineChain) {
  Tensor A = placeholder({33}, DataType::f32(), "A");
  Tensor B = compute({33}, [&](Expr i) { return A(i) + 1.0f; }, "B");
  Tensor C = compute({33}, [&](Expr i) { return B(i) * B(i); }, "C");
  Tensor D = compute({33}, [&](Expr i) { return C(i) - 2.0f; }, "D");
  Schedule s = create_schedule({D});
  s[B].compute_inline();
  s[C].compute_inline();
  auto a = random_array({33}), d = zeros({33});
  build_and_run(s, {A, D}, {a, d});
  std::vector<float> want(33);
  for (int x = 0; x < 33; ++x) {
    float b = a.data<float>()[x] + 1;
    want[x] = b * b - 2;
  }
  expect_near(d, want);
  std::string ir = to_string(lower(s, {A, D}, "f"));
  EXPECT_EQ(ir.find("allocate"), std::string::npos) << ir;
}

TEST(ScheduleTest, ComputeRootUndoesComputeAt) {
  Tensor A = placeholder({16}, DataType::f32(), "A");
  Tensor B = compute({16}, [&](Expr i) { return A(i) * 3.0f; }, "B");
  Tensor C = compute({16}, [&](Expr i) { return B(i) + 1.0f; }, "C");
  Schedule s = create_schedule({C});
  s[B].compute_at(s[C], C.axis(0));
  s[B].compute_root();
  auto a = random_array({16}), c = zeros({16});
  build_and_run(s, {A, C}, {a, c});
  std::vector<float> want(16);
  for (int x = 0; x < 16; ++x) want[x] = a.data<float>()[x] * 3 + 1;
  expect_near(c, want);
}

TEST(ScheduleTest, CacheWriteWithComputeAt) {
  Matmul mm(36, 40, 20);
  Schedule s = create_schedule({mm.C});
  Tensor CL = s.cache_write(mm.C, MemScope::kLocal);
  auto [io, jo, ii, ji] = s[mm.C].tile(mm.C.axis(0), mm.C.axis(1), 6, 16);
  s[CL].compute_at(s[mm.C], jo);
  Stage cl = s[CL];
  cl.reorder({mm.k, cl.axis(0), cl.axis(1)});
  cl.vectorize(cl.axis(1));
  cl.unroll(cl.axis(0));
  s[mm.C].vectorize(ji);
  s[mm.C].parallel(io);
  mm.check(s, 36, 40, 20);
}

// cache_write after an inline: the inlined reader of C is rewritten to read the copy-out, and so
// must its own reader (the output D) be.
TEST(ScheduleTest, CacheWriteUnderAnInlinedReader) {
  Matmul mm(12, 20, 9);
  Tensor E = compute({12, 20}, [&](Expr i, Expr j) { return mm.C(i, j) + 1.0f; }, "E");
  Tensor D = compute({12, 20}, [&](Expr i, Expr j) { return E(i, j) * 2.0f; }, "D");
  Schedule s = create_schedule({D});
  s[E].compute_inline();
  s.cache_write(mm.C, MemScope::kLocal);
  auto a = random_array({12, 9}, 1), b = random_array({9, 20}, 2), d = zeros({12, 20});
  build_and_run(s, {mm.A, mm.B, D}, {a, b, d});
  std::vector<float> want = naive_matmul(a, b, 12, 20, 9);
  for (float& v : want) v = (v + 1) * 2;
  expect_near(d, want);
}

TEST(ScheduleTest, CacheReadWithComputeAt) {
  Matmul mm(24, 32, 16);
  Schedule s = create_schedule({mm.C});
  Tensor AL = s.cache_read(mm.A, MemScope::kLocal, {mm.C});
  auto [io, ii] = s[mm.C].split(mm.C.axis(0), 4);
  s[AL].compute_at(s[mm.C], io);
  mm.check(s, 24, 32, 16);
}

TEST(ScheduleTest, ReductionsOfEachKind) {
  Tensor A = placeholder({7, 13}, DataType::f32(), "A");
  IterVar k1 = reduce_axis(0, 13, "k"), k2 = reduce_axis(0, 13, "k"), k3 = reduce_axis(0, 13, "k"),
          k4 = reduce_axis(0, 13, "k");
  Reducer prod(
      "prod", [](PrimExpr x, PrimExpr y) { return x * y; },
      [](DataType t) { return make_const(t, 1); });
  Tensor S = compute({7}, [&](Expr i) { return sum(A(i, k1), {k1}); }, "S");
  Tensor Mx = compute({7}, [&](Expr i) { return max(A(i, k2), {k2}); }, "Mx");
  Tensor Mn = compute({7}, [&](Expr i) { return min(A(i, k3), {k3}); }, "Mn");
  Tensor P = compute({7}, [&](Expr i) { return prod(A(i, k4) + 1.0f, {k4}, k4 < 5); }, "P");
  Schedule s = create_schedule({S, Mx, Mn, P});
  s[S].split(k1, 4);
  auto a = random_array({7, 13});
  auto rs = zeros({7}), rmx = zeros({7}), rmn = zeros({7}), rp = zeros({7});
  build_and_run(s, {A, S, Mx, Mn, P}, {a, rs, rmx, rmn, rp});
  std::vector<float> ws(7, 0), wmx(7, -1e30f), wmn(7, 1e30f), wp(7, 1);
  for (int i = 0; i < 7; ++i)
    for (int k = 0; k < 13; ++k) {
      float v = a.data<float>()[i * 13 + k];
      ws[i] += v;
      wmx[i] = std::max(wmx[i], v);
      wmn[i] = std::min(wmn[i], v);
      if (k < 5) wp[i] *= v + 1;
    }
  expect_near(rs, ws);
  expect_near(rmx, wmx);
  expect_near(rmn, wmn);
  expect_near(rp, wp);
}

TEST(ScheduleTest, SymbolicSizes) {
  Var n = var("n");
  Elementwise ew(n);
  Schedule s = create_schedule({ew.C});
  auto [o, i] = s[ew.C].split(ew.C.axis(0), 8);
  s[ew.C].vectorize(i);
  s[ew.C].parallel(o);
  runtime::Module m = build(s, {ew.A, ew.C}, Target::parse("llvm -mcpu=native"), "f");
  for (int64_t size : {1, 8, 37, 1000}) {
    auto a = random_array({size}), c = zeros({size});
    m.get_function("f")(a, c);
    std::vector<float> want(size);
    for (int64_t x = 0; x < size; ++x) want[x] = a.data<float>()[x] * 2 + 1;
    expect_near(c, want);
  }
}

TEST(ScheduleTest, SymbolicMatmul) {
  Var m = var("m"), n = var("n"), kk = var("kk");
  Tensor A = placeholder({m, kk}, DataType::f32(), "A");
  Tensor B = placeholder({kk, n}, DataType::f32(), "B");
  IterVar k = reduce_axis(0, kk, "k");
  Tensor C = compute({m, n}, [&](Expr i, Expr j) { return sum(A(i, k) * B(k, j), {k}); }, "C");
  Schedule s = create_schedule({C});
  auto [io, jo, ii, ji] = s[C].tile(C.axis(0), C.axis(1), 4, 8);
  s[C].reorder({io, jo, k, ii, ji});
  runtime::Module mod = build(s, {A, B, C}, Target::parse("llvm -mcpu=native"), "mm");
  for (auto [M, N, K] :
       {std::tuple<int64_t, int64_t, int64_t>{5, 9, 3}, {16, 16, 16}, {33, 7, 12}}) {
    auto a = random_array({M, K}), b = random_array({K, N}), c = zeros({M, N});
    mod.get_function("mm")(a, b, c);
    expect_near(c, naive_matmul(a, b, M, N, K));
  }
}

}  // namespace
}  // namespace tessel::te
