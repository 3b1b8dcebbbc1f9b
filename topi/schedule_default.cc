// The default CPU schedule: of injective, reduction (Reduce*, ArgMax/ArgMin, CumSum, TopK) and
// opaque groups, and of the groups the tiled and Winograd schedules cannot take. Elementwise
// stages are inlined into their readers and the outputs that are not reductions (Mean's division)
// are injective (topi::schedule_injective). Each reduction stage runs at root, its outer spatial
// axes in parallel when the work pays for a launch, an intermediate one (Mean's sum) as well as an
// output. A float sum, max or min without a condition is vectorized:
// - along its last reduce axis when every read walks it along the read's innermost dim (a
//   reduction over the input's last dim): factored into vector accumulator chains, as many as
//   keep the target's FMA units busy (CpuModel::fma_chains, the adds' units), and then a tree
//   (topi::vector_partials), as the statistics schedule's rows are;
// - else along its last spatial axis when that is whole vectors long and every read walks it
//   along its innermost dim (a reduction over leading dims, such as a mean over the sequence):
//   below the reduce loops, as many vectors of outputs accumulating in registers at once.
// The others keep scalar reduce loops. Before, every reduce loop was scalar, and an intermediate
// reduction ran on one thread.
#include <algorithm>
#include <optional>

#include "ir/expr.h"
#include "te/functor.h"
#include "topi/broadcast.h"
#include "topi/register_tile.h"
#include "topi/schedule_nn.h"

namespace tessel::topi {
namespace {

// The innermost index of each tensor read in an expression.
class InnermostReads : public te::TeVisitor {
 public:
  std::vector<PrimExpr> indices;

 protected:
  void visit_ProducerLoad(const te::ProducerLoadNode* op, const PrimExpr& self) override {
    if (!op->indices.empty()) indices.push_back(op->indices.back());
    te::TeVisitor::visit_ProducerLoad(op, self);
  }
};

// Whether every read of the reduction `red` (at least one) has `v` alone as its innermost index.
bool reads_walk(const te::ReduceNode& red, const Var& v) {
  InnermostReads reads;
  reads.visit_expr(red.source);
  return !reads.indices.empty() &&
         std::all_of(reads.indices.begin(), reads.indices.end(), [&](const PrimExpr& e) {
           const auto* var = e.as<VarNode>();
           return var && var == v.get();
         });
}

std::optional<int64_t> extent_of(const te::IterVar& iv) {
  const int64_t* e = as_const_int(iv->dom.extent);
  return e ? std::optional<int64_t>(*e) : std::nullopt;
}

// The reduction's spatial loops `spatial` (`points` iterations in all) fused and parallel when the
// work pays; returns the innermost spatial loop (the fused one, or the last when serial),
// undefined without spatial loops.
te::IterVar parallel_spatial(te::Stage& st, const std::vector<te::IterVar>& spatial, int64_t points,
                             int64_t work) {
  if (spatial.empty()) return te::IterVar();
  if (points > 1 && work >= kParallelMinWork) return parallel_outer(st, spatial);
  return spatial.back();
}

// A float sum, max or min over every point: reassociating it into vectors is what a vectorized
// reduction does, and the result stays within fp32 rounding.
const te::ReduceNode* vectorizable(const te::Stage& st) {
  const te::ComputeOpNode* c = compute_of(st);
  const auto* red = c->body.as<te::ReduceNode>();
  if (!red || !red->dtype.is_float() || !is_one(red->condition)) return nullptr;
  const std::string& op = red->combiner->name;
  if (op != "sum" && op != "max" && op != "min") return nullptr;
  for (const te::IterVar& iv : c->axis)
    if (!extent_of(iv)) return nullptr;
  for (const te::IterVar& iv : c->reduce_axis)
    if (!extent_of(iv)) return nullptr;
  return red;
}

void schedule_one(te::Schedule& s, te::Stage st, const CpuModel& cpu) {
  int lanes = cpu.lanes(DataType::f32());
  const te::ComputeOpNode* c = compute_of(st);
  int64_t points = 1, work = 1;
  for (const te::IterVar& iv : c->axis) points *= extent_of(iv).value_or(1);
  for (const te::IterVar& iv : c->reduce_axis) work *= extent_of(iv).value_or(1);
  work *= points;
  std::vector<te::IterVar> spatial;
  for (size_t a = 0; a < c->axis.size(); ++a) spatial.push_back(st.axis(static_cast<int>(a)));
  const te::ReduceNode* red = vectorizable(st);
  const te::IterVar k = c->reduce_axis.back();
  int64_t reduced = extent_of(k).value_or(0);
  if (red && reduced % lanes == 0 && reduced >= 2 * lanes && reads_walk(*red, k->var)) {
    std::vector<te::Stage> partials = vector_partials(
        s, st, k, lanes * accumulator_chains(reduced / lanes, cpu.fma_chains), lanes);
    te::IterVar at = parallel_spatial(st, spatial, points, work);
    if (at.defined()) compute_partials_at(partials, st, at);
    return;
  }
  int64_t columns = spatial.empty() ? 0 : extent_of(c->axis.back()).value_or(0);
  if (red && columns % lanes == 0 && columns >= lanes && reads_walk(*red, c->axis.back()->var)) {
    auto [vectors, lane] = st.split(spatial.back(), lanes);
    int64_t chains = accumulator_chains(columns / lanes, cpu.fma_chains);
    auto [outer, at_once] = st.split(vectors, chains);
    spatial.back() = outer;
    std::vector<te::IterVar> order = spatial;
    for (size_t r = 0; r < c->reduce_axis.size(); ++r)
      order.push_back(st.reduce_axis(static_cast<int>(r)));
    order.push_back(at_once);
    order.push_back(lane);
    st.reorder(order);
    st.unroll(at_once);
    st.vectorize(lane);
    parallel_spatial(st, spatial, points / columns * (columns / lanes / chains), work);
    return;
  }
  parallel_spatial(st, spatial, points, work);
}

}  // namespace

void schedule_default(te::Schedule& s, const std::vector<te::Tensor>& outputs, const AnchorOp&,
                      const CpuModel& cpu, const ConfigEntity*) {
  for (te::Stage st : s.stages()) {
    if (compute_of(st) && !is_reduction(st) && !st->is_output) st.compute_inline();
  }
  // Collected first: rfactor adds stages.
  std::vector<te::Stage> reductions;
  for (const te::Stage& st : s.stages()) {
    if (is_reduction(st)) reductions.push_back(st);
  }
  for (const te::Stage& st : reductions) schedule_one(s, st, cpu);
  for (const te::Tensor& o : outputs) {
    if (!is_reduction(s[o])) schedule_injective(s, o, tile_lanes(cpu));
  }
}

}  // namespace tessel::topi
