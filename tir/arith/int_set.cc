// Symbolic interval arithmetic: each operator maps operand intervals to a sound result interval
// whose ends are expressions; vars outside `dom` stay points.
#include "tir/arith/int_set.h"

#include <vector>

#include "ir/functor.h"
#include "tir/arith/analyzer_impl.h"

namespace tessel::arith {
namespace {

using Ends = IntervalSet;

bool is_point(const Ends& s) { return s.min.defined() && s.min.same_as(s.max); }

// An end op: undefined (unbounded) in, unbounded out.
template <class F>
PrimExpr end_op(const PrimExpr& a, const PrimExpr& b, F f) {
  return a.defined() && b.defined() ? f(a, b) : PrimExpr();
}

PrimExpr add_end(const PrimExpr& a, const PrimExpr& b) {
  return end_op(a, b, [](PrimExpr x, PrimExpr y) { return x + y; });
}
PrimExpr sub_end(const PrimExpr& a, const PrimExpr& b) {
  return end_op(a, b, [](PrimExpr x, PrimExpr y) { return x - y; });
}

// min/max of ends where an undefined end is -inf (lower ends) or +inf (upper ends).
PrimExpr min_of_lower(const PrimExpr& a, const PrimExpr& b) {
  return end_op(a, b, [](PrimExpr x, PrimExpr y) { return min(x, y); });
}
PrimExpr max_of_upper(const PrimExpr& a, const PrimExpr& b) {
  return end_op(a, b, [](PrimExpr x, PrimExpr y) { return max(x, y); });
}
PrimExpr max_of_lower(const PrimExpr& a, const PrimExpr& b) {
  if (!a.defined()) return b;
  if (!b.defined()) return a;
  return max(a, b);
}
PrimExpr min_of_upper(const PrimExpr& a, const PrimExpr& b) {
  if (!a.defined()) return b;
  if (!b.defined()) return a;
  return min(a, b);
}

Ends hull(const Ends& a, const Ends& b) {
  return {min_of_lower(a.min, b.min), max_of_upper(a.max, b.max)};
}

class IntervalEvaluator {
 public:
  IntervalEvaluator(const VarIntervals& dom, Analyzer::Impl& a) : dom_(dom), a_(a) {
    for (const auto& [v, _] : dom) dom_vars_.push_back(v);
  }

  Ends eval(const PrimExpr& e) {
    switch (e->kind()) {
      case NodeKind::IntImm:
      case NodeKind::FloatImm:
        return Ends::point(e);
      case NodeKind::Var: {
        auto it = dom_.find(e.as<VarNode>());
        return it == dom_.end() ? Ends::point(e) : it->second;
      }
      case NodeKind::Add:
        return binary<AddNode>(
            e, [](Ends a, Ends b) { return Ends{add_end(a.min, b.min), add_end(a.max, b.max)}; });
      case NodeKind::Sub:
        return binary<SubNode>(
            e, [](Ends a, Ends b) { return Ends{sub_end(a.min, b.max), sub_end(a.max, b.min)}; });
      case NodeKind::Mul:
        return binary<MulNode>(e, [&](Ends a, Ends b) { return mul(a, b); });
      case NodeKind::FloorDiv:
        return binary<FloorDivNode>(e, [&](Ends a, Ends b) { return div(a, b); });
      case NodeKind::FloorMod:
        return binary<FloorModNode>(e, [&](Ends a, Ends b) { return mod(a, b); });
      case NodeKind::Min:
        return binary<MinNode>(e, [](Ends a, Ends b) {
          return Ends{min_of_lower(a.min, b.min), min_of_upper(a.max, b.max)};
        });
      case NodeKind::Max:
        return binary<MaxNode>(e, [](Ends a, Ends b) {
          return Ends{max_of_lower(a.min, b.min), max_of_upper(a.max, b.max)};
        });
      case NodeKind::Select:
        return conditional(e.as<SelectNode>());
      case NodeKind::IfThenElseExpr:
        return conditional(e.as<IfThenElseExprNode>());
      case NodeKind::Cast: {
        const auto* op = e.as<CastNode>();
        Ends v = eval(op->value);
        if (is_point(v)) return Ends::point(cast(e.dtype(), v.min));
        DataType from = op->value.dtype(), to = e.dtype();
        bool widening = from.is_integer() && to.is_integer() && to.bits() >= from.bits() &&
                        from.is_int() == to.is_int();
        auto widen = [&](const PrimExpr& x) { return x.defined() ? cast(to, x) : PrimExpr(); };
        return widening ? Ends{widen(v.min), widen(v.max)} : Ends::everything();
      }
      case NodeKind::Broadcast:
        return eval(e.as<BroadcastNode>()->value);
      case NodeKind::Let: {
        const auto* op = e.as<LetNode>();
        VarIntervals inner = dom_;
        inner[op->var.get()] = eval(op->value);
        Ends body = IntervalEvaluator(inner, a_).eval(op->body);
        if (is_point(body)) return Ends::point(LetNode::make(op->var, op->value, body.min));
        return body;
      }
      case NodeKind::Div:
        TESSEL_COMPARE_KINDS(TESSEL_KIND_CASE)
        TESSEL_LOGIC_KINDS(TESSEL_KIND_CASE)
      case NodeKind::Not:
      case NodeKind::Ramp:
      case NodeKind::Call:
      case NodeKind::BufferLoad:
        // Exact when nothing relaxed flows in.
        return uses_var(e, dom_vars_) ? Ends::everything() : Ends::point(e);
        TESSEL_NON_EXPR_KINDS(TESSEL_KIND_CASE)
        TESSEL_UNREACHABLE(std::string("not an expression: ") + node_kind_name(e->kind()));
    }
    fail_non_ir_node(e->kind(), "eval_interval");
  }

 private:
  // Select or IfThenElseExpr: a point keeps its kind, so a lazy one stays lazy.
  template <class T>
  Ends conditional(const T* op) {
    Ends t = eval(op->true_value), f = eval(op->false_value);
    if (is_point(t) && is_point(f) && !uses_var(op->condition, dom_vars_)) {
      return Ends::point(T::make(op->condition, t.min, f.min));
    }
    return hull(t, f);
  }

  template <class T, class F>
  Ends binary(const PrimExpr& e, F rule) {
    const auto* op = e.as<T>();
    Ends a = eval(op->a), b = eval(op->b);
    if (is_point(a) && is_point(b)) {
      if (a.min.same_as(op->a) && b.min.same_as(op->b)) return Ends::point(e);
      return Ends::point(T::make(a.min, b.min));
    }
    return rule(a, b);
  }

  // Sign of a point multiplier or divisor, from its constant bounds: +1, -1 or 0 (unknown).
  int sign_of_point(const Ends& s) {
    if (!is_point(s)) return 0;
    ConstIntBound b = a_.bound(s.min);
    return b.min_value > 0 ? 1 : b.max_value < 0 ? -1 : 0;
  }

  Ends mul(const Ends& a, const Ends& b) {
    if (is_point(b)) {
      ConstIntBound sb = a_.bound(b.min);
      auto by = [&](const PrimExpr& x) {
        return end_op(x, b.min, [](PrimExpr p, PrimExpr q) { return p * q; });
      };
      if (sb.min_value >= 0) return {by(a.min), by(a.max)};
      if (sb.max_value <= 0) return {by(a.max), by(a.min)};
      return Ends::everything();
    }
    if (is_point(a)) return mul(b, a);
    return Ends::everything();
  }

  Ends div(const Ends& a, const Ends& b) {
    int sign = sign_of_point(b);
    auto by = [&](const PrimExpr& x) {
      return end_op(x, b.min, [](PrimExpr p, PrimExpr q) { return floordiv(p, q); });
    };
    if (sign > 0) return {by(a.min), by(a.max)};
    if (sign < 0) return {by(a.max), by(a.min)};
    return Ends::everything();
  }

  Ends mod(const Ends& a, const Ends& b) {
    if (sign_of_point(b) <= 0) return Ends::everything();
    PrimExpr c = b.min;
    // Within one period the remainder moves with the operand.
    if (a.is_bounded() && a_.can_prove(floordiv(a.min, c) == floordiv(a.max, c))) {
      return {floormod(a.min, c), floormod(a.max, c)};
    }
    return {make_zero(c.dtype()), c - 1};
  }

  const VarIntervals& dom_;
  Analyzer::Impl& a_;
  std::vector<const VarNode*> dom_vars_;
};

IntervalSet simplified(const IntervalSet& s, Analyzer::Impl& a) {
  if (is_point(s)) return IntervalSet::point(a.simplify(s.min));
  return {s.min.defined() ? a.simplify(s.min) : PrimExpr(),
          s.max.defined() ? a.simplify(s.max) : PrimExpr()};
}

}  // namespace

IntervalSet IntervalSet::from_range(const Range& r) {
  Analyzer::Impl a;
  return simplified({r.min, r.min + r.extent - 1}, a);
}

IntervalSet eval_interval(const PrimExpr& e, const VarIntervals& dom, Analyzer::Impl& a) {
  return simplified(IntervalEvaluator(dom, a).eval(e), a);
}

IntervalSet eval_interval(const PrimExpr& e, const VarIntervals& dom) {
  Analyzer::Impl a;
  return eval_interval(e, dom, a);
}

IntervalSet union_of(const IntervalSet& a, const IntervalSet& b) {
  Analyzer::Impl impl;
  return simplified(hull(a, b), impl);
}

}  // namespace tessel::arith
