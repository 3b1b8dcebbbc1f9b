// The CPU schedule of softmax and the normalizations (the statistics family).
//
// When every statistic reduces the same trailing dims of the group's one output (Softmax and
// LogSoftmax over the last axis, LayerNormalization, InstanceNormalization), the group is one
// loop over rows, parallel, and per row:
// - each statistic is computed into a row-sized buffer; when its last reduce axis longer than 1
//   walks the output's innermost dim longer than 1 and is whole vectors long, through rfactor
//   into up to 4 vectors of partial results (as many independent accumulator chains), which are
//   added into one vector, then into its halves down to 2 lanes (a tree, not a chain of one add
//   per lane);
// - each intermediate that several stages read (softmax's exponentials) is computed once into a
//   row buffer, vectorized;
// - the output row is vectorized; row buffers and the output of up to 16 vectors are unrolled;
// - rows of up to 8 vectors go in pairs, both rows' stages unrolled in one iteration: one row's
//   reductions are chains of a few adds and shuffles that the other row's work fills (softmax
//   over [12,128,128] with AVX-512 on an Intel Xeon, `tune_bench auto --trials 1`, three runs
//   each: 76-96 -> 64-70 us at 1 thread, 50-51 -> 40-41 at 2; 4 rows at once ran slower than 2);
// - longer rows of whole vectors, 2 KiB or more, without a row buffer (the normalizations) go in
//   blocks of 2 or 4 (as many as the registers hold the rows' accumulator chains and a quarter of
//   L1 the rows): each statistic's loop over a row's vectors adds into every row of the block in
//   turn, so the rows' reductions overlap; the output is written a row at a time. 32 layer norms
//   over [128,768] in a row (`tessel run --print-time`, Zen 4, old and new builds in turns, each
//   round's median): 1.16-1.28x faster in 7 of 8 rounds with AVX-512 (0.96x in one), 1.03-1.48x
//   with AVX2 code (blocks of 2). Writing each vector of every row in turn, which loads LayerNorm's
//   scale and bias once a block, ran faster still where the output stayed in cache and slower where
//   it did not (1.6-2.5x on the transformer encoder's last layer norm, which writes the model's
//   output; a C kernel with its output flushed from cache, 1.2x). Softmax over rows of 16 to 64
//   vectors ran 3-25% slower in blocks.
// Before the chains, the tree and the unrolling, the per-row reductions waited on their adds: on
// Zen 4, `tune_bench auto --trials 1` (untuned, 2 threads) ran softmax over [12,128,128] 1.22x
// faster with AVX-512 and 1.33x with AVX2 code, layer norm over [128,768] 1.4-1.6x and 1.95x.
// Otherwise (BatchNormalization in training mode, statistics over leading dims, several outputs)
// the statistics are computed at root, parallel over their points, and the output is injective.
#include <algorithm>

#include "ir/error.h"
#include "topi/broadcast.h"
#include "topi/schedule_nn.h"

namespace tessel::topi {
namespace {

// The dims of a shape; nullopt when one is not a constant.
std::optional<std::vector<int64_t>> dims_of(const std::vector<PrimExpr>& shape) {
  std::vector<int64_t> dims;
  for (const PrimExpr& d : shape) {
    const int64_t* v = as_const_int(d);
    if (!v) return std::nullopt;
    dims.push_back(*v);
  }
  return dims;
}

int64_t product_of(const std::vector<int64_t>& dims, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t d = from; d < to; ++d) p *= dims[d];
  return p;
}

// The first reduced dim when `stat` (a reduction with its reduced dims kept as 1) reduces a suffix
// of `out`'s dims, not all of them, and is `out`'s shape before it; nullopt otherwise. Of the
// suffixes as long as the reduction, the shortest: dims of size 1 before it count as rows.
std::optional<size_t> reduced_suffix(const te::ComputeOpNode& stat,
                                     const std::vector<int64_t>& out) {
  std::optional<std::vector<int64_t>> dims = dims_of(stat.shape);
  if (!dims || dims->size() != out.size()) return std::nullopt;
  int64_t reduced = 1;
  for (const te::IterVar& r : stat.reduce_axis) {
    const int64_t* e = as_const_int(r->dom.extent);
    if (!e) return std::nullopt;
    reduced *= *e;
  }
  size_t first = out.size();
  while (first > 0 && product_of(out, first, out.size()) < reduced) --first;
  if (first == 0 || first == out.size() || product_of(out, first, out.size()) != reduced)
    return std::nullopt;
  for (size_t d = 0; d < out.size(); ++d) {
    if ((*dims)[d] != (d < first ? out[d] : 1)) return std::nullopt;
  }
  return first;
}

// The reduce axis of `stat` to factor into vector partials: its last one longer than 1, when that
// walks `out`'s innermost dim longer than 1 (the statistics computes, topi/compute_nn_norm.cc,
// create their reduce axes in dim order) and is a whole number of vectors.
std::optional<te::IterVar> vector_reduce_axis(const te::ComputeOpNode& stat,
                                              const std::vector<int64_t>& out, int lanes) {
  auto last = std::find_if(stat.reduce_axis.rbegin(), stat.reduce_axis.rend(),
                           [](const te::IterVar& r) { return *as_const_int(r->dom.extent) > 1; });
  auto inner = std::find_if(out.rbegin(), out.rend(), [](int64_t d) { return d > 1; });
  if (last == stat.reduce_axis.rend() || inner == out.rend()) return std::nullopt;
  int64_t extent = *as_const_int((*last)->dom.extent);
  if (extent != *inner || extent < lanes || extent % lanes != 0) return std::nullopt;
  return *last;
}

// A row's reduction runs in up to this many vector accumulators: each chain's exp needs its own
// temporaries, and more would spill AVX2's 16 registers.
constexpr int64_t kMaxRowChains = 4;

// A statistic's vector reduce axis (vector_reduce_axis) and the accumulator chains it reduces in.
struct RowReduction {
  te::IterVar k;
  int64_t chains;
};
std::optional<RowReduction> row_reduction(const te::ComputeOpNode& stat,
                                          const std::vector<int64_t>& out, int lanes) {
  std::optional<te::IterVar> k = vector_reduce_axis(stat, out, lanes);
  if (!k) return std::nullopt;
  int64_t vectors = *as_const_int((*k)->dom.extent) / lanes;
  return RowReduction{*k, accumulator_chains(vectors, kMaxRowChains)};
}

// A row's vectors up to this many are unrolled: with AVX2's 16 registers, the exp's constants
// otherwise rotate through registers in a loop (14 moves per vector on Zen 4).
constexpr int64_t kMaxUnrolledVectors = 16;

// Rows computed in one iteration of the row loop, and so unrolled.
constexpr int64_t kRowsAtOnce = 2;

// kRowsAtOnce when that many rows of `dims` from `first` on fit kMaxUnrolledVectors vectors of
// `lanes`, leave at least two iterations, and divide the innermost row dim (no two rows at once
// straddle an outer one: the stages' row axes then have constant extents, which unroll).
int64_t rows_at_once(const std::vector<int64_t>& dims, size_t first, int lanes) {
  int64_t n = product_of(dims, first, dims.size()), rows = product_of(dims, 0, first);
  bool fit = n * kRowsAtOnce <= kMaxUnrolledVectors * lanes;
  return fit && dims[first - 1] % kRowsAtOnce == 0 && rows >= 2 * kRowsAtOnce ? kRowsAtOnce : 1;
}

// Rows a block may hold: more would not leave room for each row's accumulators and its mean.
constexpr int64_t kMaxBlockRows = 4;
// Rows shorter than this go one at a time: the transformer encoder's layer norms over 256 floats
// (AVX2 code, 32 vectors a row) gained nothing in blocks of 2, six of eight faster and two slower.
constexpr int64_t kMinBlockRowBytes = 2048;

// The rows of a block (1: none) for rows of `dims` from `first` on that are too long to unroll,
// at least kMinBlockRowBytes, whole vectors of `lanes`, reduced in `chains` accumulator chains
// each: the most up to kMaxBlockRows, a power of two, whose chains fit the accumulator registers
// and whose rows fit a quarter of L1 (the output's pass reads them again; 4 rows of 4 KiB, which
// share L1's sets, ran 1.4x slower than one at a time), that divide the innermost row dim and
// leave at least two blocks.
int64_t rows_in_block(const std::vector<int64_t>& dims, size_t first, int lanes, int64_t chains,
                      const CpuModel& cpu) {
  int64_t n = product_of(dims, first, dims.size()), rows = product_of(dims, 0, first);
  int64_t row_bytes = n * int64_t{sizeof(float)};
  if (n <= kMaxUnrolledVectors * lanes || n % lanes != 0 || row_bytes < kMinBlockRowBytes) return 1;
  int64_t block = kMaxBlockRows;
  auto fits = [&](int64_t b) {
    bool cached = cpu.l1d_bytes == 0 || b * row_bytes <= cpu.l1d_bytes / 4;
    return b * chains <= cpu.accumulator_registers() && cached && dims[first - 1] % b == 0 &&
           rows >= 2 * b;
  };
  while (block > 1 && !fits(block)) block /= 2;
  return block;
}

// Unrolls `st`'s axes before `first` (its rows: kRowsAtOnce or a block of them at the row loop).
void unroll_rows(te::Stage st, size_t first) {
  for (size_t d = 0; d < first; ++d) st.unroll(st.axis(static_cast<int>(d)));
}

// Fuses `st`'s axes from `first` on and vectorizes them in vectors of `lanes` (a scalar tail that
// loop partitioning peels when they do not divide).
void vectorize_columns(te::Stage& st, size_t first, int lanes) {
  const te::ComputeOpNode* c = compute_of(st);
  te::IterVar columns = st.axis(static_cast<int>(first));
  for (size_t d = first + 1; d < c->axis.size(); ++d)
    columns = st.fuse(columns, st.axis(static_cast<int>(d)));
  int64_t n = product_of(*dims_of(c->shape), first, c->shape.size());
  if (n > lanes) {
    auto [vectors, lane] = st.split(columns, lanes);
    if (n / lanes <= kMaxUnrolledVectors) st.unroll(vectors);
    columns = lane;
  }
  st.vectorize(columns);
}

bool schedule_rows(te::Schedule& s, const std::vector<te::Tensor>& outputs, const CpuModel& cpu) {
  int lanes = cpu.lanes(DataType::f32());
  if (outputs.size() != 1) return false;
  const te::Tensor& out = outputs[0];
  te::Stage out_stage = s[out];
  std::optional<std::vector<int64_t>> dims = dims_of(out.shape());
  if (is_reduction(out_stage) || out.ndim() == 0 || !dims) return false;
  std::optional<size_t> first;
  int64_t chains = 0;  // the most accumulator chains of a statistic
  bool every_stat_vectorized = true;
  for (const te::Stage& st : s.stages()) {
    if (!is_reduction(st)) continue;
    std::optional<size_t> f = reduced_suffix(*compute_of(st), *dims);
    if (!f || (first && *f != *first)) return false;
    first = f;
    std::optional<RowReduction> r = row_reduction(*compute_of(st), *dims, lanes);
    chains = std::max(chains, r ? r->chains : 0);
    every_stat_vectorized = every_stat_vectorized && r;
  }
  if (!first) return false;

  // Intermediates of the output's shape that several stages read are computed per row; the
  // other elementwise stages are inlined.
  std::vector<te::Stage> per_row;  // statistics and row buffers, in dataflow order
  for (te::Stage st : s.stages()) {
    const te::ComputeOpNode* c = compute_of(st);
    if (!c || st->is_output) continue;
    if (is_reduction(st) || (s->consumers_of(st->op).size() > 1 && dims_of(c->shape) == dims))
      per_row.push_back(st);
    else
      st.compute_inline();
  }

  te::IterVar row = out_stage.axis(0);
  for (size_t d = 1; d < *first; ++d)
    row = out_stage.fuse(row, out_stage.axis(static_cast<int>(d)));
  vectorize_columns(out_stage, *first, lanes);
  int64_t rows = product_of(*dims, 0, *first);
  int64_t at_once = rows_at_once(*dims, *first, lanes);
  // A row buffer (softmax's exponentials) leaves blocks slower: the exps are the work, and they
  // run in a vector loop per row either way.
  bool row_buffers = std::any_of(per_row.begin(), per_row.end(),
                                 [](const te::Stage& st) { return !is_reduction(st); });
  int64_t block = at_once == 1 && every_stat_vectorized && !row_buffers
                      ? rows_in_block(*dims, *first, lanes, chains, cpu)
                      : 1;
  int64_t per_iteration = std::max(at_once, block);  // rows the row loop steps by
  if (per_iteration > 1) {
    auto [outer, inner] = out_stage.split(row, per_iteration);
    out_stage.unroll(inner);
    row = outer;
  }
  if (rows > 1 && product_of(*dims, 0, dims->size()) >= kParallelMinWork) out_stage.parallel(row);

  // Readers first: a stage is computed at the row loop once the stage that reads it is.
  for (auto it = per_row.rbegin(); it != per_row.rend(); ++it) {
    te::Stage& st = *it;
    if (!is_reduction(st)) {
      vectorize_columns(st, *first, lanes);
      st.compute_at(out_stage, row);
      if (per_iteration > 1) unroll_rows(st, *first);
      continue;
    }
    // The chains' accumulators, then halves of a vector down to two lanes, which st reduces.
    std::vector<te::Stage> partials;
    if (std::optional<RowReduction> r = row_reduction(*compute_of(st), *dims, lanes))
      partials = vector_partials(s, st, r->k, lanes * r->chains, lanes);
    st.compute_at(out_stage, row);
    compute_partials_at(partials, out_stage, row);
    if (per_iteration > 1) {
      unroll_rows(st, *first);
      for (const te::Stage& p : partials) unroll_rows(p, *first);
    }
    if (block > 1) interleave_partial_rows(partials.front());
  }
  return true;
}

// Statistics at root, parallel over their points; the outputs injective.
void schedule_at_root(te::Schedule& s, const std::vector<te::Tensor>& outputs, int lanes) {
  for (te::Stage st : s.stages()) {
    if (compute_of(st) && !is_reduction(st) && !st->is_output) st.compute_inline();
  }
  for (te::Stage st : s.stages()) {
    if (!is_reduction(st)) continue;
    const te::ComputeOpNode* c = compute_of(st);
    std::vector<PrimExpr> reduced;
    for (const te::IterVar& r : c->reduce_axis) reduced.push_back(r->dom.extent);
    std::optional<std::vector<int64_t>> points = dims_of(c->shape), lengths = dims_of(reduced);
    if (!points || !lengths) continue;
    int64_t n = product_of(*points, 0, points->size());
    std::vector<te::IterVar> data;
    for (size_t d = 0; d < c->axis.size(); ++d) data.push_back(st.axis(static_cast<int>(d)));
    if (n > 1 && n * product_of(*lengths, 0, lengths->size()) >= kParallelMinWork)
      parallel_outer(st, data);
  }
  for (const te::Tensor& o : outputs) {
    if (!is_reduction(s[o])) schedule_injective(s, o, lanes);
  }
}

}  // namespace

void vectorize_partials(te::Stage& rf) {
  std::vector<te::IterVar> order, reduce;
  te::IterVar lane;
  for (const te::IterVar& iv : rf.leaf_iter_vars()) {
    if (iv->iter_type == te::IterVarType::kCommReduce)
      reduce.push_back(iv);
    else if (iv.same_as(rf.axis(static_cast<int>(compute_of(rf)->axis.size()) - 1)))
      lane = iv;
    else
      order.push_back(iv);
  }
  order.insert(order.end(), reduce.begin(), reduce.end());
  order.push_back(lane);
  rf.reorder(order);
  rf.vectorize(lane);
}

int64_t accumulator_chains(int64_t vectors, int64_t most) {
  for (int64_t chains = std::min(most, vectors / 2); chains > 1; --chains) {
    if (vectors % chains == 0) return chains;
  }
  return 1;
}

std::vector<te::Stage> vector_partials(te::Schedule& s, te::Stage st, const te::IterVar& k,
                                       int64_t width, int lanes) {
  std::vector<te::Stage> partials{s[s.rfactor(te::Tensor(st->op), k, width)]};
  vectorize_partials(partials.back());
  while (width > 2 && width % 2 == 0) {
    width = width > lanes && width % lanes == 0 ? lanes : width / 2;
    partials.push_back(s[s.rfactor(te::Tensor(st->op), st.reduce_axis(0), width)]);
    vectorize_partials(partials.back());
  }
  return partials;
}

void compute_partials_at(const std::vector<te::Stage>& partials, te::Stage parent,
                         const te::IterVar& at) {
  // Readers first: a stage is computed at a loop once the stage that reads it is.
  for (auto p = partials.rbegin(); p != partials.rend(); ++p) te::Stage(*p).compute_at(parent, at);
}

void interleave_partial_rows(te::Stage rf) {
  te::IterVar lane = rf.axis(static_cast<int>(compute_of(rf)->axis.size()) - 1);
  std::vector<te::IterVar> order, rows;
  for (const te::IterVar& iv : rf.leaf_iter_vars()) {
    if (!iv.same_as(lane))
      (iv->iter_type == te::IterVarType::kCommReduce ? order : rows).push_back(iv);
  }
  order.insert(order.end(), rows.begin(), rows.end());
  order.push_back(lane);
  rf.reorder(order);
}

void schedule_statistics(te::Schedule& s, const std::vector<te::Tensor>& outputs, const AnchorOp&,
                         const CpuModel& cpu, const ConfigEntity*) {
  // Vectors of float32 whatever the dtype, as the other CPU schedules size theirs.
  if (!schedule_rows(s, outputs, cpu)) schedule_at_root(s, outputs, cpu.lanes(DataType::f32()));
}

}  // namespace tessel::topi
