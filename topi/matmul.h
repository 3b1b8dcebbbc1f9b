// Matrix multiply C[M, N] = A[M, K] * B[K, N]: the plain compute, and a packed variant with a
// register-tiled CPU schedule (B repacked into [ceil(N/nr), K, nr] panels so the micro-kernel
// reads it contiguously; C accumulated in an mr x nr local tile).
#pragma once

#include "codegen/cpu_model.h"
#include "te/operation.h"
#include "te/schedule.h"

namespace tessel::topi {

struct Matmul {
  te::Tensor A, B, C;
  te::Tensor packed_B;  // defined for matmul_packed only
  te::IterVar k;
};

Matmul matmul(PrimExpr M, PrimExpr N, PrimExpr K, DataType dtype = DataType::f32());

struct MatmulCpuConfig {
  int mr = 8;   // rows of the register tile
  int nr = 32;  // columns of the register tile (and of a B panel); a multiple of the vector width
  int k_unroll = 4;  // reduction steps unrolled in the micro-kernel
  // Cache for the B panels that every row block reads in turn: C's columns are computed in blocks
  // of panels that fit it (at least 32 columns, past it if need be), so they stay cached across
  // the row blocks. 0: one block of all columns.
  int64_t b_block_bytes = 0;
  // L1's share for the mr rows of A that a tile reads at every k step: when K's rows overflow it,
  // the reduction runs in blocks that fit, outside the row blocks, and C accumulates across them,
  // so a block of A's rows stays in L1 across the column panels. 0: one block of all of K.
  int64_t a_block_bytes = 0;
  bool parallel = true;
  // Threads to share C's columns among: when the B panels split evenly among them (at least 2
  // each, no partial panel), each thread computes a contiguous run of panels, the ones it
  // packed, instead of every thread reading all of B. 0 or 1, or other panels: the row blocks
  // run in parallel.
  int threads = 0;
};

// The register tile for `cpu`: two vectors of columns (`dtype` lanes each) and as many rows as
// leave room for the operands (6 x 16 with AVX2's 16 ymm registers, 12 x 32 with AVX-512's 32 zmm
// registers), blocks of A's rows in half of L1, B blocks in half of L2 (at least 32 columns of
// them, schedule_matmul_cpu), and the columns shared
// among the target's cores. Given the reduction's length `k`, the rows are also at most as many
// as L1 holds at once when A's rows lie k elements apart (CpuModel::l1d_alias_free_rows: 8 on
// Zen 4 at k = 1024).
MatmulCpuConfig matmul_cpu_config(const CpuModel& cpu, DataType dtype = DataType::f32(),
                                  int64_t k = 0);
// The rows of such a tile `column_vectors` vectors wide; given the bytes between A's rows, at most
// as many as L1 holds at once (CpuModel::l1d_alias_free_rows).
int matmul_tile_rows(const CpuModel& cpu, int column_vectors, int64_t row_bytes = 0);

Matmul matmul_packed(PrimExpr M, PrimExpr N, PrimExpr K, int nr, DataType dtype = DataType::f32());
// matmul_packed's product with B already in its panels, as a model's constant weights are packed
// at compile time: `packed_B` is the [ceil(N/nr), K, nr] placeholder (columns past N zero), `B`
// is undefined.
Matmul matmul_prepacked(PrimExpr M, PrimExpr N, PrimExpr K, int nr,
                        DataType dtype = DataType::f32());

// Schedules a matmul_packed() or matmul_prepacked() result: tile C by (mr, nr), compute the tile in
// registers (cache_write + compute_at), vectorize the columns, unroll rows and k, and (K and N
// known) iterate over blocks of K inside the row blocks (cfg.a_block_bytes; C itself then
// accumulates) and over blocks of B panels outside them (cfg.b_block_bytes). The column blocks run
// in parallel when cfg.threads share the panels evenly, else the row blocks. B's packing, when the
// computation has it, runs in parallel over the panels first.
te::Schedule schedule_matmul_cpu(const Matmul& mm, const MatmulCpuConfig& cfg);

}  // namespace tessel::topi
