#include "autotune/auto_schedule/program.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <numeric>
#include <optional>

#include "autotune/auto_schedule/compute_location.h"
#include "ir/error.h"
#include "te/bound_inference.h"
#include "topi/broadcast.h"

namespace tessel::autotune {
namespace {

using te::IterVar;

// A vector loop longer than this many registers' lanes is split, its inner part vectorized.
constexpr int64_t kMaxVectorRegisters = 4;

int64_t product(const std::vector<int64_t>& v) {
  return std::accumulate(v.begin(), v.end(), int64_t{1}, std::multiplies<>());
}

struct ParallelLoop {
  IterVar loop;
  size_t fused = 0;  // how many of the loops it fuses
};

// Fuses the first `n` (1 or more) of `loops`, adjacent and outermost first, and as many more as it
// takes to give the fused loop two or more iterations (a parallel loop of one runs serially: a
// batch-1 conv's outermost axis), and runs it in parallel.
ParallelLoop fuse_parallel(te::Stage& st, const std::vector<IterVar>& loops, int n) {
  te::Bounds ranges = te::own_loop_ranges(*st.node());
  auto extent_of = [&](const IterVar& iv) {  // 0: not a constant
    const int64_t* e = as_const_int(ranges.at(iv.get()).extent);
    return e ? *e : 0;
  };
  IterVar fused = loops[0];
  int64_t extent = extent_of(loops[0]);
  size_t count = 1;
  for (; count < loops.size(); ++count) {
    if (count >= static_cast<size_t>(n) && (extent == 0 || extent >= 2)) break;
    extent *= extent_of(loops[count]);
    fused = st.fuse(fused, loops[count]);
  }
  st.parallel(fused);
  return {fused, count};
}

// Vectorizes `iv` (of extent `extent`, innermost in `st`): whole when it fits a few registers,
// else in vectors of `lanes` when they divide it; left scalar otherwise. Returns the loop over the
// vectors when it splits `iv`, else `iv` when it stays scalar, else nothing.
IterVar vectorize_loop(te::Stage& st, const IterVar& iv, int64_t extent, int lanes) {
  if (extent <= 1) return iv;
  if (extent <= kMaxVectorRegisters * lanes) {
    st.vectorize(iv);
    return IterVar();
  }
  if (extent % lanes != 0) return iv;
  auto [vectors, vector] = st.split(iv, lanes);
  st.vectorize(vector);
  return vectors;
}

void unroll_outermost(te::Stage& st, int64_t steps) {
  if (steps > 0 && !st.leaf_iter_vars().empty())
    st.pragma(st.leaf_iter_vars()[0], "auto_unroll_max_step", steps);
}

// The loops of a multi-level tile: spatial[l] holds level l of every spatial axis.
struct TileLoops {
  std::vector<IterVar> spatial[kSpatialLevels];
  std::vector<IterVar> reduce[kReduceLevels];
};

// Tiles `st` SSRSRS by `tiles` (StageParams::tiles) and orders its loops
// S0 S1 R0 S2 R1 S3.
TileLoops multi_level_tile(te::Stage& st, const std::vector<std::vector<int64_t>>& tiles) {
  const te::ComputeOpNode* c = topi::compute_of(st);
  size_t nsp = c->axis.size(), nr = c->reduce_axis.size();
  if (tiles.size() != nsp + nr) {
    throw Error(fmt::format("auto-scheduler: stage '{}' has {} axes, the program tiles {}",
                            st.name(), nsp + nr, tiles.size()));
  }
  TileLoops t;
  for (size_t a = 0; a < nsp + nr; ++a) {
    bool spatial = a < nsp;
    const std::vector<int64_t>& f = tiles[a];
    size_t inner = spatial ? kSpatialLevels - 1 : kReduceLevels - 1;
    if (f.size() != inner) {
      throw Error(fmt::format("auto-scheduler: axis {} of stage '{}' needs {} tile extents, has {}",
                              a, st.name(), inner, f.size()));
    }
    IterVar rest =
        spatial ? st.axis(static_cast<int>(a)) : st.reduce_axis(static_cast<int>(a - nsp));
    std::vector<IterVar> levels(inner + 1);
    for (size_t l = inner; l > 0; --l) std::tie(rest, levels[l]) = st.split(rest, f[l - 1]);
    levels[0] = rest;
    for (size_t l = 0; l <= inner; ++l) (spatial ? t.spatial[l] : t.reduce[l]).push_back(levels[l]);
  }
  std::vector<IterVar> order;
  for (const auto* group :
       {&t.spatial[0], &t.spatial[1], &t.reduce[0], &t.spatial[2], &t.reduce[1], &t.spatial[3]}) {
    order.insert(order.end(), group->begin(), group->end());
  }
  st.reorder(order);
  return t;
}

// The vector loop of a tile: level 3 of its last spatial axis.
void vectorize_tile(te::Stage& st, const TileLoops& t, const StageParams& p, int lanes) {
  if (p.vectorize && !t.spatial[3].empty())
    vectorize_loop(st, t.spatial[3].back(), p.tiles[t.spatial[3].size() - 1].back(), lanes);
}

// kTile: the tile at root, its outer level parallel (and level 1's loops as well, where level 0's
// run once).
void schedule_tile(te::Stage st, const StageParams& p, int lanes) {
  TileLoops t = multi_level_tile(st, p.tiles);
  std::vector<IterVar> outer = t.spatial[0];  // S0 S1 ...: level 1 follows level 0
  outer.insert(outer.end(), t.spatial[1].begin(), t.spatial[1].end());
  if (p.parallel > 0) fuse_parallel(st, outer, p.parallel);
  vectorize_tile(st, t, p, lanes);
  unroll_outermost(st, p.unroll);
}

// The consumer's loops that hold a tile's `n` axes, and each one's rank in the consumer's own
// loop order (its innermost last): the consumer's axis a for axis a of the tile, or with
// `unpacked_as` (StageFacts) the loop it names, the consumer's blocked axes split first.
// `block[a]`: b when the loop is the inner part of a block of b, which a tile holds whole (te
// infers the region of m % b read from a part of that loop as the whole block, and would compute
// it again for each part); 0 otherwise.
struct HeldLoops {
  std::vector<IterVar> loops;
  std::vector<size_t> rank;
  std::vector<int64_t> block;
};
HeldLoops held_loops(te::Stage& consumer, size_t n, const std::vector<BlockedRead>& unpacked_as) {
  HeldLoops h;
  size_t nc = topi::compute_of(consumer)->axis.size();
  if (unpacked_as.empty()) {
    for (size_t a = 0; a < std::min(n, nc); ++a) {
      h.loops.push_back(consumer.axis(static_cast<int>(a)));
      h.rank.push_back(a);
      h.block.push_back(0);
    }
    return h;
  }
  std::vector<IterVar> outer(nc), inner(nc);
  for (const BlockedRead& r : unpacked_as) {
    if (r.block > 0 && !outer[r.axis].defined())
      std::tie(outer[r.axis], inner[r.axis]) =
          consumer.split(consumer.axis(static_cast<int>(r.axis)), r.block);
  }
  for (const BlockedRead& r : unpacked_as) {
    h.loops.push_back(r.block == 0 ? consumer.axis(static_cast<int>(r.axis))
                      : r.inner    ? inner[r.axis]
                                   : outer[r.axis]);
    h.rank.push_back(2 * r.axis + (r.inner ? 1 : 0));
    h.block.push_back(r.inner ? r.block : 0);
  }
  return h;
}

// kTileFused, kCacheWrite: `tile` multi-level tiled by `tp` and computed inside `consumer`, whose
// loops that hold the tile's axes (held_loops) are split to match the tile's levels below
// `level` (a block's inner part held whole), and scheduled by `cp`. The consumer's loops inside
// the tile run in its own order, so that its innermost axis is the vector loop even where it
// unpacks a blocked tile.
void schedule_tile_in(te::Stage tile, const StageParams& tp, te::Stage consumer,
                      const StageParams& cp, int level, int lanes,
                      const std::vector<BlockedRead>& unpacked_as = {}) {
  TileLoops t = multi_level_tile(tile, tp.tiles);
  vectorize_tile(tile, t, tp, lanes);
  size_t n = t.spatial[0].size();
  HeldLoops h = held_loops(consumer, n, unpacked_as);
  if (h.loops.size() != n ||
      (unpacked_as.empty() && topi::compute_of(consumer)->axis.size() != n)) {
    throw Error(fmt::format("auto-scheduler: '{}' has {} axes, its tile '{}' {}", consumer.name(),
                            topi::compute_of(consumer)->axis.size(), tile.name(), n));
  }
  std::vector<IterVar> outer[2], inner(n);
  std::vector<int64_t> held(n);
  for (size_t a = 0; a < n; ++a) {
    const std::vector<int64_t>& f = tp.tiles[a];
    held[a] = h.block[a] > 0 ? h.block[a] : product({f.begin() + level - 1, f.end()});
    auto [o, i] = consumer.split(h.loops[a], held[a]);
    if (level == 2) {
      auto [o0, o1] = consumer.split(o, h.block[a] > 0 ? 1 : f[0]);
      outer[0].push_back(o0);
      outer[1].push_back(o1);
    } else {
      outer[0].push_back(o);
    }
    inner[a] = i;
  }
  std::vector<size_t> by_rank(n);
  std::iota(by_rank.begin(), by_rank.end(), size_t{0});
  std::sort(by_rank.begin(), by_rank.end(),
            [&](size_t x, size_t y) { return h.rank[x] < h.rank[y]; });
  std::vector<IterVar> order = outer[0];
  order.insert(order.end(), outer[1].begin(), outer[1].end());
  for (size_t a : by_rank) order.push_back(inner[a]);
  consumer.reorder(order);
  IterVar at = level == 2 ? outer[1].back() : outer[0].back();
  if (cp.parallel > 0) {
    // At level 2 the parallel loop may reach into level 1's loops (adjacent, outside the tile).
    std::vector<IterVar> candidates = outer[0];
    if (level == 2) candidates.insert(candidates.end(), outer[1].begin(), outer[1].end());
    ParallelLoop par = fuse_parallel(consumer, candidates, cp.parallel);
    if (par.fused == candidates.size()) at = par.loop;
  }
  tile.compute_at(consumer, at);
  if (cp.vectorize) vectorize_loop(consumer, inner[by_rank.back()], held[by_rank.back()], lanes);
  unroll_outermost(consumer, cp.unroll);
}

// kRoot: the outer spatial axes fused and parallel; the last one vectorized (below the reduce
// loops, for a reduction). With p.rows (an injective output), the axis before the last goes in
// blocks of that many rows, the block's rows a loop inside the parallel one. Returns the loop that
// holds a block (the loop over the blocks, or the parallel loop that fuses it); undefined without
// blocks.
IterVar schedule_root(te::Stage st, const StageParams& p, int lanes) {
  const te::ComputeOpNode* c = topi::compute_of(st);
  size_t nsp = c->axis.size();
  std::vector<IterVar> axes;
  for (size_t a = 0; a < nsp; ++a) axes.push_back(st.axis(static_cast<int>(a)));
  // An injective stage is vectorized whatever its parallel depth: the loop over its last axis'
  // vectors may join the parallel loop (a [1, 1000] output's only loop of more than one).
  bool injective = c->reduce_axis.empty();
  IterVar block;
  if (p.rows > 1 && injective && nsp >= 2) {
    IterVar rows;
    std::tie(block, rows) = st.split(axes[nsp - 2], p.rows);
    axes[nsp - 2] = block;
  }
  if (p.vectorize && (static_cast<size_t>(p.parallel) < nsp || injective)) {
    IterVar last = axes.back();
    if (!c->reduce_axis.empty()) {
      std::vector<IterVar> order(axes.begin(), axes.end() - 1);
      for (size_t r = 0; r < c->reduce_axis.size(); ++r)
        order.push_back(st.reduce_axis(static_cast<int>(r)));
      order.push_back(last);
      st.reorder(order);
    }
    const int64_t* extent = as_const_int(c->axis.back()->dom.extent);
    IterVar rest = vectorize_loop(st, last, extent ? *extent : 0, lanes);
    axes.pop_back();  // below the reduce loops, it does not join the parallel loop
    if (injective && rest.defined()) axes.push_back(rest);
  }
  if (block.defined()) axes.resize(nsp - 1);  // a block's rows sit between it and the columns
  if (p.parallel > 0 && !axes.empty()) {
    ParallelLoop par = fuse_parallel(st, axes, p.parallel);
    if (block.defined() && par.fused == axes.size()) block = par.loop;
  }
  unroll_outermost(st, p.unroll);
  return block;
}

// kRfactor: the innermost reduce axis factored into vector partials computed at the stage's
// innermost spatial loop; vectorized, the partials reduce as a tree (topi::vector_partials).
// Returns the vectorized partials (none when not vectorized).
std::vector<te::Stage> schedule_rfactor(te::Schedule& s, te::Stage st, const StageParams& p,
                                        int lanes) {
  const te::ComputeOpNode* c = topi::compute_of(st);
  if (p.tiles.size() != 1 || p.tiles[0].size() != 1) {
    throw Error(fmt::format("auto-scheduler: the rfactor of '{}' needs one factor", st.name()));
  }
  IterVar k = st.reduce_axis(static_cast<int>(c->reduce_axis.size()) - 1);
  std::vector<te::Stage> partials =
      p.vectorize ? topi::vector_partials(s, st, k, p.tiles[0][0], lanes)
                  : std::vector<te::Stage>{s[s.rfactor(te::Tensor(st->op), k, p.tiles[0][0])]};
  size_t nsp = c->axis.size();
  std::vector<IterVar> axes;
  for (size_t a = 0; a < nsp; ++a) axes.push_back(st.axis(static_cast<int>(a)));
  IterVar at = nsp > 0 ? axes.back() : IterVar();
  if (p.parallel > 0) {
    ParallelLoop par = fuse_parallel(st, axes, p.parallel);
    if (par.fused == nsp) at = par.loop;
  }
  if (at.defined()) topi::compute_partials_at(partials, st, at);
  unroll_outermost(st, p.unroll);
  if (!p.vectorize) partials.clear();
  return partials;
}

// Whether stage `i`'s plan gives it loops of its own at root (parallel and unroll knobs).
bool at_root(SketchRule r) {
  return r == SketchRule::kRoot || r == SketchRule::kTile || r == SketchRule::kConsumer ||
         r == SketchRule::kCacheWrite || r == SketchRule::kRfactor;
}
bool tiled(SketchRule r) {
  return r == SketchRule::kTile || r == SketchRule::kTileFused || r == SketchRule::kCacheWrite;
}

std::vector<int64_t> divisors(int64_t n) {
  if (n <= 0) return {1};  // an empty axis: every level of it is 1
  std::vector<int64_t> out;
  for (int64_t d = 1; d * d <= n; ++d) {
    if (n % d) continue;
    out.push_back(d);
    if (d * d != n) out.push_back(n / d);
  }
  std::sort(out.begin(), out.end());
  return out;
}

template <class T>
const T& pick(const std::vector<T>& v, std::mt19937_64& rng) {
  return v[std::uniform_int_distribution<size_t>(0, v.size() - 1)(rng)];
}

// Inner level extents of an axis of `extent` in `levels` levels: each a random divisor of what
// the levels inside it leave, the innermost `inner` when given, else at most kMaxInnerTile.
constexpr int64_t kMaxInnerTile = 64;
std::vector<int64_t> sample_tile(int64_t extent, size_t levels, std::mt19937_64& rng,
                                 int64_t inner = 0) {
  std::vector<int64_t> f(levels - 1);
  int64_t left = extent;
  for (size_t l = levels - 1; l > 0; --l) {
    std::vector<int64_t> d = divisors(left);
    if (l == levels - 1) std::erase_if(d, [](int64_t x) { return x > kMaxInnerTile; });
    f[l - 1] = l == levels - 1 && inner > 0 ? inner : pick(d, rng);
    left = (left + f[l - 1] - 1) / f[l - 1];  // a ragged `inner` covers the axis rounded up
  }
  return f;
}

// The extent that an axis' tiles cover: the axis' own, or rounded up to whole innermost tiles
// where those are ragged (a vector loop that does not divide the axis, sample_register_tile).
int64_t covered_extent(int64_t extent, const std::vector<int64_t>& tiles) {
  int64_t inner = tiles.empty() ? 1 : tiles.back();
  return (extent + inner - 1) / inner * inner;
}

// The share of tiled stages whose spatial tiles sample_program draws as a register tile.
constexpr double kRegisterTileShare = 0.5;

// Spatial tiles whose innermost level is a register tile (Ansor draws every level uniformly, and
// most such tiles spill or leave the vector loop ragged): the last axis, the vector loop, one or
// two whole vectors; the other axes' innermost extents drawn so that the tile's accumulator
// vectors fit CpuModel::accumulator_registers and, where a few draws find one, number at least
// `chains`; the levels above uniform. Where no whole vectors divide the last axis but it is
// longer than one, the vector loop is one vector and the last tile ragged, as the template's
// columns are (28 columns as 8 + 8 + 8 + 4 on AVX2: uniform divisors of 28 leave every vector
// loop partial). nullopt when the last axis is shorter than a vector.
constexpr int kRegisterTileDraws = 8;
std::optional<std::vector<std::vector<int64_t>>> sample_register_tile(
    const std::vector<int64_t>& spatial, int lanes, int accumulators, int chains,
    std::mt19937_64& rng) {
  if (spatial.empty()) return std::nullopt;
  std::vector<int64_t> vectors;
  for (int64_t d : divisors(spatial.back())) {
    if (d % lanes == 0 && d <= 2 * lanes) vectors.push_back(d);
  }
  if (vectors.empty() && spatial.back() > lanes) vectors.push_back(lanes);
  if (vectors.empty()) return std::nullopt;
  auto draw = [&] {
    std::vector<int64_t> inner(spatial.size(), 1);
    inner.back() = pick(vectors, rng);
    int64_t budget = std::max<int64_t>(1, accumulators / (inner.back() / lanes));
    std::vector<size_t> order(spatial.size() - 1);
    std::iota(order.begin(), order.end(), size_t{0});
    std::shuffle(order.begin(), order.end(), rng);
    for (size_t a : order) {
      std::vector<int64_t> d = divisors(spatial[a]);
      std::erase_if(d, [&](int64_t x) { return x > budget; });
      inner[a] = pick(d, rng);
      budget /= inner[a];
    }
    return inner;
  };
  // A tile of fewer accumulators than `chains` leaves FMA units idle (CpuModel::fma_chains):
  // such draws are redrawn a few times, and the fullest kept.
  std::vector<int64_t> inner;
  int64_t most = 0;
  for (int attempt = 0; attempt < kRegisterTileDraws && most < chains; ++attempt) {
    std::vector<int64_t> d = draw();
    int64_t acc = product(d) / lanes;  // the vector loop is whole vectors
    if (acc > most) most = acc, inner = std::move(d);
  }
  std::vector<std::vector<int64_t>> tiles;
  for (size_t a = 0; a < spatial.size(); ++a)
    tiles.push_back(sample_tile(spatial[a], kSpatialLevels, rng, inner[a]));
  return tiles;
}

int spatial_axes(const ComputeDAG& dag, const Sketch& sk, size_t i) {
  if (sk.plans[i].rule == SketchRule::kConsumer) {
    for (size_t j = 0; j < sk.plans.size(); ++j) {
      if (sk.plans[j].rule == SketchRule::kTileFused && sk.plans[j].into == i)
        return static_cast<int>(dag.stages()[j].spatial.size());
    }
  }
  return static_cast<int>(dag.stages()[i].spatial.size());
}

// The rows a block of stage `i` may hold (StageParams::rows): those of kBlockRows that divide its
// row axis (the one before the last) into two blocks or more, where the stage is the output,
// injective at root, and a producer that may take a compute location has that axis (a statistic
// per row; not one that reduces it, as an instance norm reduces the rows of its planes). Empty
// where it takes no blocks.
constexpr int64_t kBlockRows[] = {2, 4, 8};
std::vector<int64_t> block_rows(const ComputeDAG& dag, const Sketch& sk, size_t i) {
  const StageFacts& f = dag.stages()[i];
  if (i != dag.output_stage() || sk.plans[i].rule != SketchRule::kRoot || !f.reduce.empty() ||
      f.spatial.size() < 2) {
    return {};
  }
  size_t row_axis = f.spatial.size() - 2;
  int64_t extent = f.spatial[row_axis];
  bool per_row = false;
  for (size_t j = 0; j < dag.stages().size(); ++j) {
    const std::vector<int64_t>& axes = dag.stages()[j].spatial;
    per_row |= locatable(dag, sk, j) && axes.size() > row_axis && axes[row_axis] == extent;
  }
  std::vector<int64_t> rows;
  for (int64_t r : kBlockRows) {
    if (per_row && extent % r == 0 && extent > r) rows.push_back(r);
  }
  return rows;
}

// Whether a stage is computed at the loop of the output's row axis, which blocks split: without
// one, blocks only add a loop.
bool located_per_row(const ComputeDAG& dag, const Program& p) {
  size_t out = dag.output_stage();
  if (out == kNoStage) return false;
  int row_location = static_cast<int>(dag.stages()[out].spatial.size()) - 1;
  return std::any_of(p.stages.begin(), p.stages.end(),
                     [&](const StageParams& sp) { return sp.compute_at == row_location; });
}

// The output's rows in a block, none half the time (the untuned schedules' rows go one, two or
// four at a time: topi/schedule_statistics.cc), where a stage is located per row.
void sample_rows(const ComputeDAG& dag, const Sketch& sk, Program& p, std::mt19937_64& rng) {
  size_t out = dag.output_stage();
  if (out == kNoStage) return;
  std::vector<int64_t> rows = block_rows(dag, sk, out);
  bool none = rows.empty() || !located_per_row(dag, p) || std::bernoulli_distribution(0.5)(rng);
  p.stages[out].rows = none ? 0 : pick(rows, rng);
}

int64_t sample_unroll(std::mt19937_64& rng) {
  return kUnrollSteps[std::uniform_int_distribution<size_t>(0, std::size(kUnrollSteps) - 1)(rng)];
}

int sample_parallel(int nsp, std::mt19937_64& rng) {
  return nsp == 0 ? 0 : std::uniform_int_distribution<int>(1, nsp)(rng);
}

void check_program(const ComputeDAG& dag, const std::vector<Sketch>& sketches, const Program& p) {
  if (p.sketch >= sketches.size() || p.stages.size() != dag.stages().size()) {
    throw Error(fmt::format(
        "auto-scheduler: program of sketch {} with {} stages, the task has {} sketches, {} stages",
        p.sketch, p.stages.size(), sketches.size(), dag.stages().size()));
  }
}

}  // namespace

std::string Program::str(const ComputeDAG& dag) const {
  std::vector<std::string> parts;
  for (size_t i = 0; i < stages.size() && i < dag.stages().size(); ++i) {
    const StageParams& p = stages[i];
    if (p == StageParams{}) continue;
    std::vector<std::string> what;
    if (!p.tiles.empty()) {
      std::vector<std::string> t;
      for (const auto& f : p.tiles) t.push_back(fmt::format("[{}]", fmt::join(f, ",")));
      what.push_back(fmt::format("tiles {}", fmt::join(t, " ")));
    }
    if (p.parallel) what.push_back(fmt::format("parallel {}", p.parallel));
    if (p.unroll) what.push_back(fmt::format("unroll {}", p.unroll));
    if (p.vectorize) what.emplace_back("vectorize");
    if (p.compute_at) what.push_back(fmt::format("at {}", p.compute_at));
    if (p.rows) what.push_back(fmt::format("rows {}", p.rows));
    parts.push_back(fmt::format("{}: {}", dag.stages()[i].name, fmt::join(what, "; ")));
  }
  // A template sketch's program (its stages unused; config 0 prints as a program without numbers).
  if (config != 0) parts.push_back(fmt::format("config {}", config));
  return fmt::format("sketch {} | {}", sketch, fmt::join(parts, " | "));
}

te::Schedule apply(const ComputeDAG& dag, const Sketch& sketch, const Program& program) {
  if (program.stages.size() != dag.stages().size() || sketch.plans.size() != dag.stages().size()) {
    throw Error(fmt::format("auto-scheduler: a program of {} stages for a task of {}",
                            program.stages.size(), dag.stages().size()));
  }
  te::Schedule s = dag.schedule();
  if (sketch.schedule_template) {
    s.replay(sketch.schedule_template->trace(program.config));
    return s;
  }
  int lanes = dag.lanes();
  IterVar out_block;  // the output's loop over blocks of its rows
  std::vector<std::vector<te::Stage>> partials(dag.stages().size());  // kRfactor's, vectorized
  // Consumers first: a tile is computed inside its consumer's loops, made when the tile is.
  for (size_t i = dag.stages().size(); i-- > 0;) {
    const StageFacts& f = dag.stages()[i];
    const StagePlan& plan = sketch.plans[i];
    if (f.placeholder) continue;
    // A stage computed inside the output's loops has no loops of its own to parallelize.
    StageParams p = program.stages[i];
    if (p.compute_at > 0) p.parallel = 0, p.unroll = 0;
    te::Stage st = s[f.name];
    if (p.rows != 0 && std::ranges::count(block_rows(dag, sketch, i), p.rows) == 0) {
      throw Error(fmt::format("auto-scheduler: stage '{}' cannot take its rows in blocks of {}",
                              f.name, p.rows));
    }
    switch (plan.rule) {
      case SketchRule::kInline:
        st.compute_inline();
        break;
      case SketchRule::kRoot: {
        IterVar block = schedule_root(st, p, lanes);
        if (i == dag.output_stage()) out_block = block;
        break;
      }
      case SketchRule::kTile:
        schedule_tile(st, p, lanes);
        break;
      case SketchRule::kTileFused: {
        const StageFacts& into = dag.stages()[plan.into];
        schedule_tile_in(st, p, s[into.name], program.stages[plan.into], plan.level, lanes,
                         f.unpacked_as);
        break;
      }
      case SketchRule::kCacheWrite: {
        te::Stage local = s[s.cache_write(te::Tensor(st->origin_op), MemScope::kLocal)];
        schedule_tile_in(local, p, st, p, plan.level, lanes);
        break;
      }
      case SketchRule::kRfactor:
        partials[i] = schedule_rfactor(s, st, p, lanes);
        break;
      case SketchRule::kConsumer:
        break;  // scheduled with its tile
    }
  }
  // Readers first: te attaches a stage to a loop of the output only once what reads it is there.
  for (size_t i = dag.stages().size(); i-- > 0;) {
    int at = program.stages[i].compute_at;
    if (at == 0) continue;
    if (at < 0 || at > max_compute_at(dag, sketch, program, i)) {
      throw Error(fmt::format("auto-scheduler: stage '{}' cannot be computed at location {}",
                              dag.stages()[i].name, at));
    }
    size_t out = dag.output_stage();
    te::Stage out_stage = s[dag.stages()[out].name];
    IterVar loop = location_loop(out_stage, program.stages[out], at, out_block);
    s[dag.stages()[i].name].compute_at(out_stage, loop);
    // At a block of rows (or the parallel loop that fuses it), the partials too, each vector of
    // every row in turn.
    if (out_block.defined() && loop.same_as(out_block) && !partials[i].empty()) {
      topi::compute_partials_at(partials[i], out_stage, loop);
      topi::interleave_partial_rows(partials[i].front());
    }
  }
  return s;
}

Program sample_program(const ComputeDAG& dag, const std::vector<Sketch>& sketches, size_t index,
                       std::mt19937_64& rng) {
  TESSEL_ICHECK(index < sketches.size()) << "sketch " << index << " of " << sketches.size();
  const Sketch& sk = sketches[index];
  Program p;
  p.sketch = index;
  p.stages.resize(dag.stages().size());
  if (sk.schedule_template) {
    p.config = sample_template_config(*sk.schedule_template, rng);
    return p;
  }
  std::bernoulli_distribution vectorize(0.85);
  for (size_t i = 0; i < dag.stages().size(); ++i) {
    const StageFacts& f = dag.stages()[i];
    SketchRule r = sk.plans[i].rule;
    if (f.placeholder || r == SketchRule::kInline) continue;
    StageParams& sp = p.stages[i];
    if (tiled(r)) {
      std::optional<std::vector<std::vector<int64_t>>> shaped;
      if (std::bernoulli_distribution(kRegisterTileShare)(rng))
        shaped = sample_register_tile(f.spatial, dag.lanes(), dag.cpu().accumulator_registers(),
                                      dag.cpu().fma_chains, rng);
      if (shaped) {
        sp.tiles = std::move(*shaped);
      } else {
        for (int64_t e : f.spatial) sp.tiles.push_back(sample_tile(e, kSpatialLevels, rng));
      }
      for (int64_t e : f.reduce) sp.tiles.push_back(sample_tile(e, kReduceLevels, rng));
    }
    if (r == SketchRule::kRfactor) {
      std::vector<int64_t> factors;
      for (int64_t d : divisors(f.reduce.back())) {
        if (d % dag.lanes() == 0 && d <= kMaxVectorRegisters * dag.lanes()) factors.push_back(d);
      }
      TESSEL_ICHECK(!factors.empty()) << "rfactor of '" << f.name << "' without a vector factor";
      sp.tiles = {{pick(factors, rng)}};
    }
    if (at_root(r)) {
      sp.parallel = sample_parallel(spatial_axes(dag, sk, i), rng);
      sp.unroll = sample_unroll(rng);
    }
    sp.vectorize = vectorize(rng);
  }
  for (size_t i = dag.stages().size(); i-- > 0;) {  // readers first
    int most = max_compute_at(dag, sk, p, i);
    if (most > 0) p.stages[i].compute_at = std::uniform_int_distribution<int>(0, most)(rng);
  }
  sample_rows(dag, sk, p, rng);
  return p;
}

const char* mutation_name(Mutation m) {
  switch (m) {
    case Mutation::kTileSize:
      return "tile size";
    case Mutation::kParallel:
      return "parallel";
    case Mutation::kUnroll:
      return "unroll";
    case Mutation::kVectorize:
      return "vectorize";
    case Mutation::kComputeAt:
      return "compute location";
  }
  return "?";
}

Program mutate(const ComputeDAG& dag, const std::vector<Sketch>& sketches, const Program& p,
               const std::vector<double>& weights, std::mt19937_64& rng, Mutation* applied) {
  check_program(dag, sketches, p);
  const Sketch& sk = sketches[p.sketch];
  Mutation kind =
      static_cast<Mutation>(std::discrete_distribution<int>(weights.begin(), weights.end())(rng));
  if (applied) *applied = kind;
  if (sk.schedule_template) {
    if (applied) *applied = Mutation::kTileSize;
    Program out = p;
    out.config = mutate_template_config(*sk.schedule_template, p.config, rng);
    return out;
  }
  // The stages a mutation of this kind can change.
  std::vector<size_t> candidates;
  for (size_t i = 0; i < dag.stages().size(); ++i) {
    SketchRule r = sk.plans[i].rule;
    if (dag.stages()[i].placeholder || r == SketchRule::kInline) continue;
    bool ok = kind == Mutation::kTileSize
                  ? tiled(r) || (!block_rows(dag, sk, i).empty() && located_per_row(dag, p))
              : kind == Mutation::kVectorize ? true
              : kind == Mutation::kParallel  ? at_root(r) && spatial_axes(dag, sk, i) > 0
              : kind == Mutation::kComputeAt ? locatable(dag, sk, i)
                                             : at_root(r);
    if (ok) candidates.push_back(i);
  }
  Program out = p;
  if (candidates.empty()) return out;
  size_t i = pick(candidates, rng);
  StageParams& sp = out.stages[i];
  const StageFacts& f = dag.stages()[i];
  switch (kind) {
    case Mutation::kTileSize: {
      if (!tiled(sk.plans[i].rule)) {  // the output's rows in a block, another number of them
        std::vector<int64_t> rows = block_rows(dag, sk, i);
        rows.push_back(0);
        std::erase(rows, sp.rows);
        sp.rows = pick(rows, rng);
        break;
      }
      // Moves a factor of one level's extent to another level of the same axis.
      std::vector<size_t> axes;
      for (size_t a = 0; a < sp.tiles.size(); ++a) {
        int64_t e = a < f.spatial.size() ? f.spatial[a] : f.reduce[a - f.spatial.size()];
        if (e > 1) axes.push_back(a);
      }
      if (axes.empty()) return out;
      size_t a = pick(axes, rng);
      int64_t extent = a < f.spatial.size() ? f.spatial[a] : f.reduce[a - f.spatial.size()];
      int64_t covered = covered_extent(extent, sp.tiles[a]);
      std::vector<int64_t> levels = sp.tiles[a];
      levels.insert(levels.begin(), covered / product(sp.tiles[a]));
      // A ragged innermost level stays as it is: the levels above divide the rounded-up axis (at
      // least two tiles of it, so one of them has a factor to move).
      size_t movable = covered == extent ? levels.size() : levels.size() - 1;
      std::vector<size_t> from;
      for (size_t l = 0; l < movable; ++l) {
        if (levels[l] > 1) from.push_back(l);
      }
      size_t src = pick(from, rng);
      size_t dst = std::uniform_int_distribution<size_t>(0, movable - 2)(rng);
      if (dst >= src) ++dst;
      std::vector<int64_t> d = divisors(levels[src]);
      int64_t moved = d[std::uniform_int_distribution<size_t>(1, d.size() - 1)(rng)];
      if (dst == levels.size() - 1 && levels[dst] * moved > kMaxInnerTile) return out;
      levels[src] /= moved;
      levels[dst] *= moved;
      sp.tiles[a].assign(levels.begin() + 1, levels.end());
      break;
    }
    case Mutation::kParallel:
      // The parallel granularity, as Ansor mutates it: how many outer loops the parallel loop
      // fuses, never none. A serial program wins its measurements whenever the VM's second core
      // is slow for a while, as it was for a whole ResNet-50 tune (session 32: the 1x1 convs
      // 64->256 at 56x56 with their residual Add took serial programs, measured 1.13x faster than
      // the untuned kernel; alone afterwards they ran 1.4x faster at 1 thread and 1.5x slower
      // at 2, and the tuned model 0.96x the untuned one at 2 threads).
      sp.parallel = sample_parallel(spatial_axes(dag, sk, i), rng);
      break;
    case Mutation::kUnroll:
      sp.unroll = sample_unroll(rng);
      break;
    case Mutation::kVectorize:
      sp.vectorize = !sp.vectorize;
      break;
    case Mutation::kComputeAt:
      sp.compute_at = std::uniform_int_distribution<int>(0, max_compute_at(dag, sk, out, i))(rng);
      break;
  }
  clamp_compute_at(dag, sk, out);  // a stage moved out may leave its producers too deep
  if (!located_per_row(dag, out) && dag.output_stage() != kNoStage)
    out.stages[dag.output_stage()].rows = 0;  // blocks that no stage is computed for
  return out;
}

}  // namespace tessel::autotune
