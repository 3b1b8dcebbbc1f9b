// The register-tiled CPU matmul: correct on sizes the tiles do not divide, and really compiled
// to vector FMA instructions.
#include "topi/matmul.h"

#include <gtest/gtest.h>

#include <regex>

#include "codegen/build.h"
#include "ir/error.h"
#include "ir/printer.h"
#include "te/lower.h"
#include "tests/common/expect_error.h"
#include "tests/common/ndarray.h"

namespace tessel::topi {
namespace {

using tessel::testing::random_array;

// C = A x B ([M, K] x [K, N]) against naive loops in double; stops at the first wrong element.
void expect_matches_naive_loops(const runtime::NDArray& a, const runtime::NDArray& b,
                                const runtime::NDArray& c, int M, int N, int K,
                                const std::string& what) {
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double want = 0;
      for (int k = 0; k < K; ++k)
        want += double(a.data<float>()[i * K + k]) * b.data<float>()[k * N + j];
      ASSERT_NEAR(c.data<float>()[i * N + j], want, 1e-4 * (1 + std::fabs(want)))
          << what << " C[" << i << ", " << j << "]";
    }
}

// Builds the lowered matmul `f` ([M, K] x [K, N]) for the host and checks it on random inputs.
void expect_lowered_matches_naive_loops(const PrimFunc& f, int M, int N, int K, uint32_t seed,
                                        const std::string& what) {
  runtime::Module m = build(f, Target::parse("llvm -mcpu=native"));
  auto a = random_array({M, K}, seed), b = random_array({K, N}, seed + 1);
  auto c = runtime::NDArray::empty({M, N}, DataType::f32());
  m.get_function("mm")(a, b, c);
  expect_matches_naive_loops(a, b, c, M, N, K, what);
}

class MatmulCpuTest : public ::testing::TestWithParam<std::tuple<int, int, int>> {};

TEST_P(MatmulCpuTest, MatchesNaiveLoops) {
  auto [M, N, K] = GetParam();
  Matmul mm = matmul_packed(M, N, K, 32);
  runtime::Module m = build(schedule_matmul_cpu(mm, {}), {mm.A, mm.B, mm.C},
                            Target::parse("llvm -mcpu=native"), "mm");
  auto a = random_array({M, K}, 1), b = random_array({K, N}, 2);
  auto c = runtime::NDArray::empty({M, N}, DataType::f32());
  m.get_function("mm")(a, b, c);
  expect_matches_naive_loops(a, b, c, M, N, K, "");
}

INSTANTIATE_TEST_SUITE_P(Sizes, MatmulCpuTest,
                         ::testing::Values(std::tuple{64, 64, 64}, std::tuple{100, 70, 33},
                                           std::tuple{1, 1, 1}, std::tuple{7, 129, 5},
                                           std::tuple{33, 31, 64}));

// The register tile follows the target's register file: 6 x 16 with AVX2's 16 ymm registers,
// 12 x 32 with AVX-512's 32 zmm registers, 12 x 8 with NEON's 32 q registers.
TEST(MatmulCpuConfigTest, TileComesFromTheTargetsRegisterFile) {
  auto tile = [](const char* target) {
    MatmulCpuConfig c = matmul_cpu_config(CpuModel::of(Target::parse(target)));
    return std::pair{c.mr, c.nr};
  };
  EXPECT_EQ(tile("llvm -mtriple=x86_64-linux-gnu -mcpu=haswell"), (std::pair{6, 16}));
  EXPECT_EQ(tile("llvm -mtriple=x86_64-linux-gnu -mcpu=skylake-avx512"), (std::pair{12, 32}));
  EXPECT_EQ(tile("llvm -mtriple=aarch64-linux-gnu -mcpu=neoverse-n1"), (std::pair{12, 8}));
}

// Given K, the rows stop at what L1 holds of A's rows at once: K = 1024 floats puts every row in
// one set of Zen 4's 8-way L1 (8 rows), not of Zen 5's 12-way one; K = 1056 spreads them.
TEST(MatmulCpuConfigTest, RowsStayWithinWhatL1HoldsOfARowsAtOnce) {
  auto rows = [](const char* cpu, int64_t k) {
    std::string target = std::string("llvm -mtriple=x86_64-linux-gnu -mcpu=") + cpu;
    return matmul_cpu_config(CpuModel::of(Target::parse(target)), DataType::f32(), k).mr;
  };
  if (Target::host().cpu != "znver4") {  // the host's own L1 comes from sysfs
    EXPECT_EQ(rows("znver4", 1024), 8);
    EXPECT_EQ(rows("znver4", 2048), 8);
    EXPECT_EQ(rows("znver4", 1056), 12);
    EXPECT_EQ(rows("znver4", 0), 12);
  }
  if (Target::host().cpu != "znver5") {
    EXPECT_EQ(rows("znver5", 1024), 12);
  }
  if (Target::host().cpu != "haswell") {
    EXPECT_EQ(rows("haswell", 1024), 6);
  }
}

// Each x86 ISA's tile, run on this machine where it can: correct with row and column tails.
TEST(MatmulCpuConfigTest, EachIsasTileMatchesNaiveLoops) {
  for (const char* name : {"llvm -mcpu=haswell", "llvm -mcpu=native"}) {
    Target target = Target::parse(name);
    MatmulCpuConfig cfg = matmul_cpu_config(CpuModel::of(target));
    const int M = 53, N = 2 * cfg.nr + 5, K = 29;
    Matmul mm = matmul_packed(M, N, K, cfg.nr);
    runtime::Module m = build(schedule_matmul_cpu(mm, cfg), {mm.A, mm.B, mm.C}, target, "mm");
    auto a = random_array({M, K}, 3), b = random_array({K, N}, 4);
    auto c = runtime::NDArray::empty({M, N}, DataType::f32());
    m.get_function("mm")(a, b, c);
    expect_matches_naive_loops(a, b, c, M, N, K, name);
  }
}

// B panels that overflow b_block_bytes are computed in column blocks outside the row blocks; a
// block of 3 panels leaves a short last block (8 panels) and the rows a short last tile.
TEST(MatmulCpuTest, ColumnBlocksOfBPanels) {
  const int M = 29, N = 8 * 16 - 3, K = 40;
  MatmulCpuConfig cfg{.mr = 6, .nr = 16};
  cfg.b_block_bytes = 3 * K * cfg.nr * 4 + 100;
  Matmul mm = matmul_packed(M, N, K, cfg.nr);
  PrimFunc f = te::lower(schedule_matmul_cpu(mm, cfg), {mm.A, mm.B, mm.C}, "mm");
  EXPECT_NE(to_string(f).find(".outer.outer"), std::string::npos) << to_string(f);
  expect_lowered_matches_naive_loops(f, M, N, K, 5, "3-panel blocks");
}

// Threads share C's columns when the panels split evenly among them: each thread runs a
// contiguous run of panels (the ones its share of the packing wrote) in equal blocks that fit
// b_block_bytes, here over 8 panels of 16 columns, 4 per thread, with a row tail: one block each
// when 8 panels fit, two of 2 when 3 fit; over 10 panels, blocks of 1 when 2 fit (5 per thread).
// A partial last panel, 3 panels or no threads leave the row blocks in parallel: a guard on the
// parallel loop would have loop partitioning run its blocks one launch after another.
TEST(MatmulCpuTest, ThreadsShareTheColumnsWhenThePanelsSplitEvenly) {
  const int M = 29, K = 40;
  auto lowered = [&](int N, int threads, int64_t b_block_panels) {
    MatmulCpuConfig cfg{.mr = 6, .nr = 16, .threads = threads};
    cfg.b_block_bytes = b_block_panels * K * cfg.nr * 4;
    Matmul mm = matmul_packed(M, N, K, cfg.nr);
    return te::lower(schedule_matmul_cpu(mm, cfg), {mm.A, mm.B, mm.C}, "mm");
  };
  struct Case {
    int panels;
    int64_t fit;
    const char* parallel_loop;
  };
  for (auto [panels, fit, loop] :
       {Case{8, 8, "(j.outer.outer, 0, 2)"}, Case{8, 3, "(j.outer.outer, 0, 4)"},
        Case{10, 2, "(j.outer.outer, 0, 10)"}}) {
    PrimFunc f = lowered(panels * 16, 2, fit);
    std::string text = to_string(f);
    EXPECT_NE(text.find(std::string("parallel for ") + loop), std::string::npos) << text;
    EXPECT_EQ(text.find("parallel for (i.outer"), std::string::npos) << text;
    expect_lowered_matches_naive_loops(
        f, M, panels * 16, K, 11,
        std::to_string(panels) + " panels, blocks in " + std::to_string(fit));
  }
  for (auto [n, threads] : {std::pair{8 * 16 - 3, 2}, std::pair{3 * 16, 2}, std::pair{8 * 16, 0}}) {
    std::string text = to_string(lowered(n, threads, 8));
    EXPECT_NE(text.find("parallel for (i.outer"), std::string::npos)
        << n << " columns, " << threads << " threads:\n"
        << text;
  }
}

// A tile's rows of A over all of K that overflow a_block_bytes split K into equal blocks outside
// the row blocks (k.outer, its steps k.inner.*), C accumulating across them: here blocks of 24
// steps over K = 103 (prime: equal blocks, the last one short), with row and column tails and B
// blocks of 2 panels.
TEST(MatmulCpuTest, BlocksOfKAccumulateIntoC) {
  const int M = 29, N = 5 * 16 - 3, K = 103;
  MatmulCpuConfig cfg{.mr = 6, .nr = 16};
  cfg.a_block_bytes = 6 * 4 * 24;
  cfg.b_block_bytes = 2 * K * cfg.nr * 4;
  Matmul mm = matmul_packed(M, N, K, cfg.nr);
  PrimFunc f = te::lower(schedule_matmul_cpu(mm, cfg), {mm.A, mm.B, mm.C}, "mm");
  std::string text = to_string(f);
  EXPECT_NE(text.find("for (k.inner.outer, 0, 6)"), std::string::npos) << text;
  expect_lowered_matches_naive_loops(f, M, N, K, 7, "blocks of K");
}

// Half of L1 holds the tile's rows of A: 6 rows of AVX2's tile over K = 2048 do not (48 KiB), so
// K runs in blocks of 512 steps, the longest under 682 that divides it; over K = 256 they fit.
TEST(MatmulCpuConfigTest, ABlockIsHalfOfL1) {
  CpuModel cpu = CpuModel::of(Target::parse("llvm -mtriple=x86_64-linux-gnu -mcpu=haswell"));
  MatmulCpuConfig cfg = matmul_cpu_config(cpu);
  EXPECT_EQ(cfg.a_block_bytes, cpu.l1d_bytes / 2);
  auto lowered = [&](int k) {
    Matmul mm = matmul_packed(64, 64, k, cfg.nr);
    return to_string(te::lower(schedule_matmul_cpu(mm, cfg), {mm.A, mm.B, mm.C}, "mm"));
  };
  EXPECT_NE(lowered(2048).find("for (k.outer, 0, 4)"), std::string::npos) << lowered(2048);
  EXPECT_EQ(lowered(256).find("k.inner"), std::string::npos) << lowered(256);
}

// A B block has at least 32 columns, past half of L2 if need be (every block reads all of A): with
// Haswell's 256 KiB L2, one panel of 16 columns over K = 2048 fills half of it, and the blocks
// hold two; over K = 1024 two fit.
TEST(MatmulCpuConfigTest, BBlocksHoldAtLeast32Columns) {
  CpuModel cpu = CpuModel::of(Target::parse("llvm -mtriple=x86_64-linux-gnu -mcpu=haswell"));
  MatmulCpuConfig cfg = matmul_cpu_config(cpu);
  ASSERT_EQ(cfg.nr, 16);
  for (int k : {1024, 2048}) {
    Matmul mm = matmul_packed(64, 8 * cfg.nr, k, cfg.nr);
    PrimFunc f = te::lower(schedule_matmul_cpu(mm, cfg), {mm.A, mm.B, mm.C}, "mm");
    std::string text = to_string(f);
    EXPECT_NE(text.find("for (j.outer.outer, 0, 4)"), std::string::npos) << "K = " << k << ":\n"
                                                                         << text;
    expect_lowered_matches_naive_loops(f, 64, 8 * cfg.nr, k, 13, "K = " + std::to_string(k));
  }
}

// Half of L2 holds the B block; panels that fit it all are not blocked.
TEST(MatmulCpuConfigTest, BBlockIsHalfOfL2) {
  CpuModel cpu = CpuModel::of(Target::parse("llvm -mtriple=x86_64-linux-gnu -mcpu=haswell"));
  EXPECT_EQ(matmul_cpu_config(cpu).b_block_bytes, cpu.l2_bytes / 2);
  Matmul small = matmul_packed(64, 64, 64, 16);
  PrimFunc f = te::lower(schedule_matmul_cpu(small, matmul_cpu_config(cpu)),
                         {small.A, small.B, small.C}, "mm");
  EXPECT_EQ(to_string(f).find(".outer.outer"), std::string::npos) << to_string(f);
}

// B in panels beforehand (matmul_prepacked, as a model's packed weights): the same product, with
// the last panel's columns past N zero; with a column tail (rows in parallel) and with the panels
// shared between two threads.
TEST(MatmulCpuTest, PrepackedPanelsMatchNaiveLoops) {
  const int M = 29, K = 40, nr = 16;
  for (int N : {5 * nr - 3, 8 * nr}) {
    MatmulCpuConfig cfg{.mr = 6, .nr = nr, .threads = 2};
    Matmul mm = matmul_prepacked(M, N, K, nr);
    EXPECT_FALSE(mm.B.defined());
    PrimFunc f = te::lower(schedule_matmul_cpu(mm, cfg), {mm.A, mm.packed_B, mm.C}, "mm");
    runtime::Module m = build(f, Target::parse("llvm -mcpu=native"));
    auto a = random_array({M, K}, 21), b = random_array({K, N}, 22);
    const int panels = (N + nr - 1) / nr;
    auto packed = runtime::NDArray::empty({panels, K, nr}, DataType::f32());
    for (int x = 0; x < panels; ++x)
      for (int k = 0; k < K; ++k)
        for (int z = 0; z < nr; ++z) {
          int col = x * nr + z;
          packed.data<float>()[(x * K + k) * nr + z] = col < N ? b.data<float>()[k * N + col] : 0;
        }
    auto c = runtime::NDArray::empty({M, N}, DataType::f32());
    m.get_function("mm")(a, packed, c);
    expect_matches_naive_loops(a, b, c, M, N, K, std::to_string(N) + " columns");
  }
}

TEST(MatmulCpuAsmTest, MicroKernelUsesVectorFma) {
  Matmul mm = matmul_packed(256, 256, 256, 32);
  Target target = Target::parse("llvm -mcpu=native");
  PrimFunc f = te::lower(schedule_matmul_cpu(mm, {}), {mm.A, mm.B, mm.C}, "mm");
  std::string asm_text = emit_assembly({f}, target);
  // A 32-wide float tile: zmm FMAs with AVX-512, ymm with AVX2.
  std::string reg = target.vector_bits() >= 512 ? "zmm" : "ymm";
  std::regex fma("vfmadd[0-9]+ps[^\\n]*%" + reg);
  auto n = std::distance(std::sregex_iterator(asm_text.begin(), asm_text.end(), fma),
                         std::sregex_iterator());
  // 8 rows x 32 columns / lanes, unrolled 4 times over k.
  EXPECT_GE(n, 8 * 32 / (target.vector_bits() / 32) * 4) << "vector FMAs found: " << n;
}

TEST(MatmulCpuTest, BadPanelWidthIsAnError) {
  using tessel::testing::expect_error;
  expect_error([] { matmul_packed(8, 8, 8, 0); }, {"matmul_packed", "nr", "got 0"});
  expect_error([] { matmul_prepacked(8, 8, 8, -2); }, {"matmul_prepacked", "nr", "got -2"});
  Matmul plain = matmul(8, 8, 8);
  expect_error([&] { schedule_matmul_cpu(plain, {}); }, {"matmul_packed()", "matmul_prepacked()"});
}

}  // namespace
}  // namespace tessel::topi
