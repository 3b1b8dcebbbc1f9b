#include "topi/schedule_nn.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "ir/error.h"
#include "topi/broadcast.h"
#include "topi/matmul.h"
#include "topi/packed_conv_tile.h"
#include "topi/register_tile.h"

namespace tessel::topi {

namespace {

using graph::OpFamily;

// unroll_k unrolls the innermost reduction loop only up to this extent (a conv's kernel width or
// a short channel loop), as longer bodies only grow the code.
constexpr int64_t kMaxUnrolledReduce = 16;

// How a family's reduction output [..., rows?, y?, columns] maps onto the register tile.
struct TileSpec {
  int row_axis = -1;       // output axis blocked into unrolled register rows; -1 for none
  int64_t row_groups = 1;  // row blocks divide the axis extent / row_groups (a conv's groups)
  // ConvNCHWc: the vector is a block of output channels, and the second unrolled axis is the
  // output width (not height), blocked wider: one broadcast input element per column.
  bool channel_vectors = false;
  // Dense: a GEMM, whose fallback is the micro-kernel's tile (topi::matmul_cpu_config) and which
  // blocks no second axis.
  bool gemm = false;
  // A grouped conv or a pool: a tile reads its group's channels alone, so its padded input is
  // computed per row of tiles (small enough to stay in cache) rather than whole before the
  // reduction.
  bool local_inputs = false;
  // A grouped conv of stride 2 along the output columns: each vector of columns is a span of the
  // input row, twice as wide, picked out by a shuffle (codegen's strided load). The column and
  // row rules for it (col_block, local_input_rows) apply to depthwise convs alone, where they
  // were measured: one output channel per group, so a tile has one row of accumulators.
  bool strided_columns = false;
};

// The row axis of a dense output `out` (rank >= 2): the matrix rows, or with a shared right
// operand the longest leading axis (the last of equals), so that a [128, 1, K] x [K, N] product
// is one GEMM of 128 rows rather than 128 of one row.
int dense_row_axis(const AnchorOp& anchor, const std::vector<int64_t>& out) {
  int rank = static_cast<int>(out.size()), row = rank - 2;
  if (!anchor.shared_rhs) return row;
  for (int d = rank - 3; d >= 0; --d) {
    if (out[d] > out[row]) row = d;
  }
  return row;
}

// The tile of each family that the tiled template schedules; none for the others.
std::optional<TileSpec> tile_spec(const AnchorOp& anchor, const std::vector<int64_t>& out) {
  switch (anchor.family) {
    case OpFamily::kConv: {
      TileSpec spec{1, anchor.groups};
      spec.local_inputs = anchor.groups > 1;
      spec.strided_columns = anchor.groups > 1 && anchor.column_stride == 2;
      return spec;
    }
    case OpFamily::kConvNCHWc: {  // a depthwise one pads its input per row of tiles, as Conv does
      TileSpec spec{1, 1, true};
      spec.local_inputs = anchor.groups > 1;
      return spec;
    }
    case OpFamily::kDense:
      if (anchor.matrix_vector) return TileSpec{-1};
      return TileSpec{dense_row_axis(anchor, out), 1, false, true};
    case OpFamily::kPool: {
      TileSpec spec;  // a window per channel: like a depthwise conv's
      spec.local_inputs = true;
      return spec;
    }
    case OpFamily::kConvWinograd:  // topi/schedule_winograd.cc
    case OpFamily::kInjective:
    case OpFamily::kReduction:
    case OpFamily::kSoftmaxLike:
    case OpFamily::kOpaque:
      return std::nullopt;
  }
  return std::nullopt;
}

int64_t extent(const te::IterVar& iv) { return *as_const_int(iv->dom.extent); }

std::vector<int64_t> static_shape(const te::Tensor& t) {
  std::vector<int64_t> s;
  for (const PrimExpr& d : t.shape()) {
    const int64_t* c = as_const_int(d);
    s.push_back(c ? *c : -1);
  }
  return s;
}

// Whether `op` is a window of its input with zeros outside (topi::pad_spatial with a zero fill).
bool is_zero_window(const te::Operation& op) {
  const auto* compute = op.as<te::ComputeOpNode>();
  const auto* read = compute ? compute->body.as<IfThenElseExprNode>() : nullptr;
  const auto* fill = read ? read->false_value.as<FloatImmNode>() : nullptr;
  return fill && fill->value == 0.0;
}

// Inlines the elementwise stages into their readers, except the master's direct inputs (padded
// or transposed copies), which the reduction reads without checks; returns those inputs.
std::vector<te::Operation> inline_all_but_inputs(te::Schedule& s, const te::Stage& master) {
  std::vector<te::Operation> inputs;
  for (const te::Operation& op : te::input_ops(master->op)) {
    if (op.as<te::ComputeOpNode>()) inputs.push_back(op);
  }
  auto is_input = [&](const te::Operation& op) {
    return std::any_of(inputs.begin(), inputs.end(),
                       [&](const te::Operation& i) { return i.same_as(op); });
  };
  for (te::Stage st : s.stages()) {
    if (compute_of(st) && !is_reduction(st) && !st->is_output && !is_input(st->op))
      st.compute_inline();
  }
  return inputs;
}

TiledShape tiled_shape(const TileSpec& spec, const std::vector<int64_t>& out,
                       const std::vector<int64_t>& reduce, const CpuModel& cpu) {
  TiledShape t;
  t.out = out;
  int rank = static_cast<int>(out.size());
  t.row = spec.row_axis < rank - 1 ? spec.row_axis : -1;
  if (t.row >= 0) t.row_divisor = out[t.row] / spec.row_groups;
  if (rank >= 3 && rank - 2 != t.row && !spec.gemm) t.y = rank - 2;
  t.channel_vectors = spec.channel_vectors;
  t.gemm = spec.gemm;
  t.local_inputs = spec.local_inputs;
  t.strided_columns = spec.strided_columns && t.row >= 0 && t.row_divisor == 1;
  t.vector_registers = cpu.vector_registers;
  t.reduce = reduce;
  t.work = product_of(out) * product_of(reduce);
  t.l1d_bytes = cpu.l1d_bytes > 0 ? cpu.l1d_bytes : 32 * 1024;
  t.l2_bytes = cpu.l2_bytes > 0 ? cpu.l2_bytes : 256 * 1024;
  t.lanes = tile_lanes(cpu);
  t.cores = cpu.cores;
  return t;
}

// The template's unrolled rows per tile: those of {1, 2, 4, 6, 8, 16, 32} that divide the rows, and
// a GEMM's micro-kernel rows (topi::matmul_cpu_config: 6 on AVX2, 12 on AVX-512) whether or not
// they divide them, the last row block being shorter then.
std::vector<int64_t> row_candidates(const TiledShape& t, const CpuModel& cpu) {
  std::vector<int64_t> rows;
  for (int64_t r : {1, 2, 4, 6, 8, 16, 32}) {
    if (t.row_divisor % r == 0) rows.push_back(r);
  }
  int64_t kernel_rows = matmul_cpu_config(cpu).mr;
  if (t.gemm && kernel_rows <= t.row_divisor) rows.push_back(kernel_rows);
  std::sort(rows.begin(), rows.end());
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  return rows;
}

// The tile that a config asks for.
struct TileConfig {
  int64_t rows = 1, cols = 1, ys = 1;
  std::vector<int64_t> reduce_order;  // position -> reduction axis
  bool unroll_k = false, parallel = false;
  // ConvNCHWc: input channels per chunk of the reduction, 0 for none, and with chunks the output
  // rows (of the first spatial axis) that the accumulators span (accumulator_strip).
  int64_t reduce_chunk = 0, strip = 0;
  // With chunks over a pointwise map (TiledShape::pointwise_map), a strip's rows and columns are
  // fused into one run of positions, tiled by `ys`: one partial tile a strip, not one a row.
  // ResNet-50's 13 such convs (1024 -> 256 at 14x14: 6 + 6 + 2 columns a row, 32 x 6 + 4 so) on
  // the Intel Xeon, kernels timed in the model in turns (bench/kernel_ab.py, paired): 0.95x the
  // time at one thread and 0.96x at two; with AVX2 code (1 x 6 tiles: a row of 7 was 6 + 1) 0.92x
  // at both, MobileNetV2's 11 0.98x.
  bool flat = false;
};

TileConfig tile_config(const TiledShape& t, const ConfigEntity& cfg) {
  TileConfig c;
  if (t.row >= 0) c.rows = cfg.split("tile_row").back();
  c.cols = t.channel_vectors ? t.out.back() : cfg.split("tile_col").back();
  if (t.y >= 0) c.ys = cfg.split("tile_y").back();
  if (t.reduce.size() >= 2 && t.reduce.size() <= 4) {
    c.reduce_order = cfg.reorder("reorder_k");
  } else {
    for (size_t r = 0; r < t.reduce.size(); ++r) c.reduce_order.push_back(static_cast<int64_t>(r));
  }
  c.unroll_k = cfg.knob("unroll_k") != 0;
  c.parallel = cfg.knob("parallel") != 0;
  if (reduce_chunk_candidates(t).size() > 1) c.reduce_chunk = cfg.knob("reduce_chunk");
  if (c.reduce_chunk > 0) {
    c.strip = c.parallel ? parallel_strip(t, c.rows, c.ys) : accumulator_strip(t, c.rows, c.ys);
    c.flat = t.pointwise_map;
  }
  return c;
}

// A grouped conv's output rows per tile (it pads the input rows of each row of tiles): up to 4,
// which also cuts the rows padded twice, within half the register file, and of those the most
// that divide the height when any of 2-4 does. Measured on MobileNetV2's depthwise convs at one
// thread (AVX-512), 1 -> 4 rows: 1.6 -> 1.3 ms of 17 kernels; 4 rows with a tail beat the
// dividing 1 (7 rows; 1.6 ms); at 14 rows, 2 rows ran at 1.8x the speed of 4 and a tail of 2
// (384 and 576 channels: 24-25 -> 12.5-13.3 us and 35 -> 18-20 us, `tessel tune --trials 1`,
// 2026-11-27). (Pools keep one row: ResNet-50's max pool took 0.19 ms with one row a tile,
// 0.26-0.28 with 4.)
int64_t local_input_rows(const TiledShape& t, int64_t rows, int64_t cols, const CpuModel& cpu) {
  int64_t vectors = (cols + tile_lanes(cpu) - 1) / tile_lanes(cpu), height = t.out[t.y];
  // A strided row of two vectors, the second partial (col_block): 2 rows. MobileNetV2's stride-2
  // depthwise conv to 28 columns (AVX-512) took 43-47 us so, 89-94 with 4 rows, 133-150 with 16
  // columns and a tail in either.
  if (t.strided_columns && vectors > 1 && cols % tile_lanes(cpu) != 0)
    return std::min<int64_t>(height, 2);
  int64_t ys = 1, dividing = 0;
  for (int64_t y : {2, 3, 4}) {
    if (rows * y * vectors > cpu.vector_registers / 2) continue;
    ys = std::min(height, y);
    if (height % y == 0) dividing = y;
  }
  return dividing > 0 ? dividing : ys;
}

// A direct 1x1 conv is a GEMM of output channels by positions; with 16 registers its fallback
// tile is two vectors of columns wide, which reads 4 weights and 2 input vectors for 8 FMAs where
// 8 rows of one vector read 9. MobileNetV2's on Zen 3 (AVX2) at one thread, 8 x 8 -> 4 x 16:
// 16 -> 96 channels at 112x112 0.86 -> 0.47 ms, 144 -> 24 at 56x56 0.53 -> 0.37. (AVX-512's
// tiles of one vector are 16 columns already; wider ones with tails ran slower, see col_block.)
bool pointwise_two_vectors(const TiledShape& t, const CpuModel& cpu) {
  return cpu.vector_registers < 32 && t.row >= 0 && !t.gemm && !t.channel_vectors &&
         !t.local_inputs && t.reduce.size() >= 2 && window_points(t) == 1 &&
         t.out.back() >= 2 * tile_lanes(cpu);
}

// Its rows: over a reduction of at least 24 channels, as many as the accumulator registers hold
// where they divide the channels (6 with AVX2's 12), as the packed 1x1 tile takes; else row_block.
// MobileNetV2's on Zen 3 at one thread, 4 -> 6 rows: 96 -> 24 channels at 56x56 0.27 -> 0.20 ms,
// 144 -> 24 0.40 -> 0.30, 24 -> 144 0.36 -> 0.30; over 16 channels (16 -> 96 at 112x112) 0.50 ->
// 0.53.
int64_t pointwise_rows(const TiledShape& t, const CpuModel& cpu) {
  int64_t most = cpu.accumulator_registers() / 2;
  if (t.reduce.front() >= 24) {
    for (int64_t r : row_candidates(t, cpu)) {
      if (r > 4 && r <= most && t.row_divisor % r == 0) return r;
    }
  }
  return row_block(t.row_divisor, cpu, 2);
}

// A GEMM's fallback tile: topi::matmul_cpu_config's micro-kernel (two vectors of columns and the
// rows that leave room for the operands and that L1 holds at once) where the output is that wide,
// else one vector; of the template's row candidates that divide the rows, the most that fit, or
// the kernel's rows.
struct GemmTile {
  int64_t rows = 1, cols = 1;
};

// A GEMM always has a row axis (matrix-vector products are not GEMMs): t.row >= 0.
GemmTile gemm_fallback(const TiledShape& t, const CpuModel& cpu) {
  MatmulCpuConfig kernel = matmul_cpu_config(cpu, DataType::f32(), t.reduce.front());
  int lanes = tile_lanes(cpu);
  GemmTile g;
  g.cols = gemm_tile_columns(cpu, t.row_divisor, t.out.back());
  int64_t most = matmul_tile_rows(cpu, static_cast<int>((g.cols + lanes - 1) / lanes),
                                  t.reduce.front() * DataType::f32().bytes());
  for (int64_t r : row_candidates(t, cpu)) {
    if (r <= most && t.row_divisor % r == 0) g.rows = r;
  }
  // A dividing block well short of the kernel's rows loses more than a shorter last block costs
  // (te matmul at 1024^3 on AVX2: 4 x 16 ran at 0.7x the speed of 6 x 16, which leaves a tail).
  if (most == kernel.mr && 4 * g.rows < 3 * most && most <= t.row_divisor) g.rows = most;
  return g;
}

// The knobs of the tiled template: each split's inner factor from a list of candidates.
ConfigSpace define_tiled_space(const TiledShape& t, const CpuModel& cpu) {
  int lanes = tile_lanes(cpu);
  ConfigSpace space;
  auto inner_split = [&](const std::string& name, int64_t extent, std::vector<int64_t> inners) {
    SplitPolicy p;
    p.policy = "candidate";
    std::sort(inners.begin(), inners.end());
    inners.erase(std::unique(inners.begin(), inners.end()), inners.end());
    for (int64_t f : inners) p.candidates.push_back({-1, f});
    space.define_split(name, extent, p);
  };
  if (t.row >= 0) inner_split("tile_row", t.row_divisor, row_candidates(t, cpu));
  int64_t width = t.out.back();
  if (!t.channel_vectors) {  // with channel vectors the tile spans one block of channels
    std::vector<int64_t> cols;
    for (int64_t c : {int64_t{4}, int64_t{8}, int64_t{lanes}, int64_t{2} * lanes,
                      int64_t{4} * lanes, kWideColumnVectors * lanes}) {
      cols.push_back(std::min(width, c));
    }
    inner_split("tile_col", width, cols);
  }
  if (t.y >= 0) {
    int64_t extent = t.out[t.y];
    std::vector<int64_t> ys;
    for (int64_t y : t.channel_vectors ? kPackedColumns : std::vector<int64_t>{1, 2, 3, 4}) {
      ys.push_back(std::min(extent, y));
    }
    inner_split("tile_y", extent, ys);
  }
  if (t.reduce.size() >= 2 && t.reduce.size() <= 4) {
    space.define_reorder("reorder_k", static_cast<int>(t.reduce.size()), "all");
  }
  space.define_knob("unroll_k", {0, 1});
  space.define_knob("parallel", {0, 1});
  std::vector<int64_t> chunks = reduce_chunk_candidates(t);
  if (chunks.size() > 1) space.define_knob("reduce_chunk", chunks);
  // Accumulators beyond the register file spill on every step of the reduction, and LLVM takes
  // seconds to schedule such tiles: leave room for the operands.
  int64_t budget = cpu.accumulator_registers();
  space.set_constraint([t, lanes, budget](const ConfigEntity& c) -> std::string {
    // Serial where the work pays for a launch: such a config wins its measurements only while the
    // machine's other cores are slow (docs/auto-scheduler.md, "Serial programs").
    if (c.knob("parallel") == 0 && t.work >= kParallelMinWork) {
      return fmt::format("serial, though its work ({}) pays for a parallel launch (from {})",
                         t.work, kParallelMinWork);
    }
    TileConfig tile = tile_config(t, c);
    int64_t accumulators = tile.rows * tile.ys * ((tile.cols + lanes - 1) / lanes);
    if (accumulators <= budget) return "";
    return fmt::format(
        "a register tile of {} x {} x {} columns needs {} vector accumulators, more than {}",
        tile.rows, tile.ys, tile.cols, accumulators, budget);
  });
  return space;
}

// The fallback is the hand-written policy above: `row_block` rows of one vector of columns (a
// GEMM: the micro-kernel's tile; ConvNCHWc: packed_fallback), height blocking only for grouped
// convs (local_input_rows), the reduction in compute order, parallel when the work pays for a
// launch.
void set_fallback(ConfigSpace& space, const TiledShape& t, const CpuModel& cpu) {
  PackedTile packed = t.channel_vectors ? packed_fallback(t, cpu) : PackedTile{};
  std::optional<GemmTile> gemm;
  if (t.gemm) gemm = gemm_fallback(t, cpu);
  auto inner = [&](const std::string& name, int64_t extent, int64_t factor) {
    space.set_fallback_split(name, {(extent + factor - 1) / factor, factor});
  };
  int64_t vectors = pointwise_two_vectors(t, cpu) ? 2 : 1;
  int64_t rows = t.row < 0           ? 1
                 : t.channel_vectors ? packed.rows
                 : gemm              ? gemm->rows
                 : vectors > 1       ? pointwise_rows(t, cpu)
                                     : row_block(t.row_divisor, cpu, vectors);
  int64_t cols = gemm          ? gemm->cols
                 : vectors > 1 ? vectors * tile_lanes(cpu)
                               : col_block(t.out.back(), tile_lanes(cpu), t.strided_columns);
  int64_t chunk = 0;
  if (reduce_chunk_candidates(t).size() > 1) {
    chunk = fallback_reduce_chunk(t, rows, packed.ys, cpu);
    space.set_fallback_knob("reduce_chunk", chunk);
  }
  if (chunk > 0 && t.pointwise_map) {
    packed.ys = flat_map_columns(t, rows, accumulator_strip(t, rows, packed.ys), cpu);
  }
  if (t.row >= 0) inner("tile_row", t.row_divisor, rows);
  if (!t.channel_vectors) inner("tile_col", t.out.back(), cols);
  if (t.y >= 0) {
    inner("tile_y", t.out[t.y],
          t.channel_vectors              ? packed.ys
          : t.local_inputs && t.row >= 0 ? local_input_rows(t, rows, cols, cpu)
                                         : 1);
  }
  if (t.channel_vectors && t.reduce.size() >= 2 && t.reduce.size() <= 4) {
    std::vector<int64_t> order = packed_reduce_order(t, cpu, chunk);
    space.set_fallback_reorder("reorder_k", order);
    if (fallback_unroll_columns(t, cpu, order)) space.set_fallback_knob("unroll_k", 1);
  }
  space.set_fallback_knob("parallel", t.work >= kParallelMinWork ? 1 : 0);
}

// Where a tile and its inputs are computed in the output's loops.
struct TileLoops {
  te::IterVar tile;  // the loop that one register tile is computed under
  // The loop just outside the tile loop: a row of column tiles, or (with the column tiles
  // outermost, see tile_output) a column strip of row tiles; with an input stage computed a row
  // at a time (input_computed_per_row), the map's (batch, row) loop, outside the row's tiles of
  // every channel block.
  te::IterVar row;
  // ConvNCHWc with a chunked reduction: the loop over strips of the map (one strip when the whole
  // map fits the buffer), which the accumulators are computed under.
  te::IterVar strip;
};

// With a chunked reduction, splits the first axis of the map (axis 2 of ConvNCHWc's blocks and of
// its NCHW output) into strips of c.strip rows: `axes[2]` becomes the rows of a strip, and the
// strip loop is returned (undefined without chunks).
te::IterVar split_strip(te::Stage& os, std::vector<te::IterVar>& axes, const TileConfig& c) {
  if (c.reduce_chunk == 0) return {};
  auto [strip, rows] = os.split(axes[2], c.strip);
  axes[2] = rows;
  return strip;
}

// The loops of an output tiled under `outer` (the tile loop last). Without chunks, the loops
// outside the tile loop (the tile loop itself when it is the only one) run in parallel;
// parallel_outer keeps a lone loop as it is. With chunks (ConvNCHWc: outer begins with the batch,
// block and strip loops), those three do, and the accumulators are computed under them.
// With `inputs_per_row` (input_computed_per_row), only the batch and row loops (the first two) run
// in parallel, and the row loop is TileLoops::row.
TileLoops tiled_loops(te::Stage& os, const std::vector<te::IterVar>& outer, const TileConfig& c,
                      bool inputs_per_row) {
  TileLoops loops;
  loops.tile = outer.back();
  if (c.reduce_chunk > 0) {
    std::vector<te::IterVar> shared(outer.begin(), outer.begin() + 3);
    loops.strip = c.parallel ? parallel_outer(os, shared) : shared.back();
    return loops;
  }
  std::vector<te::IterVar> rows(outer.begin(), outer.size() == 1 ? outer.end() : outer.end() - 1);
  if (inputs_per_row) rows.resize(2);
  loops.row = c.parallel ? parallel_outer(os, rows) : rows.back();
  return loops;
}

// Whether a packed conv whose rows are shared out computes its input stage (a batch norm and Relu
// before a 1x1 conv: [n, blocks, h, w, b] over the conv's rows) with the rows outermost, split
// among the threads as the conv's are, so that each thread's tiles read what it wrote (split by
// channel blocks, each thread's tiles read half their inputs from the other core).
bool input_rows_shared_out(const TiledShape& t, const te::Tensor& input) {
  std::vector<int64_t> shape = static_shape(input);
  return t.channel_vectors && shape.size() == 5 && shape[0] == t.out[0] && shape[2] == t.out[2] &&
         shape[3] == t.out[3] && shape[4] == t.out.back();
}

// Whether a config's output tiles run their rows outermost: rows_shared_out, unless chunked (a
// chunked reduction's strips take the rows' place).
bool rows_outermost(const TiledShape& t, const TileConfig& c) {
  return c.reduce_chunk == 0 && rows_shared_out(t);
}

// Whether `input` is the input stage that a config computes a row at a time
// (input_stage_per_row): unchunked, its rows outermost.
bool input_computed_per_row(const TiledShape& t, const TileConfig& c, const te::Tensor& input) {
  return rows_outermost(t, c) && input_stage_per_row(t) && input_rows_shared_out(t, input);
}

// The input stage [n, blocks, h, w, b] rows outermost, in parallel when the conv is.
void schedule_rows_outer(te::Schedule& s, const te::Tensor& input, bool parallel, int lanes) {
  te::Stage st = s[input];
  st.reorder({st.axis(0), st.axis(2), st.axis(1), st.axis(3), st.axis(4)});
  te::IterVar rows = st.fuse(st.axis(0), st.axis(2));
  if (parallel) st.parallel(rows);
  vectorize_last_axis(st, input, lanes);
}

// Splits the output into tiles of rows x ys x cols, tile loops outside, and runs the outer tile
// loops in parallel.
TileLoops tile_output(te::Stage& os, const TiledShape& t, const TileConfig& c,
                      bool inputs_per_row) {
  const std::vector<int64_t>& shape = t.out;
  int rank = static_cast<int>(shape.size());
  std::vector<te::IterVar> axes;
  for (int d = 0; d < rank; ++d) axes.push_back(os.axis(d));
  te::IterVar strip = split_strip(os, axes, c);
  if (c.flat) axes[t.y] = os.fuse(axes[2], axes[t.y]);  // the strip's positions
  auto [col_o, col_i] = os.split(axes.back(), c.cols);
  te::IterVar row_o, row_i, y_o, y_i;
  if (t.row >= 0) std::tie(row_o, row_i) = os.split(axes[t.row], c.rows);
  if (t.y >= 0) std::tie(y_o, y_i) = os.split(axes[t.y], c.ys);
  std::vector<te::IterVar> outer;
  int64_t row_tiles = 1;
  for (int d = 0; d < rank - 1; ++d) {
    int64_t block = d == t.row ? c.rows : d == t.y ? c.ys : 1;
    if (d == 2 && strip.defined()) outer.push_back(strip);
    if (d == 2 && c.flat) continue;  // fused into the positions
    outer.push_back(d == t.row ? row_o : d == t.y ? y_o : axes[d]);
    row_tiles *= (shape[d] + block - 1) / block;
  }
  if (rows_outermost(t, c)) std::rotate(outer.begin() + 1, outer.begin() + 2, outer.begin() + 3);
  // With too few row tiles to share out (a matrix-vector product), the column tiles go outermost.
  // ConvNCHWc's one column tile (its block) goes inside the parallel loops and the width's tiles
  // stay the tile loop, as tile_unpacked_output has them: a partial last tile of the width is then
  // a loop of its own, not predicated FMAs in the reduction (DenseNet's 1x1 convs at 28x28 with
  // 6-column tiles ran 1.2-1.3x longer so).
  int64_t col_tiles = (shape.back() + c.cols - 1) / c.cols;
  auto col_at = row_tiles < 4 && col_tiles > row_tiles ? outer.begin()
                : t.channel_vectors && t.y >= 0        ? outer.end() - 1
                                                       : outer.end();
  outer.insert(col_at, col_o);
  std::vector<te::IterVar> order = outer;
  if (t.row >= 0) order.push_back(row_i);
  if (t.y >= 0) order.push_back(y_i);
  order.push_back(col_i);
  os.reorder(order);
  TileLoops loops = tiled_loops(os, outer, c, inputs_per_row);
  if (c.cols > 1) os.vectorize(col_i);
  if (c.rows > 1) os.unroll(row_i);
  if (c.ys > 1) os.unroll(y_i);
  return loops;
}

// ConvNCHWc's NCHW output [n, m, ..., w] tiled like its blocks [n, m / b, ..., w, b]: rows blocks
// of b channels x ys columns at one point of the other axes, so that the blocks' tile is computed
// under it and the epilogue unpacks it from registers.
TileLoops tile_unpacked_output(te::Stage& os, const TiledShape& t, const TileConfig& c,
                               bool inputs_per_row) {
  int rank = static_cast<int>(t.out.size()) - 1;
  std::vector<te::IterVar> axes;
  for (int d = 0; d < rank; ++d) axes.push_back(os.axis(d));
  te::IterVar strip = split_strip(os, axes, c);
  auto [block_o, channel] = os.split(axes[1], t.out.back());
  auto [row_o, row_i] = os.split(block_o, c.rows);
  auto [col_o, col_i] = os.split(axes[rank - 1], c.ys);
  std::vector<te::IterVar> outer{axes[0], row_o};
  if (strip.defined()) outer.push_back(strip);
  outer.insert(outer.end(), axes.begin() + 2, axes.end() - 1);
  if (rows_outermost(t, c)) std::rotate(outer.begin() + 1, outer.begin() + 2, outer.begin() + 3);
  outer.push_back(col_o);
  std::vector<te::IterVar> order = outer;
  order.insert(order.end(), {row_i, channel, col_i});
  os.reorder(order);
  TileLoops loops = tiled_loops(os, outer, c, inputs_per_row);
  // The epilogue is a transpose of the register tile: per channel, one vector of the columns
  // (lanes gathered from the tile's registers). Fully unrolled to scalar stores instead, it left
  // LLVM's SLP vectorizer to rebuild those vectors: ResNet-50's two 1x1 convs with a residual Add
  // took 230 ms of optimization each (80 now) for the same run time.
  os.unroll(row_i);
  os.unroll(channel);
  os.vectorize(col_i);
  return loops;
}

// The group's single reduction, or none.
std::optional<te::Stage> single_reduction(const te::Schedule& s) {
  std::optional<te::Stage> found;
  for (const te::Stage& st : s.stages()) {
    if (!is_reduction(st)) continue;
    if (found) return std::nullopt;
    found = st;
  }
  return found;
}

// Whether the group's one output unpacks the master's blocks [n, blocks, ..., b] to NCHW in a
// fused epilogue (tile_unpacked_output), which tiles the map's rows and columns apart.
bool unpacking_epilogue(const te::Schedule& s, const te::Stage& master, size_t blocked_rank) {
  std::vector<te::Stage> outputs;
  for (const te::Stage& st : s.stages()) {
    if (st->is_output) outputs.push_back(st);
  }
  return outputs.size() == 1 && !master->is_output &&
         static_shape(te::Tensor(outputs[0]->op)).size() + 1 == blocked_rank;
}

// The group's tiled shape; none for a family without a tile or a group without the template's
// shape.
std::optional<TiledShape> tiled_shape_of(const te::Schedule& s, const AnchorOp& anchor,
                                         const CpuModel& cpu) {
  std::optional<te::Stage> master = single_reduction(s);
  if (!master) return std::nullopt;
  std::vector<int64_t> shape = static_shape(te::Tensor((*master)->op));
  if (shape.empty() || product_of(shape) <= 0) return std::nullopt;
  std::optional<TileSpec> spec = tile_spec(anchor, shape);
  if (!spec) return std::nullopt;
  std::vector<int64_t> reduce;
  for (const te::IterVar& r : compute_of(*master)->reduce_axis) reduce.push_back(extent(r));
  TiledShape t = tiled_shape(*spec, shape, reduce, cpu);
  std::vector<te::Operation> inputs = te::input_ops((*master)->op);
  bool padded = std::any_of(inputs.begin(), inputs.end(), is_zero_window);
  t.padding_in_reads = spec->channel_vectors && !spec->local_inputs && padded;
  t.pointwise_map = spec->channel_vectors && !spec->local_inputs && !padded && t.y == 3 &&
                    shape.size() == 5 && window_points(t) == 1 &&
                    !unpacking_epilogue(s, *master, shape.size());
  t.map_input_stage = std::any_of(inputs.begin(), inputs.end(), [&](const te::Operation& op) {
    return op.as<te::ComputeOpNode>() && !s[op]->is_output &&
           input_rows_shared_out(t, te::Tensor(op));
  });
  return t;
}

// Whether a packed conv reads its padding in place (TiledShape::padding_in_reads). With 16
// registers (AVX2's tile: one block of two vectors by 4 columns) only an unchunked reduction with
// its channels innermost does, so that the partitioned offset loops run outside the channel loop
// (the fallback orders it so, packed_reduce_order). On Zen 4 with AVX2 code, ResNet-50's 3x3 convs
// at 56x56, 28x28 and 14x14 ran 1.02-1.08x faster at one thread so and 1.14-1.25x at two; chunked
// (its 7x7 conv over 512 channels) 2.5x slower, and with the channels outermost ResNet-18 ran
// 1.3-1.5x slower.
bool padding_read_in_place(const TiledShape& t, const TileConfig& c) {
  bool channels_innermost = !c.reduce_order.empty() && c.reduce_order.back() == 0;
  return t.padding_in_reads &&
         (t.vector_registers >= 32 || (c.reduce_chunk == 0 && channels_innermost));
}

// The single reduction of the group computed in register tiles of its output (see the header).
void tile_group(te::Schedule& s, const std::vector<te::Tensor>& outputs, const TiledShape& t,
                const TileConfig& c, int lanes) {
  te::Stage master = *single_reduction(s);
  te::Tensor master_t(master->op);
  // A lone elementwise output of the master's shape takes the tile; otherwise the master is
  // tiled at root and every output reads it.
  // ConvNCHWc's output is its blocks (output_block), or them unpacked, the last block's padding
  // channels dropped.
  bool unpacks = t.channel_vectors && !(outputs.size() == 1 && static_shape(outputs[0]) == t.out);
  std::vector<int64_t> out_shape = t.out;
  if (unpacks) {
    out_shape[1] *= out_shape.back();
    out_shape.pop_back();
    if (!outputs.empty() && outputs[0].ndim() > 1) {
      const int64_t* channels = as_const_int(outputs[0].shape()[1]);
      if (channels && *channels > (t.out[1] - 1) * t.out.back() &&
          *channels <= t.out[1] * t.out.back()) {
        out_shape[1] = *channels;
      }
    }
  }
  bool fuse_epilogue =
      outputs.size() == 1 && !master->is_output && static_shape(outputs[0]) == out_shape;
  TESSEL_ICHECK(!(c.flat && fuse_epilogue && unpacks))
      << "a flat map whose epilogue unpacks its blocks (tiled_shape_of decides)";

  std::vector<te::Operation> inputs = inline_all_but_inputs(s, master);
  te::Tensor out = fuse_epilogue ? outputs[0] : master_t;
  te::Tensor acc = fuse_epilogue ? master_t : s.cache_write(master_t, MemScope::kLocal);
  for (const te::Tensor& o : outputs) {
    if (!o.same_as(out)) schedule_injective(s, o, lanes);
  }
  te::Stage os = s[out];
  auto per_row = [&](const te::Operation& op) {
    return !s[op]->is_output && input_computed_per_row(t, c, te::Tensor(op));
  };
  bool inputs_per_row = std::any_of(inputs.begin(), inputs.end(), per_row);
  TileLoops loops;
  if (fuse_epilogue && unpacks) {
    loops = tile_unpacked_output(os, t, c, inputs_per_row);
  } else {
    loops = tile_output(os, t, c, inputs_per_row);
  }
  // The tile: reduction loops outside, the unrolled rows and vectorized columns inside. A chunked
  // reduction (ConvNCHWc) runs its chunks outside the strip's tiles, a chunk's channels inside.
  te::Stage as = s[acc];
  as.compute_at(os, c.reduce_chunk > 0 ? loops.strip : loops.tile);
  int rank = static_cast<int>(t.out.size());
  std::vector<te::IterVar> order;
  te::IterVar chunk_o, chunk_i, y = t.y >= 0 ? as.axis(t.y) : te::IterVar(), y_o;
  if (c.reduce_chunk > 0) {
    std::tie(chunk_o, chunk_i) = as.split(as.reduce_axis(0), c.reduce_chunk);
    if (c.flat) y = as.fuse(as.axis(2), y);
    std::tie(y_o, y) = as.split(y, c.ys);
    order.push_back(chunk_o);
  }
  for (int d = 0; d < rank - 1; ++d) {
    if (d != t.row && d != t.y && !(c.flat && d == 2)) order.push_back(as.axis(d));
  }
  if (y_o.defined()) order.push_back(y_o);
  // Reduction axis r's loop inside the tile: the channels of a chunk when chunked.
  auto reduce_loop = [&](int64_t r) {
    return r == 0 && chunk_i.defined() ? chunk_i : as.reduce_axis(static_cast<int>(r));
  };
  for (int64_t r : c.reduce_order) order.push_back(reduce_loop(r));
  if (t.row >= 0) order.push_back(as.axis(t.row));
  if (t.y >= 0) order.push_back(y);
  order.push_back(as.axis(rank - 1));
  as.reorder(order);
  if (c.cols > 1) as.vectorize(as.axis(rank - 1));
  if (c.rows > 1) as.unroll(as.axis(t.row));
  if (c.ys > 1) as.unroll(y);
  if (c.unroll_k && !c.reduce_order.empty()) {
    int64_t innermost = c.reduce_order.back();
    int64_t extent = innermost == 0 && c.reduce_chunk > 0 ? c.reduce_chunk : t.reduce[innermost];
    if (extent <= kMaxUnrolledReduce) as.unroll(reduce_loop(innermost));
  }
  for (const te::Operation& op : inputs) {
    te::Stage is = s[op];
    if (is->is_output) continue;
    if (padding_read_in_place(t, c) && is_zero_window(op)) {
      is.compute_inline();
      continue;
    }
    if (per_row(op)) {
      is.compute_at(os, loops.row);
      vectorize_last_axis(is, te::Tensor(op), lanes);
      continue;
    }
    if (rows_outermost(t, c) && input_rows_shared_out(t, te::Tensor(op))) {
      schedule_rows_outer(s, te::Tensor(op), c.parallel, lanes);
      continue;
    }
    if (!t.local_inputs || !loops.row.defined()) {
      schedule_injective(s, te::Tensor(op), lanes);
      continue;
    }
    // The rows of the padded input that one row of tiles reads, one vector of columns at a time.
    is.compute_at(os, loops.row);
    vectorize_last_axis(is, te::Tensor(op), lanes);
  }
}

}  // namespace

void schedule_tiled(te::Schedule& s, const std::vector<te::Tensor>& outputs, const AnchorOp& anchor,
                    const CpuModel& cpu, const ConfigEntity* config) {
  std::optional<TiledShape> shape = tiled_shape_of(s, anchor, cpu);
  if (!shape) return schedule_default(s, outputs, anchor, cpu, nullptr);
  ConfigEntity chosen = config ? *config : [&] {
    ConfigSpace space = define_tiled_space(*shape, cpu);
    set_fallback(space, *shape, cpu);
    return space.fallback();
  }();
  tile_group(s, outputs, *shape, tile_config(*shape, chosen), tile_lanes(cpu));
}

std::optional<ConfigSpace> tiled_space(const te::Schedule& s, const AnchorOp& anchor,
                                       const CpuModel& cpu) {
  std::optional<TiledShape> shape = tiled_shape_of(s, anchor, cpu);
  if (!shape) return std::nullopt;
  return define_tiled_space(*shape, cpu);
}

void set_tiled_fallback(ConfigSpace& space, const te::Schedule& s, const AnchorOp& anchor,
                        const CpuModel& cpu) {
  std::optional<TiledShape> shape = tiled_shape_of(s, anchor, cpu);
  TESSEL_ICHECK(shape) << "a tiled fallback for a group that has no tiled space";
  set_fallback(space, *shape, cpu);
}

}  // namespace tessel::topi
