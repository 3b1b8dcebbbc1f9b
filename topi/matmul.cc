#include "topi/matmul.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "ir/error.h"

namespace tessel::topi {

Matmul matmul(PrimExpr M, PrimExpr N, PrimExpr K, DataType dtype) {
  Matmul mm;
  mm.A = te::placeholder({M, K}, dtype, "A");
  mm.B = te::placeholder({K, N}, dtype, "B");
  mm.k = te::reduce_axis(0, K, "k");
  mm.C = te::compute(
      {M, N},
      [&](te::Expr i, te::Expr j) { return te::sum(mm.A(i, mm.k) * mm.B(mm.k, j), {mm.k}); }, "C");
  return mm;
}

namespace {

void check_panel_width(const char* what, int nr) {
  if (nr <= 0) throw Error(fmt::format("{}: panel width nr must be positive, got {}", what, nr));
}

// C[i, j] = sum over k of A[i, k] * packed_B[j / nr, k, j % nr], into mm.k and mm.C.
void multiply_panels(Matmul& mm, PrimExpr M, PrimExpr N, PrimExpr K, int nr) {
  mm.k = te::reduce_axis(0, K, "k");
  mm.C = te::compute(
      {M, N},
      [&](te::Expr i, te::Expr j) {
        return te::sum(mm.A(i, mm.k) * mm.packed_B(floordiv(j, nr), mm.k, floormod(j, nr)), {mm.k});
      },
      "C");
}

}  // namespace

Matmul matmul_packed(PrimExpr M, PrimExpr N, PrimExpr K, int nr, DataType dtype) {
  check_panel_width("matmul_packed", nr);
  Matmul mm;
  mm.A = te::placeholder({M, K}, dtype, "A");
  mm.B = te::placeholder({K, N}, dtype, "B");
  // Columns past N in the last panel read a clamped (valid) address and are zeroed.
  mm.packed_B = te::compute({ceildiv(N, nr), K, nr},
                            [&](te::Expr x, te::Expr y, te::Expr z) {
                              PrimExpr col = x * nr + z;
                              return select(col < N, mm.B(y, min(col, N - 1)), make_zero(dtype));
                            },
                            "packed_B", {"x", "y", "z"});
  multiply_panels(mm, M, N, K, nr);
  return mm;
}

Matmul matmul_prepacked(PrimExpr M, PrimExpr N, PrimExpr K, int nr, DataType dtype) {
  check_panel_width("matmul_prepacked", nr);
  Matmul mm;
  mm.A = te::placeholder({M, K}, dtype, "A");
  mm.packed_B = te::placeholder({ceildiv(N, nr), K, nr}, dtype, "packed_B");
  multiply_panels(mm, M, N, K, nr);
  return mm;
}

int matmul_tile_rows(const CpuModel& cpu, int column_vectors, int64_t row_bytes) {
  // Accumulators in at most three quarters of the register file and short of the operands:
  // LLVM keeps some B vectors of the unrolled k steps live as well, and fuller tiles spilled
  // (AVX-512 at 1024^3: 14 x 32 ran at 0.8x the speed of 12 x 32 and 8 x 32).
  int accumulators =
      std::min(cpu.vector_registers * 3 / 4, cpu.vector_registers - column_vectors - 2);
  int rows = std::max(1, accumulators / column_vectors);
  // Every k step of the tile reads one element of each of its rows of A: rows sharing an L1 set
  // beyond its ways evict each other (1024^3 on Zen 4, AVX-512, 2 threads: 12 x 32 at 155-184
  // GFLOP/s, 8 x 32 at 170-196; at 1056^3, rows in distinct sets, 12 x 32 198-206).
  if (row_bytes > 0)
    rows = static_cast<int>(std::min<int64_t>(rows, cpu.l1d_alias_free_rows(row_bytes)));
  return rows;
}

MatmulCpuConfig matmul_cpu_config(const CpuModel& cpu, DataType dtype, int64_t k) {
  constexpr int kColumnVectors = 2;
  MatmulCpuConfig cfg;
  cfg.nr = kColumnVectors * cpu.lanes(dtype);
  cfg.mr = matmul_tile_rows(cpu, kColumnVectors, k * dtype.element_of().bytes());
  cfg.a_block_bytes = cpu.l1d_bytes / 2;
  cfg.b_block_bytes = cpu.l2_bytes / 2;
  cfg.threads = cpu.cores;
  return cfg;
}

namespace {

// Reduction steps per block of K when the tile's rows of A over all of K overflow
// cfg.a_block_bytes: the longest that fits, a multiple of cfg.k_unroll, that divides K (no
// guard in the reduction) unless that is under half what fits, else K in equal blocks; none when
// the rows fit, or K is not known at compile time.
std::optional<int64_t> k_block(const Matmul& mm, const MatmulCpuConfig& cfg) {
  const int64_t* k = as_const_int(mm.A.shape()[1]);
  if (!k || cfg.a_block_bytes <= 0) return std::nullopt;
  int64_t unroll = std::max(1, cfg.k_unroll);
  int64_t fit = std::max(unroll, cfg.a_block_bytes / (cfg.mr * mm.A.dtype().bytes()));
  if (*k <= fit) return std::nullopt;
  for (int64_t steps = fit / unroll * unroll; steps * 2 >= fit; steps -= unroll) {
    if (*k % steps == 0) return steps;
  }
  int64_t blocks = (*k + fit - 1) / fit;
  int64_t steps = (*k + blocks - 1) / blocks;
  return (steps + unroll - 1) / unroll * unroll;
}

// C's columns in blocks of B panels: how many panels a block has, and whether the blocks run in
// parallel.
struct ColumnBlocks {
  int64_t panels = 0;
  bool parallel = false;
};

// Blocks of the panels that fit cfg.b_block_bytes (at least 32 columns), or, when cfg.threads
// share C's columns, each thread's share in equal blocks of at most that many panels (fewer when
// no larger divisor of the share is); none when all panels fit and the rows run in parallel,
// or K or N is not known at compile time. The threads share the columns only when neither the
// columns nor the panels leave a tail: a guard on the parallel loop's variable would have loop
// partitioning split it into launches that each run one block.
std::optional<ColumnBlocks> column_blocks(const Matmul& mm, const MatmulCpuConfig& cfg) {
  const int64_t* k = as_const_int(mm.A.shape()[1]);
  const int64_t* n = as_const_int(mm.C.shape()[1]);
  if (!k || !n) return std::nullopt;
  int64_t panel_bytes = *k * cfg.nr * mm.packed_B.dtype().bytes();
  int64_t panels = (*n + cfg.nr - 1) / cfg.nr;
  // At least 32 columns a block, past the cache's share if need be: every block reads all of A,
  // 4 bytes for each 2 x columns flops. AVX2 code at 2048^3 (Haswell's 256 KiB L2, half of which
  // holds one 128 KiB panel of 16 columns) on Zen 4, four runs of each build in turns: 67-79% of
  // the FMA peak at 1 thread in blocks of one panel, 78-86% in blocks of two.
  constexpr int64_t kMinColumns = 32;
  int64_t fit = cfg.b_block_bytes > 0 ? std::max({int64_t{1}, cfg.b_block_bytes / panel_bytes,
                                                  (kMinColumns + cfg.nr - 1) / cfg.nr})
                                      : panels;
  int64_t threads = cfg.threads;
  if (cfg.parallel && threads > 1 && *n % cfg.nr == 0 && panels % threads == 0 &&
      panels >= 2 * threads) {
    int64_t share = panels / threads, block = std::min(fit, share);
    while (share % block != 0) --block;
    return ColumnBlocks{block, true};
  }
  if (fit >= panels) return std::nullopt;
  return ColumnBlocks{fit, false};
}

}  // namespace

te::Schedule schedule_matmul_cpu(const Matmul& mm, const MatmulCpuConfig& cfg) {
  if (!mm.packed_B.defined())
    throw Error("schedule_matmul_cpu needs a matmul_packed() or matmul_prepacked() computation");
  te::Schedule s = te::create_schedule({mm.C});
  std::optional<int64_t> k_steps = k_block(mm, cfg);
  // Blocks of K accumulate into C itself (LLVM keeps the tile in registers within a block);
  // otherwise the tile accumulates in a local buffer over all of K.
  te::Tensor acc = k_steps ? mm.C : s.cache_write(mm.C, MemScope::kLocal);

  te::Stage c = s[mm.C];
  auto [io, jo, ii, ji] = c.tile(mm.C.axis(0), mm.C.axis(1), cfg.mr, cfg.nr);
  c.vectorize(ji);
  std::vector<te::IterVar> outer = {io, jo};  // the loops outside a tile, in order
  te::IterVar parallel_loop = io;
  if (auto blocks = column_blocks(mm, cfg)) {
    // Without them each row block streams all of B from L3 (2048^3 on AVX-512, 1 thread: 92-145
    // GFLOP/s; blocks of 2-8 panels: 178-182). Shared among the threads, each reads the panels
    // it packed (256^3 on Zen 4, AVX-512, 2 threads, runs in turns: 194-202 GFLOP/s, against
    // 141-186 with the row blocks in parallel).
    auto [jb, ji_panel] = c.split(jo, blocks->panels);
    outer = {jb, io, ji_panel};
    if (blocks->parallel) parallel_loop = jb;
  }
  if (cfg.parallel) c.parallel(parallel_loop);

  te::Stage cc = s[acc];
  te::IterVar k = mm.k;
  if (k_steps) {
    // A block of K inside the row block: the tile's rows of A stay in L1 across the panels.
    // (2048^3 at 1 thread, Zen 4: AVX2 code 72 -> 92-103 GFLOP/s with the blocks. Outside the
    // row blocks, as GotoBLAS orders them, AVX-512 code ran at 84-88 against 97-105 so.)
    auto [k_block_loop, k_in_block] = c.split(mm.k, *k_steps);
    outer.insert(outer.end() - 1, k_block_loop);
    k = k_in_block;
  } else {
    cc.compute_at(c, outer.back());
  }
  auto [ko, ki] = cc.split(k, cfg.k_unroll);
  te::IterVar rows = k_steps ? ii : cc.axis(0), cols = k_steps ? ji : cc.axis(1);
  std::vector<te::IterVar> tile = {ko, ki, rows, cols};
  if (k_steps) {
    outer.insert(outer.end(), tile.begin(), tile.end());
  } else {
    outer.insert(outer.end(), {ii, ji});
    cc.reorder(tile);
    cc.vectorize(cols);
  }
  c.reorder(outer);
  cc.unroll(ki);
  cc.unroll(rows);

  if (!mm.B.defined()) return s;  // matmul_prepacked: no packing stage
  te::Stage pb = s[mm.packed_B];
  if (cfg.parallel) pb.parallel(mm.packed_B.axis(0));
  pb.vectorize(mm.packed_B.axis(2));
  return s;
}

}  // namespace tessel::topi
