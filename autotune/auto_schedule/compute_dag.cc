#include "autotune/auto_schedule/compute_dag.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <iterator>
#include <numeric>
#include <optional>

#include "ir/error.h"
#include "te/functor.h"

namespace tessel::autotune {
namespace {

int64_t const_extent(const PrimExpr& e, const std::string& stage) {
  const int64_t* v = as_const_int(e);
  if (!v) throw Error(fmt::format("auto-scheduler: stage '{}' has a symbolic extent", stage));
  return *v;
}

// What a compute body does: the tensors it reads and at which indices, whether it calls an
// intrinsic, and how many floating-point operations one evaluation takes.
class BodyFacts : public te::TeVisitor {
 public:
  struct Read {
    te::Operation op;
    std::vector<PrimExpr> indices;
  };
  std::vector<Read> reads;
  bool calls = false;
  int64_t float_ops = 0;

 protected:
  void visit_ProducerLoad(const te::ProducerLoadNode* op, const PrimExpr& self) override {
    reads.push_back({op->op, op->indices});
    te::TeVisitor::visit_ProducerLoad(op, self);
  }
  void visit_Call(const CallNode* op, const PrimExpr& self) override {
    calls = true;
    count(self);
    te::TeVisitor::visit_Call(op, self);
  }
#define TESSEL_COUNT_BINARY(N)                                       \
  void visit_##N(const N##Node* op, const PrimExpr& self) override { \
    count(self);                                                     \
    te::TeVisitor::visit_##N(op, self);                              \
  }
  TESSEL_COUNT_BINARY(Add)
  TESSEL_COUNT_BINARY(Sub)
  TESSEL_COUNT_BINARY(Mul)
  TESSEL_COUNT_BINARY(Div)
  TESSEL_COUNT_BINARY(Min)
  TESSEL_COUNT_BINARY(Max)
#undef TESSEL_COUNT_BINARY

 private:
  void count(const PrimExpr& e) { float_ops += e.dtype().is_float() ? 1 : 0; }
};

// Whether `e` mentions `v`.
bool uses_var(const PrimExpr& e, const Var& v) {
  struct Finder : te::TeVisitor {
    const VarNode* target;
    bool found = false;
    void visit_Var(const VarNode* op, const PrimExpr&) override { found |= op == target; }
  } f;
  f.target = v.get();
  f.visit_expr(e);
  return f.found;
}

bool is_var(const PrimExpr& e, const Var& v) {
  const VarNode* n = e.as<VarNode>();
  return n && n == v.get();
}

// Where a consumer with `axes` (of extents `consumer`) reads a producer of extents `producer` at
// `indices`: each index one of its axes, or that axis' floordiv or floormod by a constant block
// that divides it; each axis read once, or as both parts of one block. nullopt otherwise.
std::optional<std::vector<BlockedRead>> blocked_read(const std::vector<PrimExpr>& indices,
                                                     const std::vector<te::IterVar>& axes,
                                                     const std::vector<int64_t>& producer,
                                                     const std::vector<int64_t>& consumer) {
  if (indices.size() != producer.size()) return std::nullopt;
  std::vector<BlockedRead> out;
  for (size_t a = 0; a < indices.size(); ++a) {
    BlockedRead r;
    PrimExpr v = indices[a];
    const PrimExpr* block = nullptr;
    if (const auto* d = v.as<FloorDivNode>()) {
      v = d->a, block = &d->b;
    } else if (const auto* m = v.as<FloorModNode>()) {
      v = m->a, block = &m->b, r.inner = true;
    }
    auto it = std::find_if(axes.begin(), axes.end(),
                           [&](const te::IterVar& iv) { return is_var(v, iv->var); });
    if (it == axes.end()) return std::nullopt;
    r.axis = static_cast<size_t>(it - axes.begin());
    int64_t want = consumer[r.axis];
    if (block) {
      const int64_t* b = as_const_int(*block);
      if (!b || *b <= 1 || want % *b != 0) return std::nullopt;
      r.block = *b;
      want = r.inner ? *b : want / *b;
    }
    if (producer[a] != want) return std::nullopt;
    out.push_back(r);
  }
  for (size_t j = 0; j < axes.size(); ++j) {
    std::vector<BlockedRead> reads;
    std::copy_if(out.begin(), out.end(), std::back_inserter(reads),
                 [&](const BlockedRead& r) { return r.axis == j; });
    bool whole = reads.size() == 1 && reads[0].block == 0;
    bool split = reads.size() == 2 && reads[0].block > 0 && reads[0].block == reads[1].block &&
                 reads[0].inner != reads[1].inner;
    if (!whole && !split) return std::nullopt;
  }
  return out;
}

double points(const std::vector<int64_t>& extents) {
  return std::accumulate(extents.begin(), extents.end(), 1.0, std::multiplies<>());
}

std::string blocked_read_str(const BlockedRead& r) {
  if (r.block == 0) return std::to_string(r.axis);
  return fmt::format("{}{}{}", r.axis, r.inner ? "%" : "/", r.block);
}

}  // namespace

ComputeDAG::ComputeDAG(std::vector<te::Tensor> outputs, std::vector<te::Tensor> args,
                       const CpuModel& cpu)
    : outputs_(std::move(outputs)), args_(std::move(args)), cpu_(cpu) {
  TESSEL_ICHECK(!outputs_.empty()) << "a compute DAG without outputs";
  lanes_ = cpu_.lanes(outputs_[0].dtype());
  te::Schedule s = schedule();
  const std::vector<te::Stage>& st = s.stages();
  std::vector<BodyFacts> bodies(st.size());
  for (size_t i = 0; i < st.size(); ++i) {
    StageFacts f;
    f.name = st[i].name();
    f.output = st[i]->is_output;
    const auto* c = st[i]->op.as<te::ComputeOpNode>();
    f.placeholder = c == nullptr;
    if (c) {
      for (const auto& iv : c->axis) f.spatial.push_back(const_extent(iv->dom.extent, f.name));
      for (const auto& iv : c->reduce_axis)
        f.reduce.push_back(const_extent(iv->dom.extent, f.name));
      f.reduction = !c->reduce_axis.empty();
      bodies[i].visit_expr(c->body);
      f.expensive = bodies[i].calls;
      flops_ +=
          points(f.spatial) * points(f.reduce) *
          static_cast<double>(std::max<int64_t>(1, bodies[i].float_ops + (f.reduction ? 1 : 0)));
    }
    stages_.push_back(std::move(f));
  }
  auto index_of = [&](const te::Operation& op) {
    for (size_t i = 0; i < st.size(); ++i) {
      if (st[i]->op.same_as(op)) return i;
    }
    return kNoStage;
  };
  for (size_t i = 0; i < st.size(); ++i) {
    StageFacts& f = stages_[i];
    if (f.placeholder) continue;
    const auto* c = st[i]->op.as<te::ComputeOpNode>();
    for (const BodyFacts::Read& r : bodies[i].reads) {
      size_t p = index_of(r.op);
      if (p != kNoStage && !stages_[p].placeholder &&
          std::find(f.producers.begin(), f.producers.end(), p) == f.producers.end()) {
        f.producers.push_back(p);
        stages_[p].consumers.push_back(i);
      }
      if (!f.reduction) continue;
      for (size_t a = 0; a < c->axis.size(); ++a) {
        bool used = std::any_of(r.indices.begin(), r.indices.end(),
                                [&](const PrimExpr& e) { return uses_var(e, c->axis[a]->var); });
        if (!used && f.spatial[a] > 1) f.data_reuse = true;
      }
    }
    if (f.reduction && !f.data_reuse && f.reduce.back() >= 2 * lanes_ &&
        f.reduce.back() % lanes_ == 0) {
      const Var& k = c->reduce_axis.back()->var;
      f.rfactor_pays = std::any_of(bodies[i].reads.begin(), bodies[i].reads.end(),
                                   [&](const BodyFacts::Read& r) {
                                     return !r.indices.empty() && is_var(r.indices.back(), k);
                                   });
    }
  }
  for (size_t i = 0; i < st.size(); ++i) {
    StageFacts& f = stages_[i];
    const auto* c = st[i]->op.as<te::ComputeOpNode>();
    f.guarded_window = c && !f.reduction && !f.consumers.empty() &&
                       c->body.as<IfThenElseExprNode>() != nullptr &&
                       std::all_of(f.consumers.begin(), f.consumers.end(),
                                   [&](size_t r) { return stages_[r].reduction; });
    // Reads of a consumer's body times its points (reduction points included), per point of i.
    auto reads_per_point = [&](size_t r) {
      double n = static_cast<double>(
          std::count_if(bodies[r].reads.begin(), bodies[r].reads.end(),
                        [&](const BodyFacts::Read& read) { return read.op.same_as(st[i]->op); }));
      return n * points(stages_[r].spatial) * points(stages_[r].reduce) / points(f.spatial);
    };
    // Scalars (a scale, an epsilon) are constants, not reads that a transform combines.
    auto tensor_reads = std::count_if(bodies[i].reads.begin(), bodies[i].reads.end(),
                                      [](const BodyFacts::Read& r) { return !r.indices.empty(); });
    f.reread_transform = c && !f.reduction && !f.output && tensor_reads >= 2 &&
                         std::any_of(f.consumers.begin(), f.consumers.end(),
                                     [&](size_t r) { return reads_per_point(r) > 1; });
  }
  if (outputs_.size() == 1) output_stage_ = index_of(outputs_[0].op());
  // Elementwise consumers: every read of the producer indexes it by the consumer's axes in order
  // (or at 0 along an axis of extent 1, as broadcasts read);
  // unpacking ones: every read at the same blocked_read.
  for (size_t p = 0; p < st.size(); ++p) {
    StageFacts& f = stages_[p];
    if (f.placeholder || f.consumers.size() != 1) continue;
    size_t ci = f.consumers[0];
    const auto* c = st[ci]->op.as<te::ComputeOpNode>();
    if (stages_[ci].reduction) continue;
    std::vector<const std::vector<PrimExpr>*> reads;
    for (const BodyFacts::Read& r : bodies[ci].reads) {
      if (r.op.same_as(st[p]->op)) reads.push_back(&r.indices);
    }
    bool matched = stages_[ci].spatial == f.spatial;
    for (const std::vector<PrimExpr>* r : reads) {
      for (size_t a = 0; a < r->size() && matched; ++a) {
        const int64_t* v = as_const_int((*r)[a]);
        matched = is_var((*r)[a], c->axis[a]->var) || (f.spatial[a] == 1 && v && *v == 0);
      }
    }
    if (matched) {
      f.elementwise_consumer = ci;
      continue;
    }
    std::optional<std::vector<BlockedRead>> as;
    for (const std::vector<PrimExpr>* r : reads) {
      auto here = blocked_read(*r, c->axis, f.spatial, stages_[ci].spatial);
      if (!here || (as && *as != *here)) {
        as.reset();
        break;
      }
      as = here;
    }
    if (as) f.unpacking_consumer = ci, f.unpacked_as = *as;
  }
}

std::string ComputeDAG::str() const {
  std::string out;
  for (const StageFacts& f : stages_) {
    if (f.placeholder) continue;
    std::vector<std::string> facts;
    if (f.output) facts.emplace_back("output");
    if (f.reduction) facts.push_back(fmt::format("reduce {}", fmt::join(f.reduce, "x")));
    if (f.data_reuse) facts.emplace_back("data reuse");
    if (f.rfactor_pays) facts.emplace_back("rfactor pays");
    if (f.expensive) facts.emplace_back("expensive");
    if (f.guarded_window) facts.emplace_back("guarded window");
    if (f.reread_transform) facts.emplace_back("re-read transform");
    if (f.elementwise_consumer != kNoStage)
      facts.push_back(fmt::format("elementwise into {}", stages_[f.elementwise_consumer].name));
    if (f.unpacking_consumer != kNoStage) {
      std::vector<std::string> at;
      for (const BlockedRead& r : f.unpacked_as) at.push_back(blocked_read_str(r));
      facts.push_back(fmt::format("unpacked by {} at [{}]", stages_[f.unpacking_consumer].name,
                                  fmt::join(at, ", ")));
    }
    out += fmt::format("  {} [{}]{}{}\n", f.name, fmt::join(f.spatial, ", "),
                       facts.empty() ? "" : ": ", fmt::join(facts, ", "));
  }
  return out;
}

}  // namespace tessel::autotune
