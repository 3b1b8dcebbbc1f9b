// Scalar integer arithmetic through the linear form: like terms collect, constants fold, and
// floordiv/floormod by positive constants split off what provably divides or provably stays
// below the divisor.
#include <algorithm>
#include <numeric>

#include "ir/error.h"
#include "ir/structural_equal.h"
#include "tir/arith/simplifier.h"

namespace tessel::arith {
namespace {

int64_t floordiv_i(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
int64_t floormod_i(int64_t a, int64_t b) { return a - floordiv_i(a, b) * b; }

bool is_finite(const ConstIntBound& b) {
  return b.min_value != ConstIntBound::kNegInf && b.max_value != ConstIntBound::kPosInf;
}

// The positive constant divisor of a floordiv/floormod atom, if it has one.
template <class T>
const T* by_positive_const(const PrimExpr& e) {
  const T* op = e.as<T>();
  const auto* c = op ? op->b.template as<IntImmNode>() : nullptr;
  return c && c->value > 0 ? op : nullptr;
}

int64_t const_value(const PrimExpr& e) { return e.as<IntImmNode>()->value; }

void flatten_product(const PrimExpr& e, std::vector<PrimExpr>* out) {
  if (const auto* mul = e.as<MulNode>()) {
    flatten_product(mul->a, out);
    flatten_product(mul->b, out);
  } else {
    out->push_back(e);
  }
}

LinearSum atom(DataType t, const PrimExpr& e) {
  LinearSum out(t);
  out.add_term(e, 1);
  return out;
}

}  // namespace

LinearSum Simplifier::to_sum(const PrimExpr& e) {
  DataType t = e.dtype();
  switch (e->kind()) {
    case NodeKind::IntImm:
      return LinearSum(t, e.as<IntImmNode>()->value);
    case NodeKind::Add:
    case NodeKind::Sub: {
      const auto* add = e.as<AddNode>();
      const auto* sub = e.as<SubNode>();
      LinearSum out = to_sum(add ? add->a : sub->a);
      out.add(to_sum(add ? add->b : sub->b), add ? 1 : -1);
      merge_div_mod(&out);
      return out;
    }
    case NodeKind::Mul:
      return product(e);
    case NodeKind::FloorDiv:
    case NodeKind::FloorMod: {
      bool is_div = e.is<FloorDivNode>();
      const auto* div = e.as<FloorDivNode>();
      const auto* mod = e.as<FloorModNode>();
      LinearSum a = to_sum(is_div ? div->a : mod->a);
      PrimExpr b = visit(is_div ? div->b : mod->b);
      const int64_t* c = b.as<IntImmNode>() ? &b.as<IntImmNode>()->value : nullptr;
      if (c && *c > 0) return is_div ? floordiv_sum(a, *c) : floormod_sum(a, *c);
      // floordiv(x, c) == floordiv(-x, -c) and floormod(x, c) == -floormod(-x, -c).
      if (c && *c < 0 && is_div) return floordiv_sum(a.negated(), -*c);
      if (c && *c < 0) return floormod_sum(a.negated(), -*c).negated();
      if (a.is_const() && a.base == 0) return a;
      PrimExpr lhs = a.to_expr();
      return atom(t, is_div ? FloorDivNode::make(lhs, b) : FloorModNode::make(lhs, b));
    }
    case NodeKind::FloatImm:
    case NodeKind::Var:
    case NodeKind::Cast:
    case NodeKind::Div:
    case NodeKind::Min:
    case NodeKind::Max:
      TESSEL_COMPARE_KINDS(TESSEL_KIND_CASE)
      TESSEL_LOGIC_KINDS(TESSEL_KIND_CASE)
      TESSEL_POST_BINARY_KINDS(TESSEL_KIND_CASE)
      // Simplified node by node, then read back as a linear form.
      return parse_linear(visit(e));
      TESSEL_NON_EXPR_KINDS(TESSEL_KIND_CASE)
      TESSEL_UNREACHABLE(std::string("not an expression: ") + node_kind_name(e->kind()));
  }
  fail_non_ir_node(e->kind(), "the simplifier");
}

// The factors of a whole product tree are gathered first so that the result does not depend on
// how the tree was parenthesized: monomials multiply together and distribute over at most one
// sum (linear growth); a product of two or more sums stays one atom, so nothing blows up.
LinearSum Simplifier::product(const PrimExpr& e) {
  std::vector<PrimExpr> factors;
  flatten_product(e, &factors);
  int64_t coef = 1;
  PrimExpr mono;  // undefined: no non-constant monomial factor yet
  std::vector<LinearSum> sums;
  for (const auto& f : factors) {
    LinearSum s = to_sum(f);
    if (s.is_const()) {
      coef *= s.base;
    } else if (s.is_monomial()) {
      coef *= s.terms[0].coef;
      mono = mono.defined() ? mono_mul(mono, s.terms[0].mono) : s.terms[0].mono;
    } else {
      sums.push_back(std::move(s));
    }
  }
  LinearSum out(e.dtype());
  if (sums.size() >= 2) {
    for (const auto& s : sums) mono = mono.defined() ? mono_mul(mono, s.to_expr()) : s.to_expr();
    out.add_term(mono, coef);
  } else if (sums.size() == 1) {
    for (const auto& t : sums[0].terms) {
      out.add_term(mono.defined() ? mono_mul(mono, t.mono) : t.mono, coef * t.coef);
    }
    if (mono.defined()) {
      out.add_term(mono, coef * sums[0].base);
    } else {
      out.base = coef * sums[0].base;
    }
  } else if (mono.defined()) {
    out.add_term(mono, coef);
  } else {
    out.base = coef;
  }
  return out;
}

// floordiv(c*Q + R, c) == Q + floordiv(R, c) for any integers, so whole multiples of c leave.
// The constant keeps its sign (floordiv(x - 1, 4) stays, rather than floordiv(x + 3, 4) - 1).
LinearSum Simplifier::floordiv_sum(const LinearSum& s, int64_t c) {
  LinearSum quot(s.dtype, s.base / c), rest(s.dtype, s.base % c);
  for (const auto& t : s.terms) {
    if (t.coef % c == 0) {
      quot.add_term(t.mono, t.coef / c);
    } else {
      rest.add_term(t.mono, t.coef);
    }
  }
  quot.add(floordiv_rest(rest, c));
  return quot;
}

LinearSum Simplifier::floormod_sum(const LinearSum& s, int64_t c) {
  LinearSum rest(s.dtype, s.base % c);
  for (const auto& t : s.terms) {
    if (t.coef % c != 0) rest.add_term(t.mono, t.coef);
  }
  return floormod_rest(rest, c);
}

LinearSum Simplifier::floordiv_rest(const LinearSum& r, int64_t c) {
  if (r.is_const()) return LinearSum(r.dtype, floordiv_i(r.base, c));
  ConstIntBound b = a_.bound(r);
  if (is_finite(b) && floordiv_i(b.min_value, c) == floordiv_i(b.max_value, c)) {
    return LinearSum(r.dtype, floordiv_i(b.min_value, c));
  }
  // floordiv(floordiv(x, a) + k, c) == floordiv(x + k*a, a*c) for a, c > 0.
  if (r.terms.size() == 1 && r.terms[0].coef == 1) {
    if (const auto* inner = by_positive_const<FloorDivNode>(r.terms[0].mono)) {
      int64_t a = const_value(inner->b);
      LinearSum x = parse_linear(inner->a);
      x.base += r.base * a;
      return floordiv_sum(x, a * c);
    }
  }
  if (auto split = split_at_factor(r, c)) return floordiv_sum(split->high, c / split->factor);
  return atom(r.dtype, FloorDivNode::make(r.to_expr(), IntImmNode::make(r.dtype, c)));
}

LinearSum Simplifier::floormod_rest(const LinearSum& r, int64_t c) {
  if (r.is_const()) return LinearSum(r.dtype, floormod_i(r.base, c));
  ConstIntBound b = a_.bound(r);
  if (is_finite(b) && floordiv_i(b.min_value, c) == floordiv_i(b.max_value, c)) {
    LinearSum out = r;
    out.base -= floordiv_i(b.min_value, c) * c;
    return out;
  }
  // floormod(floormod(x, a), c) == floormod(x, c) when c divides a.
  if (r.is_monomial() && r.terms[0].coef == 1) {
    if (const auto* inner = by_positive_const<FloorModNode>(r.terms[0].mono)) {
      if (const_value(inner->b) % c == 0) return floormod_sum(parse_linear(inner->a), c);
    }
  }
  if (auto split = split_at_factor(r, c)) {
    LinearSum out = floormod_sum(split->high, c / split->factor);
    out.scale(split->factor);
    out.add(split->low);
    return out;
  }
  return atom(r.dtype, FloorModNode::make(r.to_expr(), IntImmNode::make(r.dtype, c)));
}

// Writes r as g*high + low with g dividing c (1 < g < c) and low in [0, g): low can never carry
// into the next multiple of g, so floordiv(r, c) == floordiv(high, c/g) and
// floormod(r, c) == floormod(high, c/g)*g + low. This is what undoes fuse-then-split.
std::optional<Simplifier::FactorSplit> Simplifier::split_at_factor(const LinearSum& r, int64_t c) {
  std::vector<int64_t> factors;
  for (const auto& t : r.terms) {
    int64_t g = std::gcd(t.coef, c);
    if (g > 1 && std::find(factors.begin(), factors.end(), g) == factors.end()) {
      factors.push_back(g);
    }
  }
  std::sort(factors.rbegin(), factors.rend());
  for (int64_t g : factors) {
    FactorSplit split{g, LinearSum(r.dtype), LinearSum(r.dtype, r.base)};
    for (const auto& t : r.terms) {
      if (t.coef % g == 0) {
        split.high.add_term(t.mono, t.coef / g);
      } else {
        split.low.add_term(t.mono, t.coef);
      }
    }
    ConstIntBound b = a_.bound(split.low);
    if (!is_finite(b)) continue;
    int64_t k = floordiv_i(b.min_value, g);
    if (k != floordiv_i(b.max_value, g)) continue;
    // Move whole multiples of g from low to high so that low lands in [0, g).
    split.low.base -= k * g;
    split.high.base += k;
    return split;
  }
  return std::nullopt;
}

// floordiv(x, c)*(k*c) + floormod(x, c)*k == x*k.
void Simplifier::merge_div_mod(LinearSum* s) {
  for (size_t i = 0; i < s->terms.size(); ++i) {
    const auto* mod = by_positive_const<FloorModNode>(s->terms[i].mono);
    if (!mod) continue;
    int64_t c = const_value(mod->b), k = s->terms[i].coef;
    for (size_t j = 0; j < s->terms.size(); ++j) {
      const auto* div = by_positive_const<FloorDivNode>(s->terms[j].mono);
      if (!div || const_value(div->b) != c || s->terms[j].coef != k * c ||
          !structural_equal(div->a, mod->a)) {
        continue;
      }
      PrimExpr x = mod->a;
      s->terms.erase(s->terms.begin() + std::max(i, j));
      s->terms.erase(s->terms.begin() + std::min(i, j));
      s->add(parse_linear(x), k);
      merge_div_mod(s);
      return;
    }
  }
}

}  // namespace tessel::arith
