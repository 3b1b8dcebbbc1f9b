// The auto-scheduler's compute-DAG facts and sketch rules on small DAGs, against golden sketches.
#include "autotune/auto_schedule/sketch.h"

#include <gtest/gtest.h>

#include "te/operation.h"

namespace tessel::autotune {
namespace {

using te::Expr;
using te::Tensor;

CpuModel avx512() {
  CpuModel cpu;
  cpu.isa = IsaFamily::kX86Avx512;
  cpu.vector_bits = 512;
  return cpu;
}

// C = A x B (M x K times K x N), optionally followed by relu(C + 1) through an inlined add.
struct Matmul {
  Tensor A, B, C, out;
  Matmul(int64_t m, int64_t n, int64_t k, bool epilogue, const std::string& prefix = "") {
    A = te::placeholder({m, k}, DataType::f32(), prefix + "A");
    B = te::placeholder({k, n}, DataType::f32(), prefix + "B");
    te::IterVar r = te::reduce_axis(0, k, "k");
    C = te::compute(
        {m, n}, [&](Expr i, Expr j) { return te::sum(A(i, r) * B(r, j), {r}); }, prefix + "C");
    out = C;
    if (epilogue) {
      Tensor add = te::compute({m, n}, [&](Expr i, Expr j) { return C(i, j) + 1.0f; }, "add");
      out = te::compute({m, n}, [&](Expr i, Expr j) { return te::max(add(i, j), 0.0f); }, "relu");
    }
  }
  ComputeDAG dag() const { return ComputeDAG({out}, {A, B, out}, avx512()); }
};

// Row softmax's statistics: mx = max_k X, e = exp(X - mx), s = sum_k e, Y = e / s.
struct Softmax {
  Tensor X, Y;
  explicit Softmax(int64_t cols) {
    X = te::placeholder({8, cols}, DataType::f32(), "X");
    te::IterVar k1 = te::reduce_axis(0, cols, "k1"), k2 = te::reduce_axis(0, cols, "k2");
    Tensor mx = te::compute({8}, [&](Expr i) { return te::max(X(i, k1), {k1}); }, "mx");
    Tensor e = te::compute({8, cols}, [&](Expr i, Expr j) { return exp(X(i, j) - mx(i)); }, "e");
    Tensor s = te::compute({8}, [&](Expr i) { return te::sum(e(i, k2), {k2}); }, "s");
    Y = te::compute({8, cols}, [&](Expr i, Expr j) { return e(i, j) / s(i); }, "Y");
  }
  ComputeDAG dag() const { return ComputeDAG({Y}, {X, Y}, avx512()); }
};

// ConvNCHWc's shape on a matmul: Cb[i, jb, jj] = sum_k A[i, k] * W[jb, k, jj], blocks of `block`
// output columns, which the epilogue unpacks: out[i, j] = Cb[i, j / block, j % block] + 1.
struct BlockedMatmul {
  Tensor A, W, Cb, out;
  BlockedMatmul(int64_t m, int64_t n, int64_t k, int64_t block) {
    A = te::placeholder({m, k}, DataType::f32(), "A");
    W = te::placeholder({n / block, k, block}, DataType::f32(), "W");
    te::IterVar r = te::reduce_axis(0, k, "k");
    Cb = te::compute(
        {m, n / block, block},
        [&](Expr i, Expr jb, Expr jj) { return te::sum(A(i, r) * W(jb, r, jj), {r}); }, "Cb");
    out = te::compute(
        {m, n}, [&](Expr i, Expr j) { return Cb(i, j / block, j % block) + 1.0f; }, "out");
  }
  ComputeDAG dag() const { return ComputeDAG({out}, {A, W, out}, avx512()); }
};

// A 3x3 conv over a padded input: pad[c, y, x] = X[c, y - 1, x - 1] inside the image, else 0;
// conv[m, y, x] = sum_{c, ky, kx} pad[c, y + ky, x + kx] * W[m, c, ky, kx].
struct PaddedConv {
  Tensor X, W, pad, conv;
  PaddedConv() {
    X = te::placeholder({4, 8, 8}, DataType::f32(), "X");
    W = te::placeholder({16, 4, 3, 3}, DataType::f32(), "W");
    pad = te::compute(
        {4, 10, 10},
        [&](Expr c, Expr y, Expr x) {
          return if_then_else(y >= 1 && y < 9 && x >= 1 && x < 9, X(c, y - 1, x - 1), 0.0f);
        },
        "pad");
    te::IterVar rc = te::reduce_axis(0, 4, "rc"), ky = te::reduce_axis(0, 3, "ky"),
                kx = te::reduce_axis(0, 3, "kx");
    conv = te::compute(
        {16, 8, 8},
        [&](Expr m, Expr y, Expr x) {
          return te::sum(pad(rc, y + ky, x + kx) * W(m, rc, ky, kx), {rc, ky, kx});
        },
        "conv");
  }
  ComputeDAG dag() const { return ComputeDAG({conv}, {X, W, conv}, avx512()); }
};

std::string all_sketches(const ComputeDAG& dag) {
  std::string out;
  std::vector<Sketch> sketches = generate_sketches(dag);
  for (size_t i = 0; i < sketches.size(); ++i)
    out += "sketch " + std::to_string(i) + "\n" + sketches[i].str(dag);
  return out;
}

TEST(ComputeDagTest, MatmulFacts) {
  ComputeDAG dag = Matmul(64, 48, 32, true).dag();
  EXPECT_EQ(dag.str(),
            "  C [64, 48]: reduce 32, data reuse, elementwise into add\n"
            "  add [64, 48]: elementwise into relu\n"
            "  relu [64, 48]: output\n");
  // 2 per multiply-add point, one add and one max per output point.
  EXPECT_DOUBLE_EQ(dag.flops(), 64.0 * 48 * 32 * 2 + 2 * 64.0 * 48);
}

TEST(ComputeDagTest, SoftmaxFacts) {
  ComputeDAG dag = Softmax(64).dag();
  EXPECT_EQ(dag.str(),
            "  mx [8]: reduce 64, rfactor pays\n"
            "  e [8, 64]: expensive\n"
            "  s [8]: reduce 64, rfactor pays\n"
            "  Y [8, 64]: output\n");
  // A row that is not a whole number of vectors is not factored.
  EXPECT_EQ(Softmax(40).dag().str(),
            "  mx [8]: reduce 40\n"
            "  e [8, 40]: expensive\n"
            "  s [8]: reduce 40\n"
            "  Y [8, 40]: output\n");
}

// A consumer that reads a stage through blocks of one of its axes (ConvNCHWc's epilogue) unpacks
// it; a transpose is an unpacking without blocks; any other read is neither.
TEST(ComputeDagTest, UnpackingConsumers) {
  EXPECT_EQ(BlockedMatmul(8, 32, 16, 8).dag().str(),
            "  Cb [8, 4, 8]: reduce 16, data reuse, unpacked by out at [0, 1/8, 1%8]\n"
            "  out [8, 32]: output\n");
  Tensor X = te::placeholder({4, 6}, DataType::f32(), "X");
  Tensor a = te::compute({4, 6}, [&](Expr i, Expr j) { return X(i, j) * 2.0f; }, "a");
  Tensor t = te::compute({6, 4}, [&](Expr i, Expr j) { return a(j, i); }, "t");
  EXPECT_EQ(ComputeDAG({t}, {X, t}, avx512()).str(),
            "  a [4, 6]: unpacked by t at [1, 0]\n"
            "  t [6, 4]: output\n");
  // A broadcast's read at 0 along an axis of extent 1 is still point for point.
  Tensor Y = te::placeholder({1, 6}, DataType::f32(), "Y");
  Tensor y2 = te::compute({1, 6}, [&](Expr, Expr j) { return Y(0, j) * 2.0f; }, "y2");
  Tensor y3 = te::compute({1, 6}, [&](Expr, Expr j) { return y2(0, j) + 1.0f; }, "y3");
  EXPECT_EQ(ComputeDAG({y3}, {Y, y3}, avx512()).str(),
            "  y2 [1, 6]: elementwise into y3\n"
            "  y3 [1, 6]: output\n");
  // A block that does not divide the axis, and a read of one part of a block only.
  Tensor b =
      te::compute({4, 3, 2}, [&](Expr i, Expr jb, Expr jj) { return X(i, jb * 2 + jj); }, "b");
  Tensor ragged = te::compute({4, 5}, [&](Expr i, Expr j) { return b(i, j / 2, j % 2); }, "ragged");
  EXPECT_EQ(ComputeDAG({ragged}, {X, ragged}, avx512()).str(),
            "  b [4, 3, 2]\n"
            "  ragged [4, 5]: output\n");
  Tensor c =
      te::compute({4, 3, 2}, [&](Expr i, Expr jb, Expr jj) { return X(i, jb * 2 + jj); }, "c");
  Tensor half = te::compute({4, 6}, [&](Expr i, Expr j) { return c(i, j / 2, 0); }, "half");
  EXPECT_EQ(ComputeDAG({half}, {X, half}, avx512()).str(),
            "  c [4, 3, 2]\n"
            "  half [4, 6]: output\n");
}

// A padded input is inlined into the conv (its bounds checks in the conv's inner loop), or
// computed once at root: twice the conv's own sketches. Ansor inlines it always.
TEST(SketchTest, APaddedInputIsInlinedOrComputedOnce) {
  ComputeDAG dag = PaddedConv().dag();
  EXPECT_EQ(dag.str(),
            "  pad [4, 10, 10]: guarded window\n"
            "  conv [16, 8, 8]: output, reduce 4x3x3, data reuse\n");
  EXPECT_EQ(all_sketches(dag),
            "sketch 0\n"
            "  pad: inlined\n"
            "  conv: cache write: conv.local tiled SSRSRS, computed at tile level 1 of conv\n"
            "sketch 1\n"
            "  pad: at root\n"
            "  conv: cache write: conv.local tiled SSRSRS, computed at tile level 1 of conv\n"
            "sketch 2\n"
            "  pad: inlined\n"
            "  conv: cache write: conv.local tiled SSRSRS, computed at tile level 2 of conv\n"
            "sketch 3\n"
            "  pad: at root\n"
            "  conv: cache write: conv.local tiled SSRSRS, computed at tile level 2 of conv\n"
            "sketch 4\n"
            "  pad: inlined\n"
            "  conv: tiled SSRSRS at root\n"
            "sketch 5\n"
            "  pad: at root\n"
            "  conv: tiled SSRSRS at root\n");
  // A guarded stage that an elementwise stage reads is inlined as any other.
  PaddedConv c;
  Tensor twice = te::compute(
      {4, 10, 10}, [&](Expr ch, Expr y, Expr x) { return c.pad(ch, y, x) * 2.0f; }, "twice");
  ComputeDAG elementwise({twice}, {c.X, twice}, avx512());
  EXPECT_EQ(elementwise.str(),
            "  pad [4, 10, 10]: elementwise into twice\n"
            "  twice [4, 10, 10]: output\n");
}

// A transform (pairs summed: T[i, k] = A[i, 2k] + A[i, 2k + 1], as Winograd's tiles combine
// their inputs) that a matmul reads once per output column is computed once at root: inlined,
// it would be summed again for every column. Scaling by a scalar is no transform, and a transform
// that its reader reads point for point, or a stencil that reads each point once, is inlined.
TEST(SketchTest, ATransformThatIsReReadIsComputedOnce) {
  Tensor A = te::placeholder({8, 32}, DataType::f32(), "A");
  Tensor B = te::placeholder({16, 8}, DataType::f32(), "B");
  Tensor scale = te::placeholder({}, DataType::f32(), "scale");
  Tensor T =
      te::compute({8, 16}, [&](Expr i, Expr k) { return A(i, k * 2) + A(i, k * 2 + 1); }, "T");
  te::IterVar r = te::reduce_axis(0, 16, "r");
  Tensor C =
      te::compute({8, 8}, [&](Expr i, Expr j) { return te::sum(T(i, r) * B(r, j), {r}); }, "C");
  ComputeDAG dag({C}, {A, B, C}, avx512());
  EXPECT_EQ(dag.str(),
            "  T [8, 16]: re-read transform\n"
            "  C [8, 8]: output, reduce 16, data reuse\n");
  for (const Sketch& s : generate_sketches(dag)) EXPECT_EQ(s.plans[2].rule, SketchRule::kRoot);

  Tensor S = te::compute({8, 16}, [&](Expr i, Expr k) { return A(i, k) * scale(); }, "S");
  te::IterVar r2 = te::reduce_axis(0, 16, "r2");
  Tensor D =
      te::compute({8, 8}, [&](Expr i, Expr j) { return te::sum(S(i, r2) * B(r2, j), {r2}); }, "D");
  ComputeDAG scaled({D}, {A, B, scale, D}, avx512());
  EXPECT_EQ(scaled.str(),
            "  S [8, 16]\n"
            "  D [8, 8]: output, reduce 16, data reuse\n");

  Tensor relu =
      te::compute({8, 16}, [&](Expr i, Expr k) { return te::max(T(i, k), 0.0f); }, "relu");
  EXPECT_EQ(ComputeDAG({relu}, {A, relu}, avx512()).str(),
            "  T [8, 16]: elementwise into relu\n"
            "  relu [8, 16]: output\n");
  Tensor pairs =
      te::compute({8, 8}, [&](Expr i, Expr k) { return T(i, k * 2) + T(i, k * 2 + 1); }, "pairs");
  Tensor overlapping =
      te::compute({8, 15}, [&](Expr i, Expr k) { return T(i, k) + T(i, k + 1); }, "overlapping");
  EXPECT_EQ(ComputeDAG({pairs}, {A, pairs}, avx512()).str(),
            "  T [8, 16]\n"
            "  pairs [8, 8]: output\n");
  EXPECT_EQ(ComputeDAG({overlapping}, {A, overlapping}, avx512()).str(),
            "  T [8, 16]: re-read transform\n"
            "  overlapping [8, 15]: output\n");
}

// The blocked tile is fused into its unpacking consumer as into an elementwise one.
TEST(SketchTest, BlockedTileFusesIntoItsUnpackingConsumer) {
  EXPECT_EQ(all_sketches(BlockedMatmul(8, 32, 16, 8).dag()),
            "sketch 0\n"
            "  Cb: tiled SSRSRS, computed at tile level 1 of out\n"
            "  out: tiled to hold a producer's tile, at root\n"
            "sketch 1\n"
            "  Cb: tiled SSRSRS, computed at tile level 2 of out\n"
            "  out: tiled to hold a producer's tile, at root\n");
}

TEST(SketchTest, MatmulWithEpilogueFusesTheTileIntoIt) {
  EXPECT_EQ(all_sketches(Matmul(64, 48, 32, true).dag()),
            "sketch 0\n"
            "  C: tiled SSRSRS, computed at tile level 1 of relu\n"
            "  add: inlined\n"
            "  relu: tiled to hold a producer's tile, at root\n"
            "sketch 1\n"
            "  C: tiled SSRSRS, computed at tile level 2 of relu\n"
            "  add: inlined\n"
            "  relu: tiled to hold a producer's tile, at root\n");
}

TEST(SketchTest, MatmulOutputGetsACacheWriteOrPlainTiling) {
  EXPECT_EQ(all_sketches(Matmul(64, 48, 32, false).dag()),
            "sketch 0\n"
            "  C: cache write: C.local tiled SSRSRS, computed at tile level 1 of C\n"
            "sketch 1\n"
            "  C: cache write: C.local tiled SSRSRS, computed at tile level 2 of C\n"
            "sketch 2\n"
            "  C: tiled SSRSRS at root\n");
}

TEST(SketchTest, SoftmaxStatisticsMayBeFactored) {
  std::vector<Sketch> sketches = generate_sketches(Softmax(64).dag());
  ASSERT_EQ(sketches.size(), 4u);  // each of the two reductions with and without rfactor
  EXPECT_EQ(sketches[0].str(Softmax(64).dag()),
            "  mx: rfactor into vector partials\n"
            "  e: at root\n"
            "  s: rfactor into vector partials\n"
            "  Y: at root\n");
  EXPECT_EQ(generate_sketches(Softmax(40).dag()).size(), 1u);
}

TEST(SketchTest, AnElementwiseChainIsOneStageAtRoot) {
  Tensor X = te::placeholder({4, 32}, DataType::f32(), "X");
  Tensor a = te::compute({4, 32}, [&](Expr i, Expr j) { return X(i, j) * 2.0f; }, "a");
  Tensor b = te::compute({4, 32}, [&](Expr i, Expr j) { return a(i, j) + 1.0f; }, "b");
  ComputeDAG dag({b}, {X, b}, avx512());
  EXPECT_EQ(all_sketches(dag),
            "sketch 0\n"
            "  a: inlined\n"
            "  b: at root\n");
}

// Two reductions into one output: only the first tile found holds the consumer.
TEST(SketchTest, OnlyOneTileIsFusedIntoAConsumer) {
  Matmul m1(16, 16, 16, false, "x"), m2(16, 16, 16, false, "y");
  Tensor sum =
      te::compute({16, 16}, [&](Expr i, Expr j) { return m1.C(i, j) + m2.C(i, j); }, "sum");
  ComputeDAG dag({sum}, {m1.A, m1.B, m2.A, m2.B, sum}, avx512());
  for (const Sketch& s : generate_sketches(dag)) {
    int fused = 0;
    for (const StagePlan& p : s.plans) fused += p.rule == SketchRule::kTileFused ? 1 : 0;
    EXPECT_LE(fused, 1) << s.str(dag);
  }
}

}  // namespace
}  // namespace tessel::autotune
