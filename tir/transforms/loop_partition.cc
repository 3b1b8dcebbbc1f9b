#include "tir/transforms/loop_partition.h"

#include <optional>
#include <unordered_set>

#include "ir/functor.h"
#include "tir/arith/analyzer.h"
#include "tir/arith/int_set.h"
#include "tir/transforms/fresh_vars.h"

namespace tessel::tir {
namespace {

void split_conjuncts(const PrimExpr& e, std::vector<PrimExpr>* out) {
  if (const auto* a = e.as<AndNode>()) {
    split_conjuncts(a->a, out);
    split_conjuncts(a->b, out);
  } else {
    out->push_back(e);
  }
}

// A guard conjunct that mentions the loop var, with the ranges of the loops between the
// partitioned loop and the guard.
struct GuardTerm {
  PrimExpr conjunct;
  arith::VarIntervals inner;
};

class GuardCollector : public IRVisitor {
 public:
  explicit GuardCollector(const Var& loop_var) : loop_var_(loop_var) {}
  std::vector<GuardTerm> terms;

 protected:
  void visit_For(const ForNode* op, const Stmt& self) override {
    inner_[op->loop_var.get()] = arith::IntervalSet::from_range(Range(op->min, op->extent));
    IRVisitor::visit_For(op, self);
    inner_.erase(op->loop_var.get());
  }
  void visit_IfThenElse(const IfThenElseNode* op, const Stmt& self) override {
    if (const PrimExpr* cond = likely_condition(op->condition)) {
      std::vector<PrimExpr> conjuncts;
      split_conjuncts(*cond, &conjuncts);
      for (const auto& c : conjuncts) {
        // A let var bound inside the loop may hide a dependence on it: such terms are skipped.
        if (uses_var(c, {loop_var_.get()}) && !uses_var(c, lets_)) terms.push_back({c, inner_});
      }
    }
    IRVisitor::visit_IfThenElse(op, self);
  }
  void visit_LetStmt(const LetStmtNode* op, const Stmt& self) override {
    lets_.push_back(op->var.get());
    IRVisitor::visit_LetStmt(op, self);
  }

 private:
  Var loop_var_;
  arith::VarIntervals inner_;
  std::vector<const VarNode*> lets_;
};

// The part of the loop's range where a conjunct holds for every inner iteration: a prefix
// [.., bound) or a suffix [bound, ..).
struct HoldsRange {
  PrimExpr bound;
  bool prefix;
};

// Writes the conjunct as `d < 0`.
PrimExpr as_negative_difference(const PrimExpr& c) {
  if (const auto* op = c.as<LTNode>()) return op->a - op->b;
  if (const auto* op = c.as<LENode>()) return op->a - op->b - 1;
  if (const auto* op = c.as<GTNode>()) return op->b - op->a;
  if (const auto* op = c.as<GENode>()) return op->b - op->a - 1;
  return PrimExpr();
}

// d = d0 + k * v with k a nonzero constant and max(d0) over the inner loops = M: d < 0 holds for
// all inner iterations exactly when k * v + M < 0, i.e. v < floordiv(-M - 1, k) + 1 for k > 0
// and v >= floordiv(M, -k) + 1 for k < 0.
std::optional<HoldsRange> holds_range(const Var& v, const GuardTerm& term, arith::Analyzer& ana) {
  PrimExpr d = as_negative_difference(term.conjunct);
  if (!d.defined() || !d.dtype().is_int()) return std::nullopt;
  PrimExpr one = make_const(v.dtype(), 1), zero = make_zero(v.dtype());
  PrimExpr slope = ana.simplify(substitute(d, {{v, v + one}}) - d);
  const int64_t* k = as_const_int(slope);
  if (!k || *k == 0) return std::nullopt;
  PrimExpr d0 = substitute(d, {{v, zero}});
  arith::IntervalSet range = arith::eval_interval(d0, term.inner);
  if (!range.max.defined() || uses_var(range.max, {v.get()})) return std::nullopt;
  PrimExpr m = range.max;
  PrimExpr kk = make_const(m.dtype(), static_cast<double>(*k));
  if (*k > 0) return HoldsRange{ana.simplify(floordiv(-m - 1, kk) + 1), true};
  return HoldsRange{ana.simplify(floordiv(m, -kk) + 1), false};
}

// e = floordiv(a, c) + k with a constant c > 0, as (a + k*c, c).
std::optional<std::pair<PrimExpr, int64_t>> as_floordiv(const PrimExpr& e) {
  PrimExpr base = e;
  int64_t k = 0;
  if (const auto* add = e.as<AddNode>(); add && as_const_int(add->b)) {
    base = add->a;
    k = *as_const_int(add->b);
  } else if (const auto* sub = e.as<SubNode>(); sub && as_const_int(sub->b)) {
    base = sub->a;
    k = -*as_const_int(sub->b);
  }
  const auto* div = base.as<FloorDivNode>();
  const int64_t* c = div ? as_const_int(div->b) : nullptr;
  if (!c || *c <= 0) return std::nullopt;
  return std::make_pair(div->a + make_const(div->a.dtype(), static_cast<double>(k * *c)), *c);
}

// a <= b, also through the monotonicity of floordiv (floordiv(n, 8) <= floordiv(n + 7, 8)),
// which the analyzer does not see.
bool prove_le(arith::Analyzer& ana, const PrimExpr& a, const PrimExpr& b) {
  if (ana.can_prove(a <= b)) return true;
  auto fa = as_floordiv(a), fb = as_floordiv(b);
  return fa && fb && fa->second == fb->second && ana.can_prove(fa->first <= fb->first);
}

// Drops the proven conjuncts from the likely guards.
class GuardRemover : public IRMutator {
 public:
  explicit GuardRemover(std::unordered_set<const ExprNode*> proven) : proven_(std::move(proven)) {}

 protected:
  Stmt mutate_IfThenElse(const IfThenElseNode* op, const Stmt& self) override {
    Stmt s = IRMutator::mutate_IfThenElse(op, self);
    const auto* branch = s.as<IfThenElseNode>();
    const PrimExpr* cond = likely_condition(branch->condition);
    if (!cond) return s;
    std::vector<PrimExpr> conjuncts;
    split_conjuncts(*cond, &conjuncts);
    PrimExpr rest;
    for (const auto& c : conjuncts) {
      if (proven_.count(c.get())) continue;
      rest = rest.defined() ? rest && c : c;
    }
    if (!rest.defined()) return branch->then_case;
    if (rest.same_as(*cond)) return s;
    return IfThenElseNode::make(likely(rest), branch->then_case, branch->else_case);
  }

 private:
  std::unordered_set<const ExprNode*> proven_;
};

// In the guarded head and tail, a vectorized loop that the guard depends on runs serially.
class GuardedVectorLoopsToSerial : public IRMutator {
 protected:
  Stmt mutate_For(const ForNode* op, const Stmt& self) override {
    Stmt s = IRMutator::mutate_For(op, self);
    if (op->kind != ForKind::kVectorized) return s;
    GuardCollector guards(op->loop_var);
    guards.visit_stmt(op->body);
    if (guards.terms.empty()) return s;
    const auto* loop = s.as<ForNode>();
    return ForNode::make(loop->loop_var, loop->min, loop->extent, ForKind::kSerial, loop->body);
  }
};

class LoopPartitioner : public IRMutator {
 public:
  // Sizes in parameter shapes are non-negative; knowing that decides most clamps.
  LoopPartitioner(const PrimFunc& f, int parallel_threads) : parallel_threads_(parallel_threads) {
    for (const auto& b : f->buffers) {
      for (const auto& dim : b->shape) {
        if (const auto* v = dim.as<VarNode>()) {
          enclosing_.emplace_back(Var(Ref<VarNode>(v)),
                                  Range(make_zero(v->dtype), max_value(v->dtype)));
        }
      }
    }
  }

 protected:
  Stmt mutate_For(const ForNode* op, const Stmt& self) override {
    if (op->kind != ForKind::kThreadBinding) {
      if (std::optional<Stmt> parts = partition(op)) return *parts;
    }
    return mutate_in_range(op->loop_var, op->min, op->extent,
                           [&] { return IRMutator::mutate_For(op, self); });
  }

 private:
  std::optional<Stmt> partition(const ForNode* op) {
    GuardCollector guards(op->loop_var);
    guards.visit_stmt(op->body);
    arith::Analyzer ana;
    for (const auto& [v, r] : enclosing_) ana.bind(v, r);

    PrimExpr begin = op->min, end = ana.simplify(op->min + op->extent);
    PrimExpr main_begin = begin, main_end = end;
    std::unordered_set<const ExprNode*> proven;
    for (const auto& term : guards.terms) {
      if (handled_.count(term.conjunct.get())) continue;
      std::optional<HoldsRange> r = holds_range(op->loop_var, term, ana);
      if (!r) continue;
      proven.insert(term.conjunct.get());
      if (r->prefix) {
        main_end = tighter(ana, main_end, r->bound, /*take_min=*/true);
      } else {
        main_begin = tighter(ana, main_begin, r->bound, /*take_min=*/false);
      }
    }
    if (proven.empty()) return std::nullopt;
    main_end = tighter(ana, main_end, main_begin, /*take_min=*/false);  // main extent >= 0
    if (ana.can_prove(main_end - main_begin <= 0)) return std::nullopt;
    if (op->kind == ForKind::kUnrolled && !(as_const_int(main_begin) && as_const_int(main_end))) {
      return std::nullopt;  // unrolling needs constant trip counts
    }

    PrimExpr main_extent = ana.simplify(main_end - main_begin);
    Stmt main_body = mutate_in_range(op->loop_var, main_begin, main_extent, [&] {
      return mutate_stmt(GuardRemover(proven).mutate_stmt(op->body));
    });
    if (dispatch_pays(op, ana, main_begin, main_end))
      return dispatched(op, ana, main_begin, main_end, main_body, proven);
    std::vector<Stmt> parts;
    parts.push_back(guarded_part(op, ana, begin, main_begin, proven));
    // A vectorized loop keeps vector code for its main part when that has a constant width.
    ForKind main_kind = op->kind;
    if (op->kind == ForKind::kVectorized) {
      const int64_t* lanes = as_const_int(main_extent);
      if (!lanes || *lanes < 2) main_kind = ForKind::kSerial;
    }
    parts.push_back(
        ForNode::make(op->loop_var, main_begin, main_extent, main_kind, main_body, op->thread_tag));
    parts.push_back(guarded_part(op, ana, main_end, end, proven));
    return SeqStmtNode::make(parts);
  }

  // min/max of two bounds, dropping the comparison when the analyzer decides it.
  static PrimExpr tighter(arith::Analyzer& ana, const PrimExpr& a, const PrimExpr& b,
                          bool take_min) {
    if (prove_le(ana, a, b)) return take_min ? a : b;
    if (prove_le(ana, b, a)) return take_min ? b : a;
    return ana.simplify(take_min ? min(a, b) : max(a, b));
  }

  // The loop over [from, to) with its guards kept; undefined when provably empty. Inner loops
  // are not split again on the conjuncts this loop was split on: there they only bloat the tail.
  Stmt guarded_part(const ForNode* op, arith::Analyzer& ana, const PrimExpr& from,
                    const PrimExpr& to, const std::unordered_set<const ExprNode*>& proven) {
    Stmt body = guarded_body(op, ana, from, to, proven);
    if (!body.defined()) return Stmt();
    // The guarded remainder of a vectorized loop is scalar code.
    ForKind kind = op->kind == ForKind::kVectorized ? ForKind::kSerial : op->kind;
    return copy_with_fresh_vars(
        ForNode::make(op->loop_var, from, ana.simplify(to - from), kind, body, op->thread_tag));
  }

  // The body of the loop's iterations [from, to), guards kept; undefined when provably empty.
  Stmt guarded_body(const ForNode* op, arith::Analyzer& ana, const PrimExpr& from,
                    const PrimExpr& to, const std::unordered_set<const ExprNode*>& proven) {
    PrimExpr extent = ana.simplify(to - from);
    if (ana.can_prove(extent <= 0)) return Stmt();
    std::unordered_set<const ExprNode*> saved = handled_;
    handled_.insert(proven.begin(), proven.end());
    Stmt body = mutate_in_range(op->loop_var, from, extent, [&] {
      return mutate_stmt(GuardedVectorLoopsToSerial().mutate_stmt(op->body));
    });
    handled_ = std::move(saved);
    return body;
  }

  // Whether a parallel loop's parts run faster as one loop (dispatched) than as a parallel main
  // part with the head and tail after it: the longest of the threads' equal chunks of all the
  // iterations against the main part's plus one iteration for the head's and the tail's each
  // (a partial one counted whole). Ten full tiles and a partial one on two threads stay apart (5
  // and a partial against 6); seven and one go together (4 against 5), as a padded map's first
  // and last rows with the rows between (28 against 27 + 2).
  bool dispatch_pays(const ForNode* op, arith::Analyzer& ana, const PrimExpr& main_begin,
                     const PrimExpr& main_end) const {
    if (op->kind != ForKind::kParallel || parallel_threads_ < 2) return false;
    PrimExpr head = ana.simplify(main_begin - op->min), main = ana.simplify(main_end - main_begin);
    const int64_t *h = as_const_int(head), *m = as_const_int(main), *all = as_const_int(op->extent);
    if (!h || !m || !all) return false;
    int64_t t = parallel_threads_, parts = (*h > 0) + (*all - *h - *m > 0);
    auto chunk = [&](int64_t n) { return (n + t - 1) / t; };
    return chunk(*all) < chunk(*m) + parts;
  }

  // A parallel loop stays one loop whose tasks branch to the guarded head, the main part or the
  // guarded tail: as loops of their own, the head and tail ran after the main part as launches
  // of one task each, serially (a matrix-vector product's last partial tile of columns took its
  // tenth of the work on one thread after the others').
  Stmt dispatched(const ForNode* op, arith::Analyzer& ana, const PrimExpr& main_begin,
                  const PrimExpr& main_end, const Stmt& main_body,
                  const std::unordered_set<const ExprNode*>& proven) {
    PrimExpr begin = op->min, end = ana.simplify(op->min + op->extent);
    const Var& v = op->loop_var;
    // A part of one iteration (a last partial tile) has the loop var's value in it, which
    // decides its guards.
    auto part = [&](const PrimExpr& from, const PrimExpr& to) {
      Stmt body = guarded_body(op, ana, from, to, proven);
      if (!body.defined()) return body;
      if (ana.can_prove(to - from == 1)) return copy_with_fresh_vars(body, {{v, from}});
      return copy_with_fresh_vars(body);
    };
    Stmt body = main_body;
    if (Stmt tail = part(main_end, end); tail.defined())
      body = IfThenElseNode::make(v < main_end, body, tail);
    if (Stmt head = part(begin, main_begin); head.defined())
      body = IfThenElseNode::make(v < main_begin, head, body);
    return ForNode::make(v, op->min, op->extent, op->kind, body, op->thread_tag);
  }

  template <class Fn>
  Stmt mutate_in_range(const Var& v, const PrimExpr& mn, const PrimExpr& extent, Fn fn) {
    enclosing_.emplace_back(v, Range(mn, extent));
    Stmt s = fn();
    enclosing_.pop_back();
    return s;
  }

  std::vector<std::pair<Var, Range>> enclosing_;
  std::unordered_set<const ExprNode*> handled_;
  int parallel_threads_;
};

}  // namespace

PrimFunc loop_partition(const PrimFunc& f, int parallel_threads) {
  Stmt body = LoopPartitioner(f, parallel_threads).mutate_stmt(f->body);
  return body.same_as(f->body) ? f : f.with_body(body);
}

}  // namespace tessel::tir
