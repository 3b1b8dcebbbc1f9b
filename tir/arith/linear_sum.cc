#include "tir/arith/linear_sum.h"

#include <algorithm>
#include <cstdlib>

#include "ir/error.h"
#include "ir/structural_equal.h"

namespace tessel::arith {
namespace {

int cmp3(auto a, auto b) { return a < b ? -1 : (b < a ? 1 : 0); }

int compare_lists(const std::vector<PrimExpr>& a, const std::vector<PrimExpr>& b) {
  if (int c = cmp3(a.size(), b.size())) return c;
  for (size_t i = 0; i < a.size(); ++i) {
    if (int c = expr_compare(a[i], b[i])) return c;
  }
  return 0;
}

// Select and IfThenElseExpr: condition, true value, false value.
template <class T>
int compare_conditionals(const T* x, const T* y) {
  return compare_lists({x->condition, x->true_value, x->false_value},
                       {y->condition, y->true_value, y->false_value});
}

template <class T>
const T* as_node(const PrimExpr& e) {
  return static_cast<const T*>(static_cast<const Node*>(e.get()));
}

void flatten_factors(const PrimExpr& e, std::vector<PrimExpr>* out) {
  if (const auto* m = e.as<MulNode>()) {
    flatten_factors(m->a, out);
    flatten_factors(m->b, out);
  } else {
    out->push_back(e);
  }
}

int degree(const PrimExpr& mono) {
  int n = 1;
  for (const MulNode* m = mono.as<MulNode>(); m; m = m->a.as<MulNode>()) ++n;
  return n;
}

}  // namespace

int expr_compare(const PrimExpr& a, const PrimExpr& b) {
  if (a.same_as(b)) return 0;
  if (int c = cmp3(a->kind(), b->kind())) return c;
  DataType ta = a.dtype(), tb = b.dtype();
  if (ta != tb) {
    if (int c = cmp3(ta.code(), tb.code())) return c;
    if (int c = cmp3(ta.bits(), tb.bits())) return c;
    return cmp3(ta.lanes(), tb.lanes());
  }
  switch (a->kind()) {
    case NodeKind::IntImm:
      return cmp3(a.as<IntImmNode>()->value, b.as<IntImmNode>()->value);
    case NodeKind::FloatImm:
      return cmp3(a.as<FloatImmNode>()->value, b.as<FloatImmNode>()->value);
    case NodeKind::Var:
      return a.as<VarNode>()->name_hint.compare(b.as<VarNode>()->name_hint);
    case NodeKind::Cast:
      return expr_compare(a.as<CastNode>()->value, b.as<CastNode>()->value);
#define TESSEL_CMP_BINARY(N)                                       \
  case NodeKind::N: {                                              \
    const auto *x = as_node<N##Node>(a), *y = as_node<N##Node>(b); \
    if (int c = expr_compare(x->a, y->a)) return c;                \
    return expr_compare(x->b, y->b);                               \
  }
      TESSEL_BINARY_KINDS(TESSEL_CMP_BINARY)
#undef TESSEL_CMP_BINARY
    case NodeKind::Not:
      return expr_compare(a.as<NotNode>()->a, b.as<NotNode>()->a);
    case NodeKind::Select:
      return compare_conditionals(a.as<SelectNode>(), b.as<SelectNode>());
    case NodeKind::IfThenElseExpr:
      return compare_conditionals(a.as<IfThenElseExprNode>(), b.as<IfThenElseExprNode>());
    case NodeKind::Ramp: {
      const auto *x = a.as<RampNode>(), *y = b.as<RampNode>();
      return compare_lists({x->base, x->stride}, {y->base, y->stride});
    }
    case NodeKind::Broadcast:
      return expr_compare(a.as<BroadcastNode>()->value, b.as<BroadcastNode>()->value);
    case NodeKind::Call: {
      const auto *x = a.as<CallNode>(), *y = b.as<CallNode>();
      if (int c = cmp3(x->op, y->op)) return c;
      return compare_lists(x->args, y->args);
    }
    case NodeKind::BufferLoad: {
      const auto *x = a.as<BufferLoadNode>(), *y = b.as<BufferLoadNode>();
      if (int c = x->buffer->name.compare(y->buffer->name)) return c;
      return compare_lists(x->indices, y->indices);
    }
    case NodeKind::Let:  // lets are not ranked among themselves
      return 0;
      TESSEL_NON_EXPR_KINDS(TESSEL_KIND_CASE)
      TESSEL_UNREACHABLE(std::string("not an expression: ") + node_kind_name(a->kind()));
  }
  fail_non_ir_node(a->kind(), "expr_compare");
}

PrimExpr mono_mul(const PrimExpr& a, const PrimExpr& b) {
  std::vector<PrimExpr> factors;
  flatten_factors(a, &factors);
  flatten_factors(b, &factors);
  std::stable_sort(factors.begin(), factors.end(),
                   [](const PrimExpr& x, const PrimExpr& y) { return expr_compare(x, y) < 0; });
  PrimExpr out = factors[0];
  for (size_t i = 1; i < factors.size(); ++i) out = MulNode::make(out, factors[i]);
  return out;
}

void LinearSum::add_term(const PrimExpr& mono, int64_t coef) {
  if (coef == 0) return;
  for (auto it = terms.begin(); it != terms.end(); ++it) {
    if (structural_equal(it->mono, mono)) {
      it->coef += coef;
      if (it->coef == 0) terms.erase(it);
      return;
    }
  }
  terms.push_back({mono, coef});
}

void LinearSum::add(const LinearSum& other, int64_t scale) {
  for (const auto& t : other.terms) add_term(t.mono, t.coef * scale);
  base += other.base * scale;
}

void LinearSum::scale(int64_t c) {
  if (c == 0) terms.clear();
  for (auto& t : terms) t.coef *= c;
  base *= c;
}

LinearSum LinearSum::negated() const {
  LinearSum out = *this;
  out.scale(-1);
  return out;
}

PrimExpr LinearSum::to_expr() const {
  std::vector<const Term*> sorted;
  for (const auto& t : terms) sorted.push_back(&t);
  std::stable_sort(sorted.begin(), sorted.end(), [](const Term* x, const Term* y) {
    if (std::abs(x->coef) != std::abs(y->coef)) return std::abs(x->coef) > std::abs(y->coef);
    int dx = degree(x->mono), dy = degree(y->mono);
    if (dx != dy) return dx > dy;
    return expr_compare(x->mono, y->mono) < 0;
  });
  auto cst = [&](int64_t v) { return IntImmNode::make(dtype, v); };
  auto scaled = [&](const Term* t, int64_t c) {
    return c == 1 ? t->mono : MulNode::make(t->mono, cst(c));
  };
  PrimExpr out;
  for (const Term* t : sorted) {
    if (t->coef <= 0) continue;
    out = out.defined() ? AddNode::make(out, scaled(t, t->coef)) : scaled(t, t->coef);
  }
  // With no positive term, start from a positive constant (5 - i) or from the first negative
  // term as a product (i*-1).
  bool base_done = false;
  if (!out.defined() && base > 0) {
    out = cst(base);
    base_done = true;
  }
  for (const Term* t : sorted) {
    if (t->coef > 0) continue;
    out = out.defined() ? SubNode::make(out, scaled(t, -t->coef)) : scaled(t, t->coef);
  }
  if (!out.defined()) return cst(base);
  if (base_done || base == 0) return out;
  return base > 0 ? AddNode::make(out, cst(base)) : SubNode::make(out, cst(-base));
}

LinearSum parse_linear(const PrimExpr& e) {
  LinearSum out(e.dtype());
  if (const auto* imm = e.as<IntImmNode>()) {
    out.base = imm->value;
  } else if (const auto* add = e.as<AddNode>()) {
    out = parse_linear(add->a);
    out.add(parse_linear(add->b));
  } else if (const auto* sub = e.as<SubNode>()) {
    out = parse_linear(sub->a);
    out.add(parse_linear(sub->b), -1);
  } else if (const auto* mul = e.as<MulNode>(); mul && mul->b.is<IntImmNode>()) {
    out = parse_linear(mul->a);
    out.scale(mul->b.as<IntImmNode>()->value);
  } else if (mul && mul->a.is<IntImmNode>()) {
    out = parse_linear(mul->b);
    out.scale(mul->a.as<IntImmNode>()->value);
  } else {
    out.add_term(e, 1);
  }
  return out;
}

}  // namespace tessel::arith
