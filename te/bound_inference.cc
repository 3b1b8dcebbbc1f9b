#include "te/bound_inference.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "ir/error.h"
#include "ir/structural_equal.h"
#include "te/functor.h"
#include "tir/arith/analyzer.h"
#include "tir/arith/int_set.h"

namespace tessel::te {
namespace {

// Replaces reads of inlined operations by their bodies at the read indices.
class Inliner : public TeMutator {
 public:
  explicit Inliner(const std::unordered_map<const Node*, Operation>& inlined) : inlined_(inlined) {}

 protected:
  PrimExpr mutate_ProducerLoad(const ProducerLoadNode* op, const PrimExpr& self) override {
    PrimExpr e = TeMutator::mutate_ProducerLoad(op, self);
    const auto* load = e.as<ProducerLoadNode>();
    auto it = inlined_.find(load->op.get());
    if (it == inlined_.end()) return e;
    const auto* c = it->second.as<ComputeOpNode>();
    std::vector<std::pair<Var, PrimExpr>> map;
    for (size_t d = 0; d < load->indices.size(); ++d)
      map.emplace_back(c->axis[d]->var, load->indices[d]);
    return substitute_body(c->body, map);
  }

 private:
  const std::unordered_map<const Node*, Operation>& inlined_;
};

std::vector<const ProducerLoadNode*> loads_of(const PrimExpr& body, const Operation& op) {
  struct Finder : TeVisitor {
    const Operation* op;
    std::vector<const ProducerLoadNode*> found;
    void visit_ProducerLoad(const ProducerLoadNode* l, const PrimExpr& self) override {
      if (l->op.same_as(*op)) found.push_back(l);
      TeVisitor::visit_ProducerLoad(l, self);
    }
  } f;
  f.op = &op;
  f.visit_expr(body);
  return f.found;
}

bool reads_tensor(const PrimExpr& e) {
  struct Finder : TeVisitor {
    bool found = false;
    void visit_ProducerLoad(const ProducerLoadNode*, const PrimExpr&) override { found = true; }
  } f;
  f.visit_expr(e);
  return f.found;
}

// Ranges of split/fuse results from their parents' ranges, in relation order.
void pass_down(const StageNode& s, Bounds& b) {
  for (const auto& rel : s.relations) {
    if (const auto* sp = std::get_if<SplitRelation>(&rel)) {
      const Range& p = b.at(sp->parent.get());
      if (sp->factor.defined()) {
        b[sp->inner.get()] = Range(0, sp->factor);
        b[sp->outer.get()] = Range(0, ceildiv(p.extent, sp->factor));
      } else {
        b[sp->outer.get()] = Range(0, sp->nparts);
        b[sp->inner.get()] = Range(0, ceildiv(p.extent, sp->nparts));
      }
    } else {
      const auto& f = std::get<FuseRelation>(rel);
      b[f.fused.get()] = Range(0, b.at(f.outer.get()).extent * b.at(f.inner.get()).extent);
    }
  }
}

// The constant interval of a fused loop's values `e` within its range `r`, where it reaches past
// it; none otherwise (symbolic intervals keep their shape).
std::optional<arith::IntervalSet> clipped_to_extent(const PrimExpr& e, const Range& r,
                                                    const arith::VarIntervals& dom) {
  arith::IntervalSet s = arith::eval_interval(e, dom);
  const int64_t* lo = s.min.defined() ? as_const_int(s.min) : nullptr;
  const int64_t* hi = s.max.defined() ? as_const_int(s.max) : nullptr;
  const int64_t* begin = as_const_int(r.min);
  const int64_t* extent = as_const_int(r.extent);
  if (!lo || !hi || !begin || !extent || (*lo >= *begin && *hi < *begin + *extent))
    return std::nullopt;
  DataType t = e.dtype();
  return arith::IntervalSet{
      make_const(t, static_cast<double>(std::max(*lo, *begin))),
      make_const(t, static_cast<double>(std::min(*hi, *begin + *extent - 1)))};
}

// The intervals of a consumer's root iteration vars when its loops range over `dom`. A fused
// loop split by a factor that does not divide it runs past its extent only under the split's
// guard (loop_guards), so its values are clipped to its extent before they are divided back into
// the loops it fused: a stage computed for a strip of a 1x1 conv's rows and columns fused into
// one run of positions then covers those rows, not one more for the last partial tile.
arith::VarIntervals root_intervals(const StageNode& s, const Bounds& b, arith::VarIntervals dom) {
  auto values = root_values(s, b, [&](const FuseRelation& f, const PrimExpr& value) -> PrimExpr {
    std::optional<arith::IntervalSet> c = clipped_to_extent(value, b.at(f.fused.get()), dom);
    if (!c) return value;
    Var clipped(f.fused->var->name_hint + ".clipped", value.dtype());
    dom[clipped.get()] = *c;
    return clipped;
  });
  arith::VarIntervals roots = dom;
  for (const auto& rv : s.root_iter_vars)
    roots[rv->var.get()] = arith::eval_interval(values.at(rv.get()), dom);
  return roots;
}

}  // namespace

StageBodies inline_bodies(const Schedule& sch) {
  std::unordered_map<const Node*, Operation> inlined;
  StageBodies bodies;
  for (const auto& st : sch.stages()) {
    const auto* c = st->op.as<ComputeOpNode>();
    if (!c) continue;
    PrimExpr body = Inliner(inlined).mutate_expr(c->body);
    bodies[st.node().get()] = body;
    if (st->attach == AttachKind::kInline) {
      // The expanded body, so that chains of inlined stages collapse fully.
      inlined[st->op.get()] = Operation(new ComputeOpNode(c->name, c->axis, c->reduce_axis, body));
    }
  }
  return bodies;
}

std::vector<std::pair<const StageNode*, IterVar>> enclosing_loops(const StageNode& s) {
  std::vector<std::pair<const StageNode*, IterVar>> loops;
  if (s.attach == AttachKind::kScope) {
    auto host = s.attach_stage.lock();
    TESSEL_ICHECK(host) << "stage " << s.name << " attached to a dead stage";
    loops = enclosing_loops(*host);
    auto it = std::find_if(loops.begin(), loops.end(), [&](const auto& l) {
      return l.first == host.get() && l.second.same_as(s.attach_ivar);
    });
    if (it == loops.end()) {
      throw ScheduleError(
          "compute_at: axis is no longer a leaf",
          fmt::format("stage '{}' is computed at axis '{}' of '{}', which is no longer a "
                      "leaf loop of that stage (it was split or fused afterwards)",
                      s.name, s.attach_ivar.name(), host->name));
    }
    loops.erase(it + 1, loops.end());
  }
  for (const auto& iv : s.leaf_iter_vars) loops.emplace_back(&s, iv);
  return loops;
}

// From 0 in the loop var's own type: an int64 axis's loop must not start at an int32 0.
Range loop_range(const Bounds& b, const IterVar& iv) {
  return Range(make_zero(iv->var.dtype()), b.at(iv.get()).extent);
}

std::vector<std::pair<const StageNode*, IterVar>> attach_point_loops(const StageNode& s) {
  if (s.attach != AttachKind::kScope) return {};
  auto loops = enclosing_loops(s);
  loops.resize(loops.size() - s.leaf_iter_vars.size());
  return loops;
}

std::unordered_map<const IterVarNode*, PrimExpr> root_values(const StageNode& s, const Bounds& b,
                                                             const FusedValue& fused_value) {
  std::unordered_map<const IterVarNode*, PrimExpr> v;
  for (const auto& iv : s.leaf_iter_vars) v[iv.get()] = b.at(iv.get()).min + iv->var;
  for (auto it = s.relations.rbegin(); it != s.relations.rend(); ++it) {
    if (const auto* sp = std::get_if<SplitRelation>(&*it)) {
      PrimExpr inner_extent = sp->factor.defined() ? sp->factor : b.at(sp->inner.get()).extent;
      v[sp->parent.get()] =
          b.at(sp->parent.get()).min + v.at(sp->outer.get()) * inner_extent + v.at(sp->inner.get());
    } else {
      const auto& f = std::get<FuseRelation>(*it);
      PrimExpr fused = fused_value ? fused_value(f, v.at(f.fused.get())) : v.at(f.fused.get());
      PrimExpr inner_extent = b.at(f.inner.get()).extent;
      v[f.outer.get()] = b.at(f.outer.get()).min + floordiv(fused, inner_extent);
      v[f.inner.get()] = b.at(f.inner.get()).min + floormod(fused, inner_extent);
    }
  }
  return v;
}

std::vector<PrimExpr> loop_guards(const StageNode& s, const Bounds& b,
                                  const std::unordered_map<const IterVarNode*, PrimExpr>& values) {
  arith::Analyzer ana;
  for (const auto& [st, iv] : enclosing_loops(s)) ana.bind(iv->var, loop_range(b, iv));
  std::vector<PrimExpr> guards;
  auto require = [&](const PrimExpr& cond) {
    if (ana.can_prove(cond)) return;
    PrimExpr g = ana.simplify(cond);
    if (std::none_of(guards.begin(), guards.end(),
                     [&](const PrimExpr& h) { return structural_equal(g, h); })) {
      guards.push_back(g);
    }
  };
  for (const auto& rel : s.relations) {
    if (const auto* sp = std::get_if<SplitRelation>(&rel)) {
      const Range& r = b.at(sp->parent.get());
      require(values.at(sp->parent.get()) < r.min + r.extent);
    }
  }
  // A region computed for a consumer's tile may reach past this stage's own domain. (A stage
  // realized over its whole domain needs no such guard: the split guards keep it inside.)
  for (const auto& iv : s.op.as<ComputeOpNode>()->axis) {
    const Range& r = b.at(iv.get());
    if (ana.can_prove_equal(r.min, iv->dom.min) && ana.can_prove_equal(r.extent, iv->dom.extent))
      continue;
    const PrimExpr& v = values.at(iv.get());
    require(v >= iv->dom.min);
    require(v < iv->dom.min + iv->dom.extent);
  }
  return guards;
}

Bounds infer_bound(const Schedule& sch, const StageBodies& bodies) {
  Bounds b;
  const auto& stages = sch.stages();
  for (auto it = stages.rbegin(); it != stages.rend(); ++it) {
    const StageNode& p = *it->node();
    const auto* c = p.op.as<ComputeOpNode>();
    if (!c || p.attach == AttachKind::kInline) continue;
    for (const auto& iv : c->reduce_axis) b[iv.get()] = iv->dom;
    for (const auto& iv : c->axis) b[iv.get()] = iv->dom;
    if (p.attach == AttachKind::kScope) {
      std::vector<arith::IntervalSet> region(c->axis.size());
      std::vector<bool> seen(c->axis.size(), false);
      auto attach_loops = attach_point_loops(p);
      for (const auto& cs : stages) {
        const StageNode& consumer = *cs.node();
        if (consumer.attach == AttachKind::kInline || !bodies.count(&consumer)) continue;
        auto loads = loads_of(bodies.at(&consumer), p.op);
        if (loads.empty()) continue;
        // Loops up to the producer's attach point are fixed; the rest are relaxed.
        auto loops = enclosing_loops(consumer);
        size_t fixed = 0;
        while (fixed < loops.size() && fixed < attach_loops.size() &&
               loops[fixed].second.same_as(attach_loops[fixed].second)) {
          ++fixed;
        }
        if (fixed < attach_loops.size()) {
          throw ScheduleError(
              "compute_at: attach point does not enclose a consumer",
              fmt::format("stage '{}' is computed at '{}' of '{}', which does not enclose "
                          "its consumer '{}'",
                          p.name, p.attach_ivar.name(), p.attach_stage.lock()->name,
                          consumer.name));
        }
        arith::VarIntervals dom;
        auto relax = [&](const Range& r) {
          arith::IntervalSet lo = arith::eval_interval(r.min, dom);
          arith::IntervalSet hi = arith::eval_interval(r.min + r.extent - 1, dom);
          return arith::IntervalSet{lo.min, hi.max};
        };
        for (size_t l = fixed; l < loops.size(); ++l) {
          const IterVar& iv = loops[l].second;
          dom[iv->var.get()] = relax(loop_range(b, iv));
        }
        // Not clipped to the consumer's domain: the producer covers whole tiles (constant
        // extents that vectorize) and guards its own domain instead (see loop_guards).
        arith::VarIntervals root_dom = root_intervals(consumer, b, dom);
        for (const auto* load : loads) {
          for (size_t d = 0; d < load->indices.size(); ++d) {
            // An index that reads a tensor (a gather) depends on data: no bound.
            arith::IntervalSet s = reads_tensor(load->indices[d])
                                       ? arith::IntervalSet::everything()
                                       : arith::eval_interval(load->indices[d], root_dom);
            region[d] = seen[d] ? arith::union_of(region[d], s) : s;
            seen[d] = true;
          }
        }
      }
      arith::Analyzer ana;
      for (const auto& [st, iv] : attach_loops) ana.bind(iv->var, loop_range(b, iv));
      for (size_t d = 0; d < c->axis.size(); ++d) {
        if (!seen[d] || !region[d].is_bounded()) continue;  // keep the full axis
        b[c->axis[d].get()] =
            Range(ana.simplify(region[d].min), ana.simplify(region[d].max - region[d].min + 1));
      }
    }
    pass_down(p, b);
  }
  return b;
}

Bounds own_loop_ranges(const StageNode& s) {
  Bounds b;
  for (const IterVar& iv : s.root_iter_vars) b[iv.get()] = iv->dom;
  pass_down(s, b);
  return b;
}

}  // namespace tessel::te
