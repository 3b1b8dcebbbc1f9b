#include "topi/register_tile.h"

#include <algorithm>
#include <tuple>

#include "topi/matmul.h"

namespace tessel::topi {

int tile_lanes(const CpuModel& cpu) { return cpu.lanes(DataType::f32()); }

// Output columns per tile: one vector (the whole row when shorter). Measured on AVX-512 convs:
// wider tiles of odd widths (28, 24-column tails) ran 3-8x slower; a short tail tile is cheap.
// Strided columns of a row that is not whole vectors take half vectors (of at least 8 lanes)
// where those divide it: MobileNetV2's 3x3 stride-2 depthwise conv to 56 columns ran at 27-28
// GFLOP/s with 8-column tiles against 20 with 16 and a tail (AVX-512, 2 threads); its stride-1
// one to 56 columns ran slower with 8 (75-78 against 91-95). Where half vectors do not divide
// a row of at most two vectors either, the tile spans the row (see local_input_rows). (With
// AVX2's 8 lanes neither: a 14-column row so ran at 0.7x the speed of 8 columns and a tail.)
int64_t col_block(int64_t width, int lanes, bool strided) {
  int half = lanes / 2;
  if (strided && width > lanes && width % lanes != 0 && half >= 8) {
    if (width % half == 0) return half;
    if (width <= 2 * lanes) return width;
  }
  return std::min<int64_t>(width, lanes);
}

// Unrolled rows per tile: `vectors` accumulator vectors each, in half the register file (16 rows
// of one vector with AVX-512's or NEON's 32 registers, 8 with AVX2's 16).
int64_t row_block(int64_t divisor, const CpuModel& cpu, int64_t vectors) {
  int64_t budget = cpu.vector_registers / 2 / vectors;
  for (int64_t r : {16, 8, 4, 2}) {
    if (r <= budget && divisor % r == 0) return r;
  }
  return 1;
}

// With fewer rows than the micro-kernel's (a batch-1 dense layer, an LSTM step's h x R), the
// accumulators go to columns instead: enough independent FMA chains to hide their latency, and B
// read in longer contiguous runs.
int64_t gemm_tile_columns(const CpuModel& cpu, int64_t rows, int64_t columns) {
  MatmulCpuConfig kernel = matmul_cpu_config(cpu);
  int lanes = tile_lanes(cpu);
  int64_t vectors = columns >= kernel.nr ? kernel.nr / lanes : 1;
  if (rows < kernel.mr)
    vectors = std::clamp<int64_t>((columns + lanes - 1) / lanes, vectors, kWideColumnVectors);
  return std::min(columns, vectors * lanes);
}

int64_t cheapest_tile_columns(int64_t width, const std::vector<int64_t>& candidates, int64_t cap,
                              int64_t per_column, const CpuModel& cpu) {
  // Cost in FMA issue slots per reduction step: max(accumulators, chains) + the operand reloads.
  auto tile = [&](int64_t columns) {
    return std::max<int64_t>(columns * per_column, cpu.fma_chains) + per_column;
  };
  auto row = [&](int64_t c) {
    return width / c * tile(c) + (width % c != 0 ? tile(width % c) : 0);
  };
  auto rank = [&](int64_t c) { return std::tuple{-row(c), width % c == 0, c}; };
  int64_t best = 1;
  for (int64_t y : candidates) {
    int64_t c = std::min(width, y);
    if (c <= cap && rank(c) > rank(best)) best = c;
  }
  return best;
}

}  // namespace tessel::topi
