// Register-tile sizes from the target's CpuModel, shared by the CPU schedules (topi/schedule_nn.cc,
// topi/schedule_winograd.cc) and the weight packing that must agree with them
// (passes/pack_dense_weights). Tiles are sized in float32 vectors whatever the dtype: the policy
// was measured on float32 models.
#pragma once

#include <cstdint>
#include <vector>

#include "codegen/cpu_model.h"

namespace tessel::topi {

// Float32 lanes of one vector register of `cpu`.
int tile_lanes(const CpuModel& cpu);

// The widest column tile of the tiled template, in vectors (a GEMM with few rows falls back to it).
inline constexpr int64_t kWideColumnVectors = 8;

// Output columns per tile over a row `width` wide: one vector of `lanes` (the whole row when
// shorter); strided columns (a depthwise conv of stride 2) may take half vectors or the row.
int64_t col_block(int64_t width, int lanes, bool strided);

// Unrolled rows per tile dividing `divisor`: `vectors` accumulator vectors each, in half the
// register file.
int64_t row_block(int64_t divisor, const CpuModel& cpu, int64_t vectors = 1);

// The columns of a GEMM's fallback register tile with `rows` rows (the extent of its row axis) and
// `columns` columns: the micro-kernel's two vectors, or with fewer rows than the micro-kernel's
// up to kWideColumnVectors vectors. passes/pack_dense_weights packs constant B in panels this wide.
int64_t gemm_tile_columns(const CpuModel& cpu, int64_t rows, int64_t columns);

// The unrolled columns of a register tile of `per_column` accumulator vectors a column over a row
// of `width` columns: of `candidates` (each capped at the width) up to `cap`, the count whose row
// of tiles is cheapest when a tile with fewer accumulators than cpu.fma_chains waits on its own
// FMAs, and every tile reloads its per_column operand vectors (ConvNCHWc's and ConvWinograd's
// GEMM tiles: weights a step); of equals, a count that divides the row, then the widest.
int64_t cheapest_tile_columns(int64_t width, const std::vector<int64_t>& candidates, int64_t cap,
                              int64_t per_column, const CpuModel& cpu);

}  // namespace tessel::topi
