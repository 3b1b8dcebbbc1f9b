// Elementwise and numpy-broadcasting computes, and the default CPU schedule for injective
// outputs. These are the building blocks the graph lowering uses for ElemWise/Broadcast ops.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "te/operation.h"
#include "te/schedule.h"

namespace tessel::topi {

// numpy broadcasting of two shapes with constant or identical dims; Error naming `name` otherwise.
std::vector<PrimExpr> broadcast_shape(const std::vector<PrimExpr>& a,
                                      const std::vector<PrimExpr>& b, const std::string& name);
// The indices into `t` for output indices `out` of a broadcast result (size-1 dims read index 0).
std::vector<PrimExpr> broadcast_index(const te::Tensor& t, const std::vector<Var>& out);

te::Tensor unary(const te::Tensor& x, const std::function<PrimExpr(PrimExpr)>& f,
                 const std::string& name);
te::Tensor binary(const te::Tensor& a, const te::Tensor& b,
                  const std::function<PrimExpr(PrimExpr, PrimExpr)>& f, const std::string& name);

// Default CPU schedule for an injective stage: all axes fused, split by `vector_lanes` and
// vectorized, the outer part parallel (when the tensor is big enough to pay for a launch); rows
// that are not a whole number of vectors are vectorized along the last axis instead.
void schedule_injective(te::Schedule& s, const te::Tensor& out, int vector_lanes);

// Below this much work (points x reduction length) a thread-pool launch costs more than it saves.
constexpr int64_t kParallelMinWork = 1 << 14;

inline const te::ComputeOpNode* compute_of(const te::Stage& st) {
  return st->op.as<te::ComputeOpNode>();
}
inline bool is_reduction(const te::Stage& st) {
  return compute_of(st) && !compute_of(st)->reduce_axis.empty();
}

// Fuses the loops `outer` of `st` (adjacent, outermost first, at least one) and runs them in
// parallel; returns the fused loop.
te::IterVar parallel_outer(te::Stage& st, const std::vector<te::IterVar>& outer);

// Puts the factored axis of `rf` (an rfactor stage: its last axis) innermost, below all its
// reduce loops, and vectorizes it.
void vectorize_partials(te::Stage& rf);

// The independent vector accumulators of a reduction over `vectors` vectors: the add's latency
// hides behind its throughput only with several chains. The most, up to `most`, that divide the
// vectors with at least 2 each; 1 when none does.
int64_t accumulator_chains(int64_t vectors, int64_t most);

// Factors `st`'s reduce axis `k` into `width` partial results (rfactor), vectorized, and reduces
// those as a tree rather than one add per lane: into one vector of `lanes` when they are several,
// then into halves while the count is even and above 2; `st` adds the last ones. Returns the
// partial stages, in the order they are computed (each reads the one before, `st` the last). Comes
// before `st`'s other primitives, as rfactor does.
std::vector<te::Stage> vector_partials(te::Schedule& s, te::Stage st, const te::IterVar& k,
                                       int64_t width, int lanes);
// Computes `partials` (as rfactor or vector_partials made them) at loop `at` of `parent`.
void compute_partials_at(const std::vector<te::Stage>& partials, te::Stage parent,
                         const te::IterVar& at);
// Reorders the first partials of vector_partials, computed for several rows (a block of them),
// to reduce each vector of the rows in turn: the reduce loops outside the rows, so that every
// row's accumulator chains are live at once and the rows' reductions overlap.
void interleave_partial_rows(te::Stage rf);

// Vectorizes the last axis of `st`, computing `out`: whole when it is at most `vector_lanes` long,
// else in vectors of `vector_lanes` (a scalar tail when they do not divide it). Returns the
// vectorized loop.
te::IterVar vectorize_last_axis(te::Stage& st, const te::Tensor& out, int vector_lanes);

}  // namespace tessel::topi
