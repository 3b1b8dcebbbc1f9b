#include "te/schedule_to_tir.h"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_set>

#include "ir/error.h"
#include "te/bound_inference.h"
#include "te/functor.h"
#include "te/printer.h"
#include "tir/arith/analyzer.h"
#include "tir/transforms/unroll_loops.h"

namespace tessel::te {
namespace {

// Where a tensor lives: its buffer and the origin of its region (non-zero for a stage computed
// inside a loop, which holds only the part its consumer needs).
struct Realization {
  Buffer buffer;
  std::vector<PrimExpr> offset;
};

class Lowerer {
 public:
  Lowerer(const Schedule& sch, const std::string& func_name)
      : sch_(sch),
        func_name_(func_name),
        bodies_(inline_bodies(sch)),
        bounds_(infer_bound(sch, bodies_)) {}

  PrimFunc run(const std::vector<Tensor>& args) {
    std::vector<Var> params;
    std::vector<Buffer> buffers;
    for (const auto& t : args) {
      StageNode* s = sch_->find(t.op());
      if (!s)
        throw Error(
            fmt::format("{}: argument '{}' is not part of the schedule", func_name_, t.name()));
      if (realized_.count(s))
        throw Error(fmt::format("{}: argument '{}' appears twice", func_name_, t.name()));
      Buffer buf = Buffer::make(s->name, t.dtype(), t.shape());
      realized_[s] = {buf, std::vector<PrimExpr>(t.ndim(), make_zero(DataType::i32()))};
      params.push_back(buf->data);
      buffers.push_back(buf);
    }
    check_arguments();
    for (const auto& st : sch_.stages()) {
      const StageNode* s = st.node().get();
      if (st->op.is<ComputeOpNode>() && st->attach != AttachKind::kInline && !realized_.count(s)) {
        realized_[s] = make_realization(*s);
        allocated_.insert(s);
      }
    }
    Stmt body;
    const auto& stages = sch_.stages();
    for (auto it = stages.rbegin(); it != stages.rend(); ++it) {
      const StageNode& s = *it->node();
      if (s.op.is<ComputeOpNode>() && s.attach == AttachKind::kRoot) {
        body = realize(s, SeqStmtNode::make({make_stage(s), body}));
      }
    }
    return PrimFunc::make(func_name_, params, buffers,
                          body.defined() ? body : EvaluateNode::make(0));
  }

 private:
  void check_arguments() {
    for (const auto& st : sch_.stages()) {
      if (st->is_output && !realized_.count(st.node().get())) {
        throw Error(fmt::format("{}: output '{}' must be one of the function's arguments",
                                func_name_, st->name));
      }
      if (st->op.is<PlaceholderOpNode>() && !realized_.count(st.node().get()) &&
          !sch_->consumers_of(st->op).empty()) {
        throw Error(
            fmt::format("{}: tensor '{}' is read by stage '{}' but is not one of the function's "
                        "arguments",
                        func_name_, st->name, sch_->consumers_of(st->op)[0]->name));
      }
    }
  }

  // A buffer for a stage that is not an argument: its region from bound inference, with a
  // constant size where the region's extent has a constant upper bound.
  Realization make_realization(const StageNode& s) {
    const auto* c = s.op.as<ComputeOpNode>();
    arith::Analyzer ana;
    for (const auto& [st, iv] : attach_point_loops(s)) ana.bind(iv->var, loop_range(bounds_, iv));
    std::vector<PrimExpr> shape, offset;
    for (const auto& iv : c->axis) {
      const Range& r = bounds_.at(iv.get());
      offset.push_back(r.min);
      arith::ConstIntBound cb = ana.const_int_bound(r.extent);
      shape.push_back(cb.max_value != arith::ConstIntBound::kPosInf
                          ? make_const(r.extent.dtype(), static_cast<double>(cb.max_value))
                          : ana.simplify(r.extent));
    }
    return {Buffer::make(s.name, c->body.dtype(), shape, s.scope), offset};
  }

  // Wraps `body` in the allocation of stage `s` unless it is an argument.
  Stmt realize(const StageNode& s, Stmt body) {
    if (!allocated_.count(&s)) return body;
    return AllocateNode::make(realized_.at(&s).buffer, std::move(body));
  }

  const Realization& realization(const Operation& op) {
    StageNode* s = sch_->find(op);
    TESSEL_ICHECK(s && realized_.count(s)) << "no buffer for " << op->name;
    return realized_.at(s);
  }

  // Replaces tensor reads by buffer loads relative to each buffer's region.
  PrimExpr to_buffer_loads(const PrimExpr& e) {
    struct Rewriter : TeMutator {
      Lowerer* self;
      PrimExpr mutate_ProducerLoad(const ProducerLoadNode* op, const PrimExpr& s) override {
        PrimExpr m = TeMutator::mutate_ProducerLoad(op, s);
        const auto* load = m.as<ProducerLoadNode>();
        const Realization& r = self->realization(load->op);
        std::vector<PrimExpr> idx;
        for (size_t d = 0; d < load->indices.size(); ++d)
          idx.push_back(load->indices[d] - r.offset[d]);
        return BufferLoadNode::make(r.buffer, idx);
      }
    } rw;
    rw.self = this;
    return rw.mutate_expr(e);
  }

  Stmt make_loop(const StageNode& s, const IterVar& iv, const Var& var, Stmt body) {
    Range r = loop_range(bounds_, iv);
    LoopAnnotation a;
    if (auto it = s.annotations.find(iv.get()); it != s.annotations.end()) a = it->second;
    body = tir::mark_auto_unroll(body, a.auto_unroll_max_step);
    return ForNode::make(var, r.min, r.extent, a.kind, std::move(body), a.thread_tag);
  }

  static Stmt guard(const std::vector<PrimExpr>& conds, Stmt body) {
    if (conds.empty()) return body;
    PrimExpr all = conds[0];
    for (size_t i = 1; i < conds.size(); ++i) all = all && conds[i];
    return IfThenElseNode::make(likely(all), std::move(body));
  }

  // Groups guards by the innermost of `loop_vars` they use (index + 1; 0 = none), so each guard
  // sits just inside that loop and never inside a deeper (e.g. vectorized) loop it does not use.
  static std::vector<std::vector<PrimExpr>> guards_by_level(const std::vector<PrimExpr>& guards,
                                                            const std::vector<Var>& loop_vars) {
    std::vector<std::vector<PrimExpr>> levels(loop_vars.size() + 1);
    for (const auto& g : guards) {
      size_t level = 0;
      for (size_t l = 0; l < loop_vars.size(); ++l) {
        if (uses_var(g, {loop_vars[l].get()})) level = l + 1;
      }
      levels[level].push_back(g);
    }
    return levels;
  }

  Stmt make_stage(const StageNode& s) {
    const auto* c = s.op.as<ComputeOpNode>();
    auto values = root_values(s, bounds_);
    std::vector<std::pair<Var, PrimExpr>> subst;
    for (const auto& rv : s.root_iter_vars) subst.emplace_back(rv->var, values.at(rv.get()));

    PrimExpr body = to_buffer_loads(substitute_body(bodies_.at(&s), subst));
    const Realization& out = realized_.at(&s);
    std::vector<PrimExpr> idx;
    for (size_t d = 0; d < c->axis.size(); ++d)
      idx.push_back(values.at(c->axis[d].get()) - out.offset[d]);

    std::vector<PrimExpr> guards = loop_guards(s, bounds_, values);
    std::vector<Var> leaf_vars;
    for (const auto& iv : s.leaf_iter_vars) leaf_vars.push_back(iv->var);
    auto levels = guards_by_level(guards, leaf_vars);

    const auto* red = body.as<ReduceNode>();
    if (!red)
      return make_nest(s, 0, s.leaf_iter_vars.size(), BufferStoreNode::make(out.buffer, body, idx),
                       Stmt(), levels);

    size_t first_reduce = s.leaf_iter_vars.size();
    for (size_t l = 0; l < s.leaf_iter_vars.size(); ++l) {
      if (s.leaf_iter_vars[l]->iter_type == IterVarType::kCommReduce) {
        first_reduce = l;
        break;
      }
    }
    PrimExpr update = red->combiner->combine(BufferLoadNode::make(out.buffer, idx), red->source);
    Stmt store = BufferStoreNode::make(out.buffer, update, idx);
    if (!is_one(red->condition)) store = IfThenElseNode::make(red->condition, store);
    std::vector<const VarNode*> reduce_vars;
    for (const auto& iv : s.all_iter_vars) {
      if (iv->iter_type == IterVarType::kCommReduce) reduce_vars.push_back(iv->var.get());
    }
    // Guards over data-parallel loops inside the first reduction loop also apply to the init;
    // those over outer loops already enclose it.
    std::vector<const VarNode*> inner_vars;
    for (size_t l = first_reduce; l < leaf_vars.size(); ++l)
      inner_vars.push_back(leaf_vars[l].get());
    std::vector<PrimExpr> spatial_guards;
    for (const auto& g : guards) {
      if (!uses_var(g, reduce_vars) && uses_var(g, inner_vars)) spatial_guards.push_back(g);
    }
    Stmt init = make_init(s, first_reduce, spatial_guards,
                          BufferStoreNode::make(out.buffer, red->combiner->identity, idx));
    return make_nest(s, 0, first_reduce, store, init, levels);
  }

  // The init statement: loops over the data-parallel leaves inside the first reduction loop,
  // with fresh loop vars.
  Stmt make_init(const StageNode& s, size_t first_reduce, const std::vector<PrimExpr>& guards,
                 Stmt store) {
    std::vector<std::pair<IterVar, Var>> loops;
    std::vector<std::pair<Var, PrimExpr>> rename;
    std::vector<Var> loop_vars;
    for (size_t l = first_reduce; l < s.leaf_iter_vars.size(); ++l) {
      const IterVar& iv = s.leaf_iter_vars[l];
      if (iv->iter_type == IterVarType::kCommReduce) continue;
      Var fresh = iv->var.copy_with_suffix(".init");
      loops.emplace_back(iv, fresh);
      rename.emplace_back(iv->var, fresh);
      loop_vars.push_back(fresh);
    }
    std::vector<PrimExpr> renamed;
    for (const auto& g : guards) renamed.push_back(substitute(g, rename));
    auto levels = guards_by_level(renamed, loop_vars);
    Stmt body = substitute(store, rename);
    for (size_t l = loops.size(); l > 0; --l) {
      body = guard(levels[l], body);
      body = make_loop(s, loops[l - 1].first, loops[l - 1].second, body);
    }
    return guard(levels[0], body);
  }

  Stmt make_nest(const StageNode& s, size_t level, size_t first_reduce, const Stmt& leaf_body,
                 const Stmt& init, const std::vector<std::vector<PrimExpr>>& guards) {
    if (level == s.leaf_iter_vars.size()) return leaf_body;
    const IterVar& iv = s.leaf_iter_vars[level];
    Stmt inner = make_nest(s, level + 1, first_reduce, leaf_body, init, guards);
    // Stages computed at this loop run before the rest of its body, in dependency order.
    std::vector<const StageNode*> attached;
    for (const auto& st : sch_.stages()) {
      if (st->attach == AttachKind::kScope && st->attach_stage.lock().get() == &s &&
          st->attach_ivar.same_as(iv)) {
        attached.push_back(st.node().get());
      }
    }
    for (auto it = attached.rbegin(); it != attached.rend(); ++it)
      inner = realize_attached(**it, inner);
    Stmt loop = make_loop(s, iv, iv->var, guard(guards[level + 1], inner));
    if (level == first_reduce && init.defined()) loop = SeqStmtNode::make({init, loop});
    return level == 0 ? guard(guards[0], loop) : loop;
  }

  Stmt realize_attached(const StageNode& s, const Stmt& rest) {
    return realize(s, SeqStmtNode::make({make_stage(s), rest}));
  }

  const Schedule& sch_;
  std::string func_name_;
  StageBodies bodies_;
  Bounds bounds_;
  std::unordered_map<const StageNode*, Realization> realized_;
  std::unordered_set<const StageNode*> allocated_;
};

// tir cannot walk te's nodes, so one left here is a lowering bug: report the node.
void check_no_te_nodes(const PrimFunc& f) {
  struct Finder : TeVisitor {
    std::string func;
    void visit_ProducerLoad(const ProducerLoadNode* op, const PrimExpr&) override {
      fail(fmt::format("a read of tensor '{}'", op->op->name));
    }
    void visit_Reduce(const ReduceNode*, const PrimExpr& self) override {
      fail(fmt::format("the reduction {}", body_to_string(self)));
    }
    [[noreturn]] void fail(const std::string& node) const {
      throw InternalError(
          fmt::format("schedule_to_tir left {} in '{}': te nodes must not reach tir", node, func));
    }
  } finder;
  finder.func = f->name;
  finder.visit_stmt(f->body);
}

}  // namespace

PrimFunc schedule_to_tir(const Schedule& sch, const std::vector<Tensor>& args,
                         const std::string& name) {
  PrimFunc f = Lowerer(sch, name).run(args);
  check_no_te_nodes(f);
  return f;
}

}  // namespace tessel::te
