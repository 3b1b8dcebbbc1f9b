// The shape of a tiled reduction (topi/schedule_nn.cc's template) and ConvNCHWc's fallback
// policy over it (topi/packed_conv_tile.cc): tile columns, the chunked reduction, the reduction
// order. Internal to topi.
#pragma once

#include <cstdint>
#include <vector>

#include "codegen/cpu_model.h"

namespace tessel::topi {

inline int64_t product_of(const std::vector<int64_t>& v) {
  int64_t p = 1;
  for (int64_t x : v) p *= x;
  return p;
}

// The shape of a tiled reduction: its output, the tile axes and the reduction.
struct TiledShape {
  std::vector<int64_t> out;  // the reduction's output shape
  int row = -1;              // the output axis blocked into unrolled rows; -1 for none
  int64_t row_divisor = 0;   // row blocks divide this
  int y = -1;  // the second unrolled output axis (a conv's output height); -1 for none
  bool channel_vectors = false;  // output channels vectorized (ConvNCHWc's blocks)
  bool gemm = false;             // a matrix product's micro-kernel tile
  bool local_inputs = false;     // inputs computed per row of tiles (grouped convs, pools)
  bool strided_columns = false;  // a depthwise conv strided along its columns
  // ConvNCHWc (dense) over a padded input: it reads the input through guards on the window's edge
  // (tir/transforms/guard_padded_reads.h), which loop partitioning lifts off the interior tiles,
  // rather than copying it padded first (padding_read_in_place). On Zen 4 with AVX-512,
  // ResNet-50's 3x3 convs at 28x28, 14x14 and 7x7 ran 1.08x, 1.11x and 1.2x faster at two
  // threads so, ResNet-18 1.16-1.21x and DenseNet-121 1.09-1.10x end to end.
  bool padding_in_reads = false;
  // ConvNCHWc, 1x1, reading its input at its own output positions (stride 1, or a subsampled
  // copy; no padding): the rows and columns of its map are one run of positions in memory, which a
  // chunked reduction tiles as one axis (TileConfig::flat in topi/schedule_nn.cc).
  bool pointwise_map = false;
  // ConvNCHWc reads a stage of its group computed at its own map's positions, [n, blocks, h, w, b]
  // (DenseNet's batch norm and Relu before a 1x1 conv, a strided 1x1 conv's subsampled copy).
  bool map_input_stage = false;
  int vector_registers = 0;     // the target's
  std::vector<int64_t> reduce;  // reduction extents, in compute order
  int64_t work = 0;             // output points x reduction length
  int64_t l1d_bytes = 0;        // the target's L1 data cache (a chunked reduction's budget)
  int64_t l2_bytes = 0;         // the target's L2 cache of one core
  int lanes = 0;                // the target's float lanes per vector
  int cores = 0;                // the target's cores (0: unknown)
};

// The points of a conv's kernel window: the reduction's extent past its first axis (the input
// channels); 1 for a 1x1 conv.
inline int64_t window_points(const TiledShape& t) {
  return product_of(t.reduce) / t.reduce.front();
}

// ConvNCHWc's candidate output columns per tile (capped at the row width).
extern const std::vector<int64_t> kPackedColumns;

// Whether a conv's threads share out its map by rows, its channels inside: each tile reads every
// input channel of its rows, which the conv before it, split the same way, wrote on this core
// (MobileNetV2's direct 1x1 projections on an Intel Xeon, 2 threads: 1.6-2x faster). Not where the
// weights outweigh the input, which each thread would then read whole; a depthwise conv, padding
// its tiles' input rows, keeps its channels outermost too (split by rows it stopped scaling). A
// packed conv's map [n, blocks, h, w, b] too, and its blocked input stage with it
// (input_rows_shared_out): DenseNet-121 on the Intel Xeon at two threads, kernels timed in the
// model, 0.87x and 0.96x the time in two runs (its 1x1 convs after a batch norm and Relu
// 0.85-0.93x, its 3x3 convs, which read their rows, 0.89-0.99x); so too one unpacking its output
// to NCHW: SqueezeNet's squeeze convs at 13x13 0.73-0.85x (they had gained nothing from a second
// thread).
bool rows_shared_out(const TiledShape& t);

// Whether a 1x1 conv whose rows are shared out computes its map's input stage
// (TiledShape::map_input_stage) inside its own parallel loop, one row of the map at a time before
// the row's tiles of all its channel blocks, so that the tiles read the row from the cache: at root
// the stage wrote the whole map and the tiles read it back, both from memory once the map outgrows
// L2. The threads then share out the rows alone, so only with at least 4 rows per core (two cores
// when unknown); the fallback leaves such a conv unchunked (fallback_reduce_chunk), and a tuned
// config that chunks it computes the stage at root.
bool input_stage_per_row(const TiledShape& t);

// The chunk sizes of ConvNCHWc's reduction (knob "reduce_chunk") that divide the input channels,
// after 0 (no chunks); only 0 but for a map of several axes whose rows of one block fit half of
// L1.
std::vector<int64_t> reduce_chunk_candidates(const TiledShape& t);

// The output rows that a chunked reduction's accumulators span: the most that divide the first
// spatial axis with the buffer within half of L1 (or, for a 1x1 conv whose tiles share out evenly
// among the cores, within a sixteenth of L2), at least one.
int64_t accumulator_strip(const TiledShape& t, int64_t rows, int64_t ys);

// The strip of a parallel chunked reduction: accumulator_strip's, with enough strips and blocks
// to share among the cores.
int64_t parallel_strip(const TiledShape& t, int64_t rows, int64_t ys);

// The fallback's chunk for a tile of `rows` blocks x `ys` columns; 0 for none.
int64_t fallback_reduce_chunk(const TiledShape& t, int64_t rows, int64_t ys, const CpuModel& cpu);

// ConvNCHWc's fallback tile: blocks of output channels x output columns.
struct PackedTile {
  int64_t rows = 1, ys = 1;
};
PackedTile packed_fallback(const TiledShape& t, const CpuModel& cpu);

// The fallback's columns of a chunked reduction over a pointwise map, whose strips of `rows` blocks
// are one run of positions: the cheapest tiles of the strip's positions (at most a row's width).
int64_t flat_map_columns(const TiledShape& t, int64_t rows, int64_t strip, const CpuModel& cpu);

// ConvNCHWc's fallback reduction order over (input channel, kernel offsets...).
std::vector<int64_t> packed_reduce_order(const TiledShape& t, const CpuModel& cpu,
                                         int64_t reduce_chunk);

// Whether the fallback unrolls the reduction's innermost loop (knob "unroll_k").
bool fallback_unroll_columns(const TiledShape& t, const CpuModel& cpu,
                             const std::vector<int64_t>& order);

}  // namespace tessel::topi
