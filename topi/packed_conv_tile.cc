#include "topi/packed_conv_tile.h"

#include <algorithm>

#include "topi/register_tile.h"

namespace tessel::topi {

// ConvNCHWc's candidate output columns per tile (capped at the row width).
const std::vector<int64_t> kPackedColumns = {1, 2, 3, 4, 5, 6, 7, 8, 14, 16};

namespace {

// ConvNCHWc's chunked reduction (knob "reduce_chunk"). A tile's reduction over all C input
// channels reads the block's whole weights, C x kernel x b floats; once that is more than L1
// holds, every tile of the map streams them from L2 again (ResNet-50's 2048 -> 512 1x1 conv at
// 7x7: 128 KiB per block, read by 9 tiles). With chunks, the accumulators of a strip of the map
// live in a local buffer, and each chunk of channels runs over the strip before the next: the
// weights are read once per strip, the buffer and a chunk's inputs stay in L1 (or, for a 1x1
// conv, the buffer in L2 and a chunk's weights in L1: accumulators_in_l2).
const std::vector<int64_t> kReduceChunks = {8, 16, 32, 64, 128};

// The bytes of one output row of a block's accumulators (ConvNCHWc with a map of several axes),
// with its columns in whole tiles of `ys`.
int64_t accumulator_row_bytes(const TiledShape& t, int64_t ys) {
  int64_t columns = (t.out[t.y] + ys - 1) / ys * ys;
  return product_of(std::vector<int64_t>(t.out.begin() + 3, t.out.begin() + t.y)) * columns *
         t.out.back() * 4;
}

// A window over at most 128 input channels with 16 registers: chunked by 8 even in strips, the
// kernel offsets outside a chunk's channels. Zen 3 (AVX2), one thread, `tessel tune --trials 1`:
// DenseNet-121's 3x3 convs (128 -> 32) at 56x56 2.68 -> 2.52 ms, 28x28 0.67 -> 0.63, 14x14 0.182
// -> 0.172, 7x7 0.044 -> 0.043; ResNet-50's stride-2 3x3 conv over 128 channels 2.88 -> 2.59. Over
// 256 and 512 channels (ResNet-50's at 14x14 and 7x7) that order ran 1.05-1.15x slower.
bool narrow_window(const TiledShape& t, const CpuModel& cpu) {
  return cpu.vector_registers < 32 && window_points(t) > 1 && t.reduce.front() <= 128;
}

// ConvNCHWc's fallback tile: enough blocks of output channels that each broadcast input element
// feeds two vector FMAs (two blocks with AVX-512's 16 lanes, one of two vectors with AVX2's 8),
// and output columns up to half the register file of accumulators, as many as cheapest_tile_columns
// finds cheapest. Measured on ResNet-50 at one thread on Zen 5: with AVX-512, 2 blocks x 7
// columns ran in 53 ms, 1 x 14 in 63, 2 x 14 and 4 x 7 (28 accumulators) in 57-68, 4 x 4 in
// 61-70. A 1x1 conv, whose reduction reads one input element per channel, takes the register
// file less the operands, up to 16 accumulators: on Zen 3 (AVX2, 16 registers) its 1 x 6 tiles ran
// ResNet-50's 1x1 convs in 0.91x the time of 1 x 4, while convs with a window ran slower so.
// Four-block 1x1 tiles (packed_blocks) take the registers but the four weight vectors.
int64_t packed_accumulators(const TiledShape& t, const CpuModel& cpu, int64_t blocks) {
  if (window_points(t) > 1) return cpu.vector_registers / 2;
  return blocks == 4 ? cpu.accumulator_registers() - blocks
                     : std::min(cpu.accumulator_registers(), 16);
}

// The blocks of output channels in the packed tile, when a block is one vector (else one):
// - two where they divide the channels (above);
// - one for a depthwise conv: its blocks read their own input channels, so a second block in the
//   tile shares no broadcast, only takes the registers that columns (which share inputs across
//   the kernel's columns) would. MobileNetV2's depthwise convs (AVX-512, Intel Xeon, one thread,
//   kernels timed in the model in turns) 0.63-0.90x the time with one block than with two, the
//   model 0.95x; 40 tuned configs of each had chosen one block of 4-16 columns;
// - four for a 1x1 conv over at least 128 channels where they divide the channels: 4 x 6 reads 10
//   operands for 24 FMAs where 2 x 8 reads 10 for 16 (as MLAS's pointwise kernels do). Intel
//   Xeon, kernels timed in the model in turns, against the model's unchanged kernels in the same
//   runs: ResNet-50's 31 such convs 0.95x the time at one thread, 0.93x at two; DenseNet-121's
//   0.96x, MobileNetV2's 0.95x. Over fewer channels (SqueezeNet's expand convs over 16-64)
//   1.07-1.13x; 4 x 7 (28 accumulators) 1.16x on ResNet-50.
int64_t packed_blocks(const TiledShape& t, int64_t vectors) {
  if (vectors != 1 || t.local_inputs) return 1;
  if (window_points(t) == 1 && t.reduce.front() >= 128 && t.row_divisor % 4 == 0) return 4;
  return t.row_divisor % 2 == 0 ? 2 : 1;
}

// A 1x1 conv over at least 128 channels whose tile is one block of one vector (an odd number of
// blocks with AVX-512): its reduction in chunks of 8 channels, whose 8 weight vectors LLVM then
// keeps in registers over the strip's tiles (it unrolls the chunk's loop and hoists their loads),
// with at most 8 columns of accumulators beside them. Intel Xeon (AVX-512), one thread, 50 tuned
// configs each: SqueezeNet's classifier (512 -> 1000 at 13x13) 1.57 -> 1.03 ms, its squeeze convs
// to 48 channels 1.5-1.85x faster, 64 -> 16 at 55x55 1.15x; every best config chunked by 8 with 6-8
// columns (unchunked, 13 columns ran slowest; 13 columns chunked by 8, 1.2x slower than 8). Over
// fewer channels the accumulators' trips to memory cost more than the weights: MobileNetV2's 24 ->
// 144 convs at 56x56 1.32x slower at one thread, its 32 -> 16 at 112x112 1.07x.
// A two-block tile too where its weights outgrow L1 (which its unchunked tiles then stream from
// L2 for every tile of the map), its 16 weight vectors beside at most 6 columns: MobileNetV2's
// 576 -> 96 at 14x14 and 576 / 960 -> 160 at 7x7 (six and ten blocks) on the Intel Xeon, kernels
// timed in the model in turns, 0.80-0.82x the time at one thread and 0.89-0.93x at two (medians
// of the rounds' ratios; the tuned best of 120 configs of the first had chunked by 8-16 with 5
// columns). Not where they fit L1: its 144 / 192 -> 24 / 32 at 28x28 and 56x56 ran 1.15-1.4x
// slower so.
constexpr int64_t kWeightStationaryChunk = 8;

// Measured with AVX-512's 16 lanes only (a NEON block of 4 lanes is one vector too).
bool weight_stationary(const TiledShape& t, int64_t rows) {
  if (t.lanes < 16) return false;
  int64_t vectors = (t.out.back() + t.lanes - 1) / t.lanes;
  if (rows > 2 || vectors != 1 || t.local_inputs || window_points(t) != 1 || t.reduce.front() < 128)
    return false;
  if (rows == 2 && rows * t.reduce.front() * t.out.back() * 4 <= t.l1d_bytes) return false;
  std::vector<int64_t> chunks = reduce_chunk_candidates(t);
  return std::find(chunks.begin(), chunks.end(), kWeightStationaryChunk) != chunks.end();
}

// The cores that a conv's tasks are shared out among: the target's, two when unknown.
int64_t task_cores(const TiledShape& t) { return t.cores > 0 ? t.cores : 2; }

// A 1x1 conv's chunked reduction may keep its accumulators in L2 (up to a sixteenth of it) when its
// tiles' blocks share out evenly among the cores (one strip each) and are not weight-stationary:
// in chunks of up to 128 channels (fallback_reduce_chunk), a tile's chunk of weights stays in L1
// while the whole map's tiles run over it, as MLAS's pointwise kernels do (128 channels a pass,
// the output accumulated in memory), where unchunked every tile streams all its weights from L2.
// Intel Xeon (2 MiB L2), ResNet-50's 1x1 convs at 14x14 over 1024 channels (4-block tiles, 50-100
// KiB of accumulators), kernels timed in the model in turns against its unchanged kernels: 0.79x
// the time at two threads, 0.97x at one. Not at 28x28 (200 KiB, or 14-row strips): 1.2x slower at
// two threads; nor for a weight-stationary tile, whose L1 strips give two tasks per core; and only
// where the tiles' blocks share out evenly among the cores, one strip each: SqueezeNet's 512 -> 64
// at 13x13 (one 4-block tile, which parallel_strip splits into rows that each re-read the weights)
// ran 1.07x slower, MobileNetV2's 576 -> 96 at 14x14 (three 2-block tiles on two cores) 1.3x at two
// threads.
bool accumulators_in_l2(const TiledShape& t, int64_t rows) {
  return window_points(t) == 1 && !weight_stationary(t, rows) &&
         t.out[0] * ((t.out[1] + rows - 1) / rows) % task_cores(t) == 0;
}

}  // namespace

// DenseNet-121's batch norm and Relu before its 1x1 convs (3.2 MB at 56x56): on the Intel Xeon its
// 25 convs so changed, timed in the model in turns, took 0.74x the time at one thread and 0.82x at
// two; ResNet-50's subsampled copy before its strided 1x1 conv at 56x56, 0.85x and 0.93x. A task
// computes the stage once for all its channel blocks (one row and one block a task: those 25
// kernels took 1.06x the time).
bool input_stage_per_row(const TiledShape& t) {
  return window_points(t) == 1 && t.map_input_stage && rows_shared_out(t) &&
         t.out[0] * t.out[2] >= 4 * task_cores(t);
}

bool rows_shared_out(const TiledShape& t) {
  if (t.gemm || t.local_inputs || t.row != 1) return false;
  if (t.channel_vectors ? t.y != 3 || t.out.size() != 5 : t.y != 2 || t.out.size() != 4)
    return false;
  int64_t channels = t.channel_vectors ? t.out[1] * t.out.back() : t.out[1];
  return channels * product_of(t.reduce) <= t.reduce.front() * t.out[2] * t.out[3];
}

// The chunk sizes that divide the input channels, after 0 (no chunks); only 0 but for ConvNCHWc
// over a map of several axes whose rows of one block fit half of L1.
std::vector<int64_t> reduce_chunk_candidates(const TiledShape& t) {
  std::vector<int64_t> chunks{0};
  if (!t.channel_vectors || t.y == 2 || accumulator_row_bytes(t, 1) > t.l1d_bytes / 2)
    return chunks;
  for (int64_t k : kReduceChunks) {
    if (k < t.reduce.front() && t.reduce.front() % k == 0) chunks.push_back(k);
  }
  return chunks;
}

int64_t accumulator_strip(const TiledShape& t, int64_t rows, int64_t ys) {
  int64_t row_bytes = rows * accumulator_row_bytes(t, ys), strip = 1;
  int64_t budget = t.l1d_bytes / 2;
  if (accumulators_in_l2(t, rows)) budget = std::max(budget, t.l2_bytes / 16);
  for (int64_t h = 1; h <= t.out[2] && h * row_bytes <= budget; ++h) {
    if (t.out[2] % h == 0) strip = h;
  }
  return strip;
}

// A parallel chunked reduction's strip: accumulator_strip's, or fewer rows where its strips and
// row blocks would leave a core without a task (two cores when unknown), or a weight-stationary
// tile's under two tasks per core, whose strips re-read only their chunks' few weights. On the
// Intel Xeon at two threads: DenseNet-121's 3x3 convs at 7x7 (two blocks, one task) 0.77x the
// time; SqueezeNet's squeeze convs to 48 channels at 13x13 (three blocks, one strip each) ran
// 1.4x slower than unchunked with whole-map strips. Its 1x1 convs at 7x7 (two tasks of 4-block
// tiles, whose weights fill L2) ran 1.17x slower split by rows.
int64_t parallel_strip(const TiledShape& t, int64_t rows, int64_t ys) {
  int64_t strip = accumulator_strip(t, rows, ys);
  int64_t blocks = t.out[0] * ((t.out[1] + rows - 1) / rows);
  int64_t tasks = (weight_stationary(t, rows) ? 2 : 1) * task_cores(t);
  while (strip > 1 && blocks * (t.out[2] / strip) < tasks) {
    do --strip;
    while (t.out[2] % strip != 0);
  }
  return strip;
}

// The fallback chunks a conv whose block weights take more than half of L1 into chunks of 32
// input channels for a 1x1 conv, 8 for a window (or the most that divide them), where the
// accumulators of the whole map fit the buffer. Measured on Zen 3 (AVX2, 32 KiB L1) at one thread,
// ResNet-50's 1x1 convs at 7x7: 2048 -> 512 2.4-2.6 -> 1.6-1.9 ms, 512 -> 2048 2.3-2.5 -> 1.6; at
// 14x14, 1024 -> 256 1.63-1.65 -> 1.26-1.34; MobileNetV2's at 7x7: 320 -> 1280 0.81-0.94 ->
// 0.62-0.64 ms, 960 -> 320 0.55-0.66 -> 0.42-0.51, 576 -> 160 0.19 -> 0.13-0.15; ResNet-50's 3x3
// convs to 14x14 and 7x7 (256 and 512 channels) 3.0-3.2 -> 2.8-3.0 ms with chunks of 8,
// DenseNet-121's (128 channels) within 2%. Not chunked: 1x1 convs over at most 256 channels (16
// KiB: at 14x14 equal or slower, over 64 or 96 channels 1.1-1.4x slower), and maps whose
// accumulators take strips (at 28x28 no gain), but for narrow windows (above). With 32 registers
// a window takes chunks of 32 too, its channels outermost (packed_reduce_order): ResNet-50's 3x3
// conv over 512 channels at 7x7 on Zen 4 (AVX-512, one thread, 120 tuned configs) ran at 104
// GFLOP/s so, 95 with chunks of 8 in that order, 85 with chunks of 8 and the offsets outermost.
// With its accumulators in L2 (accumulators_in_l2), a 1x1 conv takes the most channels whose
// weights fill two thirds of L1 at most: 128 for 4-block tiles with 48 KiB (ResNet-50's at 14x14
// took 0.93x the time of chunks of 32 at one thread and 1.03x at two; chunks of 64 0.95x, 1.03x).
int64_t fallback_reduce_chunk(const TiledShape& t, int64_t rows, int64_t ys, const CpuModel& cpu) {
  if (weight_stationary(t, rows)) return kWeightStationaryChunk;
  std::vector<int64_t> chunks = reduce_chunk_candidates(t);
  int64_t window = window_points(t);
  if (chunks.size() == 1 || t.reduce.front() * window * t.out.back() * 4 <= t.l1d_bytes / 2)
    return 0;
  // A conv that computes its input stage a row at a time runs its rows outermost, unchunked (a
  // weight-stationary tile, above, keeps its chunks and the stage at root). DenseNet-121's 1x1
  // convs at 14x14 over 416-992 channels (128 out), in chunks of 32-128 before, timed in the model
  // in turns on the Intel Xeon: 0.83x the time at one thread and 0.80x at two; with AVX2 code
  // 0.92x and 0.89x. Without an input stage, chunks stay (AVX2 code: SqueezeNet's squeeze convs
  // 1.05x the time unchunked at one thread, MobileNetV2's projections at 14x14 1.01x).
  if (input_stage_per_row(t)) return 0;
  if (accumulator_strip(t, rows, ys) < t.out[2] && !narrow_window(t, cpu)) return 0;
  bool in_l2 = accumulators_in_l2(t, rows) &&
               t.out[2] * rows * accumulator_row_bytes(t, ys) > t.l1d_bytes / 2;
  int64_t chunk = 0;
  for (int64_t k : chunks) {
    bool fits = in_l2 ? 3 * k * rows * t.out.back() * 4 <= 2 * t.l1d_bytes
                      : k <= (window == 1 || cpu.vector_registers >= 32 ? 32 : 8);
    if (fits) chunk = k;
  }
  return chunk;
}

namespace {

// The cheapest columns of `rows` blocks over a run of `width` positions.
int64_t packed_columns(const TiledShape& t, int64_t rows, int64_t width, const CpuModel& cpu) {
  int lanes = tile_lanes(cpu);
  int64_t per_column = rows * ((t.out.back() + lanes - 1) / lanes);
  int64_t cap = std::max<int64_t>(1, packed_accumulators(t, cpu, rows) / per_column);
  if (weight_stationary(t, rows)) {
    cap = std::min(cap, kWeightStationaryChunk);
    if (rows > 1) {  // the chunk's weight vectors take registers from the accumulators
      int64_t left = cpu.accumulator_registers() - kWeightStationaryChunk * rows;
      cap = std::clamp<int64_t>(left / per_column, 1, cap);
    }
  }
  // AVX2's 1x1 convs (1 x 6 at most) at one thread on Zen 3, MobileNetV2's at 7x7: 6 + 1 columns
  // 72-73 GFLOP/s, 4 + 3 84-87; at 14x14: 6 + 6 + 2 84-89, 5 + 5 + 4 89-99.
  return cheapest_tile_columns(width, kPackedColumns, cap, per_column, cpu);
}

}  // namespace

PackedTile packed_fallback(const TiledShape& t, const CpuModel& cpu) {
  PackedTile p;
  p.rows = packed_blocks(t, (t.out.back() + tile_lanes(cpu) - 1) / tile_lanes(cpu));
  p.ys = packed_columns(t, p.rows, t.out[t.y], cpu);
  return p;
}

// The strip's positions tiled as one run leave one partial tile a strip, not one a row: ResNet-50's
// 1x1 convs at 14x14 (6 + 6 + 2 columns a row) 196 = 32 x 6 + 4 positions.
int64_t flat_map_columns(const TiledShape& t, int64_t rows, int64_t strip, const CpuModel& cpu) {
  int64_t width = t.out[t.y];
  return std::min(width, packed_columns(t, rows, strip * width, cpu));
}

// ConvNCHWc's fallback reduction order over (input channel, kernel offsets...). A window over at
// least 16 input channels runs its channels outermost and its kernel columns innermost. With 16
// registers (AVX2's 1 x 4 tiles on Zen 3): ResNet-18's, ResNet-50's and DenseNet-121's 3x3 convs
// at one thread, weighted by occurrence, 23.3 -> 16.7 ms, 23.3 -> 17.8 and 40.1 -> 31.9 (their 7x7
// stems over 3 channels ran 1.1-1.4x slower so), but for a narrow window in chunks
// (narrow_window) and a padded one read in place (padding_read_in_place). With 32 registers in
// chunks (fallback_reduce_chunk): ResNet-50's nine convs at 7x7 took 14.9-15.8 ms of one thread
// on Zen 4 so, in chunks of 32, against 16.8-17.8 with the offsets outermost; and unchunked, with
// the kernel columns unrolled (fallback_unroll_columns), on an Intel Xeon (Emerald Rapids):
// DenseNet-121's 3x3 convs took 0.88x the time at one thread in the model and 0.85x at two (the
// one at 56x56 tuned alone: 2.97 -> 2.12 ms), ResNet-50's unchunked ones 0.76-0.92x where its
// other kernels took 0.90-0.95x. (Zen 5's tuned convs had preferred the channels innermost, without
// the columns unrolled.)
std::vector<int64_t> packed_reduce_order(const TiledShape& t, const CpuModel& cpu,
                                         int64_t reduce_chunk) {
  std::vector<int64_t> order;
  for (size_t r = 0; r < t.reduce.size(); ++r) order.push_back(static_cast<int64_t>(r));
  if (t.reduce.front() < 16 ||
      (cpu.vector_registers < 32 && t.padding_in_reads && reduce_chunk == 0) ||
      (reduce_chunk > 0 && narrow_window(t, cpu)))
    std::rotate(order.begin(), order.begin() + 1, order.end());
  return order;
}

// Whether the fallback unrolls the reduction's innermost loop (knob "unroll_k"): with 32 registers,
// a window's kernel columns when innermost, so that the tile's overlapping windows share their
// broadcast inputs (8 output columns x 3 kernel columns read 10 inputs, not 24), which halves the
// loads beside the FMAs where two FMA units issue a cycle. (Chunked, ResNet-50's stride-2 3x3
// conv over 512 channels to 7x7 ran as fast either way on the Intel Xeon.)
bool fallback_unroll_columns(const TiledShape& t, const CpuModel& cpu,
                             const std::vector<int64_t>& order) {
  return cpu.vector_registers >= 32 && window_points(t) > 1 &&
         order.back() == static_cast<int64_t>(t.reduce.size()) - 1;
}

}  // namespace tessel::topi
