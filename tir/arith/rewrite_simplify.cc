// Node-by-node rewrites: comparisons and min/max decided by bounds, boolean folding, select,
// casts, lets, vector ramp/broadcast algebra. Integer arithmetic goes to the linear form.
#include <cmath>
#include <utility>

#include "ir/functor.h"
#include "ir/structural_equal.h"
#include "tir/arith/simplifier.h"

namespace tessel::arith {
namespace {

template <class T>
const T* as_node(const PrimExpr& e) {
  return static_cast<const T*>(static_cast<const Node*>(e.get()));
}

std::pair<PrimExpr, PrimExpr> operands(const PrimExpr& e) {
  switch (e->kind()) {
#define TESSEL_OPERANDS(N) \
  case NodeKind::N:        \
    return {as_node<N##Node>(e)->a, as_node<N##Node>(e)->b};
    TESSEL_BINARY_KINDS(TESSEL_OPERANDS)
#undef TESSEL_OPERANDS
    TESSEL_NON_BINARY_KINDS(TESSEL_KIND_CASE)
    break;
  }
  TESSEL_UNREACHABLE(std::string("not a binary node: ") + node_kind_name(e->kind()));
}

PrimExpr make_binary(NodeKind k, PrimExpr a, PrimExpr b) {
  switch (k) {
#define TESSEL_MAKE(N) \
  case NodeKind::N:    \
    return N##Node::make(std::move(a), std::move(b));
    TESSEL_BINARY_KINDS(TESSEL_MAKE)
#undef TESSEL_MAKE
    TESSEL_NON_BINARY_KINDS(TESSEL_KIND_CASE)
    break;
  }
  TESSEL_UNREACHABLE(std::string("not a binary kind: ") + node_kind_name(k));
}

// Rebuilds e with new operands, or returns e itself when they did not change.
PrimExpr rebuild(const PrimExpr& e, const PrimExpr& a, const PrimExpr& b) {
  auto [oa, ob] = operands(e);
  return a.same_as(oa) && b.same_as(ob) ? e : make_binary(e->kind(), a, b);
}

PrimExpr bool_const(bool v, int lanes) { return make_const(DataType::boolean(lanes), v); }

// Folds an arithmetic op over two float constants, rounding to the result type.
PrimExpr fold_float(NodeKind k, DataType t, double x, double y) {
  auto rounded = [&](double r) {
    return FloatImmNode::make(t, t.bits() == 32 ? static_cast<float>(r) : r);
  };
  switch (k) {
    case NodeKind::Add:
      return rounded(x + y);
    case NodeKind::Sub:
      return rounded(x - y);
    case NodeKind::Mul:
      return rounded(x * y);
    case NodeKind::Div:
      return rounded(x / y);
    case NodeKind::Min:
      return rounded(std::fmin(x, y));
    case NodeKind::Max:
      return rounded(std::fmax(x, y));
    case NodeKind::FloorDiv:
    case NodeKind::FloorMod:
      return PrimExpr();
      TESSEL_COMPARE_KINDS(TESSEL_KIND_CASE)
      TESSEL_LOGIC_KINDS(TESSEL_KIND_CASE)
      TESSEL_NON_BINARY_KINDS(TESSEL_KIND_CASE)
      break;
  }
  TESSEL_UNREACHABLE(std::string("not an arithmetic kind: ") + node_kind_name(k));
}

template <class T>
std::optional<bool> fold_compare(NodeKind k, T x, T y) {
  switch (k) {
    case NodeKind::EQ:
      return x == y;
    case NodeKind::NE:
      return x != y;
    case NodeKind::LT:
      return x < y;
    case NodeKind::LE:
      return x <= y;
    case NodeKind::GT:
      return x > y;
    case NodeKind::GE:
      return x >= y;
      TESSEL_ARITH_KINDS(TESSEL_KIND_CASE)
      TESSEL_LOGIC_KINDS(TESSEL_KIND_CASE)
      TESSEL_NON_BINARY_KINDS(TESSEL_KIND_CASE)
      break;
  }
  TESSEL_UNREACHABLE(std::string("not a comparison: ") + node_kind_name(k));
}

// Decides `d k 0` from bounds of d: true when every value satisfies it, false when none does.
std::optional<bool> decide(NodeKind k, const ConstIntBound& d) {
  int64_t lo = d.min_value, hi = d.max_value;
  auto verdict = [](bool all, bool none) -> std::optional<bool> {
    if (all) return true;
    if (none) return false;
    return std::nullopt;
  };
  switch (k) {
    case NodeKind::LT:
      return verdict(hi < 0, lo >= 0);
    case NodeKind::LE:
      return verdict(hi <= 0, lo > 0);
    case NodeKind::GT:
      return verdict(lo > 0, hi <= 0);
    case NodeKind::GE:
      return verdict(lo >= 0, hi < 0);
    case NodeKind::EQ:
      return verdict(lo == 0 && hi == 0, lo > 0 || hi < 0);
    case NodeKind::NE:
      return verdict(lo > 0 || hi < 0, lo == 0 && hi == 0);
      TESSEL_ARITH_KINDS(TESSEL_KIND_CASE)
      TESSEL_LOGIC_KINDS(TESSEL_KIND_CASE)
      TESSEL_NON_BINARY_KINDS(TESSEL_KIND_CASE)
      break;
  }
  TESSEL_UNREACHABLE(std::string("not a comparison: ") + node_kind_name(k));
}

// `a k b` == `b mirror(k) a`.
NodeKind mirror(NodeKind k) {
  switch (k) {
    case NodeKind::LT:
      return NodeKind::GT;
    case NodeKind::GT:
      return NodeKind::LT;
    case NodeKind::LE:
      return NodeKind::GE;
    case NodeKind::GE:
      return NodeKind::LE;
    case NodeKind::EQ:
    case NodeKind::NE:
      return k;
      TESSEL_ARITH_KINDS(TESSEL_KIND_CASE)
      TESSEL_LOGIC_KINDS(TESSEL_KIND_CASE)
      TESSEL_NON_BINARY_KINDS(TESSEL_KIND_CASE)
      break;
  }
  TESSEL_UNREACHABLE(std::string("not a comparison: ") + node_kind_name(k));
}

// !(a k b) == (a negate(k) b), for integers.
NodeKind negate(NodeKind k) {
  switch (k) {
    case NodeKind::LT:
      return NodeKind::GE;
    case NodeKind::GE:
      return NodeKind::LT;
    case NodeKind::LE:
      return NodeKind::GT;
    case NodeKind::GT:
      return NodeKind::LE;
    case NodeKind::EQ:
      return NodeKind::NE;
    case NodeKind::NE:
      return NodeKind::EQ;
      TESSEL_ARITH_KINDS(TESSEL_KIND_CASE)
      TESSEL_LOGIC_KINDS(TESSEL_KIND_CASE)
      TESSEL_NON_BINARY_KINDS(TESSEL_KIND_CASE)
      break;
  }
  TESSEL_UNREACHABLE(std::string("not a comparison: ") + node_kind_name(k));
}

bool is_compare(NodeKind k) {
  return k == NodeKind::EQ || k == NodeKind::NE || k == NodeKind::LT || k == NodeKind::LE ||
         k == NodeKind::GT || k == NodeKind::GE;
}

PrimExpr make_ramp(const PrimExpr& base, const PrimExpr& stride, int lanes) {
  return is_zero(stride) ? BroadcastNode::make(base, lanes) : RampNode::make(base, stride, lanes);
}

}  // namespace

PrimExpr Analyzer::Impl::simplify(const PrimExpr& e) { return Simplifier(*this).visit(e); }

PrimExpr Simplifier::visit(const PrimExpr& e) {
  switch (e->kind()) {
    case NodeKind::IntImm:
    case NodeKind::FloatImm:
      return e;
    case NodeKind::Var:
      return visit_var(e);
    case NodeKind::Add:
    case NodeKind::Sub:
    case NodeKind::Mul:
    case NodeKind::FloorDiv:
    case NodeKind::FloorMod:
      if (is_index_type(e.dtype())) return to_sum(e).to_expr();
      return visit_float_or_vector_arith(e);
    case NodeKind::Div:
      return visit_float_or_vector_arith(e);
    case NodeKind::Min:
    case NodeKind::Max:
      return visit_min_max(e);
    case NodeKind::EQ:
    case NodeKind::NE:
    case NodeKind::LT:
    case NodeKind::LE:
    case NodeKind::GT:
    case NodeKind::GE:
      return visit_compare(e);
    case NodeKind::And:
    case NodeKind::Or:
      return visit_logic(e);
    case NodeKind::Not:
      return visit_not(e.as<NotNode>());
    case NodeKind::Select:
      return visit_conditional(e.as<SelectNode>(), e);
    case NodeKind::IfThenElseExpr:
      return visit_conditional(e.as<IfThenElseExprNode>(), e);
    case NodeKind::Cast:
      return visit_cast(e.as<CastNode>());
    case NodeKind::Ramp: {
      const auto* op = e.as<RampNode>();
      return make_ramp(visit(op->base), visit(op->stride), op->lanes);
    }
    case NodeKind::Broadcast: {
      const auto* op = e.as<BroadcastNode>();
      return BroadcastNode::make(visit(op->value), op->lanes);
    }
    case NodeKind::Let:
      return visit_let(e.as<LetNode>());
    case NodeKind::Call:
      return visit_call(e.as<CallNode>());
    case NodeKind::BufferLoad: {
      const auto* op = e.as<BufferLoadNode>();
      return BufferLoadNode::make(op->buffer, visit_all(op->indices));
    }
      TESSEL_NON_EXPR_KINDS(TESSEL_KIND_CASE)
      TESSEL_UNREACHABLE(std::string("not an expression: ") + node_kind_name(e->kind()));
  }
  fail_non_ir_node(e->kind(), "the simplifier");
}

std::vector<PrimExpr> Simplifier::visit_all(const std::vector<PrimExpr>& es) {
  std::vector<PrimExpr> out;
  out.reserve(es.size());
  for (const auto& e : es) out.push_back(visit(e));
  return out;
}

PrimExpr Simplifier::visit_var(const PrimExpr& e) {
  auto it = a_.vars.find(e.as<VarNode>());
  if (it == a_.vars.end()) return e;
  const VarInfo& info = it->second;
  if (info.value.defined() && (info.value.is<IntImmNode>() || info.value.is<FloatImmNode>())) {
    return info.value;
  }
  // A loop of extent one, or a var pinned by its bounds.
  if (info.bound.is_const() && e.dtype().is_int()) {
    return IntImmNode::make(e.dtype(), info.bound.min_value);
  }
  return e;
}

PrimExpr Simplifier::visit_float_or_vector_arith(const PrimExpr& e) {
  auto [oa, ob] = operands(e);
  PrimExpr a = visit(oa), b = visit(ob);
  NodeKind k = e->kind();
  const auto* fa = a.as<FloatImmNode>();
  const auto* fb = b.as<FloatImmNode>();
  if (fa && fb) {
    if (PrimExpr r = fold_float(k, e.dtype(), fa->value, fb->value)) return r;
  }
  // Integer Div only appears where both sides are non-negative, where it equals floordiv.
  const int64_t* ia = a.as<IntImmNode>() ? as_const_int(a) : nullptr;
  const int64_t* ib = b.as<IntImmNode>() ? as_const_int(b) : nullptr;
  if (k == NodeKind::Div && ia && ib && *ia >= 0 && *ib > 0) {
    return IntImmNode::make(e.dtype(), *ia / *ib);
  }
  if (e.dtype().is_vector()) {
    if (PrimExpr r = vector_rule(k, a, b)) return r;
  }
  return rebuild(e, a, b);
}

// Lane-wise ops on ramps and broadcasts stay ramps and broadcasts of simplified scalars.
PrimExpr Simplifier::vector_rule(NodeKind k, const PrimExpr& a, const PrimExpr& b) {
  int lanes = a.dtype().lanes();
  const auto* ba = a.as<BroadcastNode>();
  const auto* bb = b.as<BroadcastNode>();
  if (ba && bb) return BroadcastNode::make(visit(make_binary(k, ba->value, bb->value)), lanes);
  if (!a.dtype().is_int() && !a.dtype().is_uint()) return PrimExpr();
  const auto* ra = a.as<RampNode>();
  const auto* rb = b.as<RampNode>();
  auto ramp = [&](const PrimExpr& base, const PrimExpr& stride) {
    return make_ramp(visit(base), visit(stride), lanes);
  };
  switch (k) {
    case NodeKind::Add:
      if (ra && bb) return ramp(ra->base + bb->value, ra->stride);
      if (ba && rb) return ramp(ba->value + rb->base, rb->stride);
      if (ra && rb) return ramp(ra->base + rb->base, ra->stride + rb->stride);
      return PrimExpr();
    case NodeKind::Sub:
      if (ra && bb) return ramp(ra->base - bb->value, ra->stride);
      if (ba && rb) return ramp(ba->value - rb->base, -rb->stride);
      if (ra && rb) return ramp(ra->base - rb->base, ra->stride - rb->stride);
      return PrimExpr();
    case NodeKind::Mul:
      if (ra && bb) return ramp(ra->base * bb->value, ra->stride * bb->value);
      if (ba && rb) return ramp(ba->value * rb->base, ba->value * rb->stride);
      return PrimExpr();
    case NodeKind::FloorDiv:
    case NodeKind::FloorMod: {
      const int64_t* c = bb ? as_const_int(bb->value) : nullptr;
      const int64_t* s = ra ? as_const_int(ra->stride) : nullptr;
      if (!c || !s || *c <= 0 || *s < 0) return PrimExpr();
      bool is_div = k == NodeKind::FloorDiv;
      PrimExpr cst = bb->value;
      if (*s % *c == 0) {  // every lane moves by whole multiples of c
        if (is_div) return ramp(floordiv(ra->base, cst), IntImmNode::make(cst.dtype(), *s / *c));
        return BroadcastNode::make(visit(floormod(ra->base, cst)), lanes);
      }
      // No lane crosses a multiple of c: floormod(base, c) + s*(lanes-1) < c.
      PrimExpr rem = visit(floormod(ra->base, cst));
      if (sat_add(a_.bound(rem).max_value, sat_mul(*s, lanes - 1)) >= *c) return PrimExpr();
      if (is_div) return BroadcastNode::make(visit(floordiv(ra->base, cst)), lanes);
      return make_ramp(rem, ra->stride, lanes);
    }
    case NodeKind::Div:
    case NodeKind::Min:
    case NodeKind::Max:
      return PrimExpr();
      TESSEL_COMPARE_KINDS(TESSEL_KIND_CASE)
      TESSEL_LOGIC_KINDS(TESSEL_KIND_CASE)
      TESSEL_NON_BINARY_KINDS(TESSEL_KIND_CASE)
      break;
  }
  TESSEL_UNREACHABLE(std::string("not an arithmetic kind: ") + node_kind_name(k));
}

PrimExpr Simplifier::visit_min_max(const PrimExpr& e) {
  auto [oa, ob] = operands(e);
  PrimExpr a = visit(oa), b = visit(ob);
  NodeKind k = e->kind();
  bool is_min = k == NodeKind::Min;
  if (!is_index_type(e.dtype())) {
    if (a.is<FloatImmNode>() && b.is<FloatImmNode>()) {
      return fold_float(k, e.dtype(), a.as<FloatImmNode>()->value, b.as<FloatImmNode>()->value);
    }
    if (e.dtype().is_vector()) {
      if (PrimExpr r = vector_rule(k, a, b)) return r;
    }
    return rebuild(e, a, b);
  }
  LinearSum d = parse_linear(a);
  d.add(parse_linear(b), -1);
  ConstIntBound r = a_.proof_bound(d);
  if (r.max_value <= 0) return is_min ? a : b;
  if (r.min_value >= 0) return is_min ? b : a;
  if (a.is<IntImmNode>()) std::swap(a, b);  // constants go right
  // min(min(x, c1), c2) == min(x, min(c1, c2)), and likewise for max.
  if (b.is<IntImmNode>() && a->kind() == k) {
    auto [x, c1] = operands(a);
    if (c1.is<IntImmNode>()) return visit(make_binary(k, x, is_min ? min(c1, b) : max(c1, b)));
  }
  return rebuild(e, a, b);
}

PrimExpr Simplifier::visit_compare(const PrimExpr& e) {
  auto [oa, ob] = operands(e);
  NodeKind k = e->kind();
  if (is_index_type(oa.dtype())) return compare_index(k, oa, ob);
  PrimExpr a = visit(oa), b = visit(ob);
  int lanes = e.dtype().lanes();
  const int64_t* ia = a.as<IntImmNode>() ? as_const_int(a) : nullptr;
  const int64_t* ib = b.as<IntImmNode>() ? as_const_int(b) : nullptr;
  if (ia && ib) return bool_const(*fold_compare(k, *ia, *ib), lanes);
  if (a.is<FloatImmNode>() && b.is<FloatImmNode>()) {
    return bool_const(*fold_compare(k, a.as<FloatImmNode>()->value, b.as<FloatImmNode>()->value),
                      lanes);
  }
  if (a.dtype().is_vector()) {
    const auto* ba = a.as<BroadcastNode>();
    const auto* bb = b.as<BroadcastNode>();
    if (ba && bb) return BroadcastNode::make(visit(make_binary(k, ba->value, bb->value)), lanes);
    if (a.dtype().is_int()) {  // decided for every lane at once
      if (auto v = decide(k, a_.bound(SubNode::make(a, b)))) return bool_const(*v, lanes);
    }
  }
  return rebuild(e, a, b);
}

// Decides `a k b` from bounds of a - b, or writes it as P k N (both with positive coefficients,
// the constant on the right) so that `i < n` and `io*32 + ii < 1024` keep their natural shape.
PrimExpr Simplifier::compare_index(NodeKind k, const PrimExpr& a, const PrimExpr& b) {
  LinearSum d = to_sum(a);
  d.add(to_sum(b), -1);
  if (auto v = decide(k, a_.proof_bound(d))) return bool_const(*v, 1);
  LinearSum pos(d.dtype), neg(d.dtype, -d.base);
  for (const auto& t : d.terms) {
    (t.coef > 0 ? pos : neg).add_term(t.mono, t.coef > 0 ? t.coef : -t.coef);
  }
  if (!pos.is_const()) {
    if (neg.is_const()) {
      if (PrimExpr r = floordiv_bound(k, pos, neg.base)) return r;
    }
    return make_binary(k, pos.to_expr(), neg.to_expr());
  }
  neg.base = 0;  // -N + base k 0  ==  N mirror(k) base
  if (PrimExpr r = floordiv_bound(mirror(k), neg, d.base)) return r;
  return make_binary(mirror(k), neg.to_expr(), IntImmNode::make(d.dtype, d.base));
}

// floordiv(x, c) k n with a constant c > 0 as a bound on x: floordiv(x, c) < n is x < n*c, <= n is
// x < (n+1)*c, >= n is x >= n*c, > n is x >= (n+1)*c. So the guard of a split over fused axes
// (a 1x1 conv's rows and columns as one run of positions) is linear in the loop vars, which loop
// partitioning needs to lift it off the whole tiles. Undefined where the rule does not apply.
PrimExpr Simplifier::floordiv_bound(NodeKind k, const LinearSum& lhs, int64_t n) {
  if (!lhs.is_monomial() || lhs.terms[0].coef != 1) return PrimExpr();
  const auto* div = lhs.terms[0].mono.as<FloorDivNode>();
  const int64_t* c = div ? as_const_int(div->b) : nullptr;
  if (!c || *c <= 0) return PrimExpr();
  bool below = k == NodeKind::LT || k == NodeKind::LE;
  if (!below && k != NodeKind::GT && k != NodeKind::GE) return PrimExpr();
  int64_t bound = sat_mul(k == NodeKind::LE || k == NodeKind::GT ? sat_add(n, 1) : n, *c);
  ConstIntBound range = type_bound(lhs.dtype);
  if (bound <= range.min_value || bound >= range.max_value) return PrimExpr();
  return compare_index(below ? NodeKind::LT : NodeKind::GE, div->a,
                       IntImmNode::make(lhs.dtype, bound));
}

PrimExpr Simplifier::visit_logic(const PrimExpr& e) {
  auto [oa, ob] = operands(e);
  PrimExpr a = visit(oa), b = visit(ob);
  bool is_and = e.is<AndNode>();
  // x && true == x, x && false == false; dually for ||.
  if (const int64_t* v = as_const_int(a)) return (*v != 0) == is_and ? b : a;
  if (const int64_t* v = as_const_int(b)) return (*v != 0) == is_and ? a : b;
  if (structural_equal(a, b)) return a;
  return rebuild(e, a, b);
}

PrimExpr Simplifier::visit_not(const NotNode* op) {
  PrimExpr a = visit(op->a);
  if (const int64_t* v = as_const_int(a)) return bool_const(*v == 0, a.dtype().lanes());
  if (const auto* inner = a.as<NotNode>()) return inner->a;
  if (is_compare(a->kind())) {
    auto [x, y] = operands(a);
    // Floats keep NaN semantics: only == and != invert safely.
    bool exact = x.dtype().is_integer() || a.is<EQNode>() || a.is<NENode>();
    if (exact) return make_binary(negate(a->kind()), x, y);
  }
  return NotNode::make(a);
}

// Safe for the lazy IfThenElseExpr too: equal values mean one is evaluated whatever the condition.
template <class T>
PrimExpr Simplifier::visit_conditional(const T* op, const PrimExpr& self) {
  PrimExpr c = visit(op->condition);
  if (const int64_t* v = as_const_int(c)) return visit(*v ? op->true_value : op->false_value);
  PrimExpr t = visit(op->true_value), f = visit(op->false_value);
  if (structural_equal(t, f)) return t;
  if (c.same_as(op->condition) && t.same_as(op->true_value) && f.same_as(op->false_value)) {
    return self;
  }
  return T::make(c, t, f);
}

PrimExpr Simplifier::visit_cast(const CastNode* op) {
  PrimExpr v = visit(op->value);
  DataType t = op->dtype;
  if (v.is<IntImmNode>() || v.is<FloatImmNode>()) return cast(t, v);
  if (v.dtype() == t) return v;
  if (const auto* b = v.as<BroadcastNode>()) {
    return BroadcastNode::make(visit(CastNode::make(t.element_of(), b->value)), b->lanes);
  }
  return CastNode::make(t, v);
}

PrimExpr Simplifier::visit_let(const LetNode* op) {
  PrimExpr value = visit(op->value);
  // Constants and vars are free to repeat, so they replace the binding.
  if (value.is<IntImmNode>() || value.is<FloatImmNode>() || value.is<VarNode>()) {
    return visit(substitute(op->body, {{op->var, value}}));
  }
  auto saved = a_.replace(op->var, a_.info_for_value(op->var, value));
  PrimExpr body = visit(op->body);
  a_.replace(op->var, std::move(saved));
  return LetNode::make(op->var, value, body);
}

PrimExpr Simplifier::visit_call(const CallNode* op) {
  std::vector<PrimExpr> args = visit_all(op->args);
  // likely(c) only hints the branch; once c is decided the hint has nothing left to say.
  if (op->op == Intrinsic::likely && as_const_int(args[0])) return args[0];
  return CallNode::make(op->dtype, op->op, std::move(args));
}

}  // namespace tessel::arith
