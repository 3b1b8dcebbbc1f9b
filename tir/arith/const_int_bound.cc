// Constant interval bounds of integer expressions, by interval arithmetic with saturation.
#include <algorithm>
#include <initializer_list>

#include "ir/functor.h"
#include "tir/arith/analyzer_impl.h"

namespace tessel::arith {

using B = ConstIntBound;

int64_t sat_add(int64_t a, int64_t b) {
  if (a == B::kNegInf || a == B::kPosInf) return a;
  if (b == B::kNegInf || b == B::kPosInf) return b;
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return a > 0 ? B::kPosInf : B::kNegInf;
  return r;
}

int64_t sat_mul(int64_t a, int64_t b) {
  if (a == 0 || b == 0) return 0;
  bool neg = (a < 0) != (b < 0);
  bool inf = a == B::kNegInf || a == B::kPosInf || b == B::kNegInf || b == B::kPosInf;
  int64_t r;
  if (inf || __builtin_mul_overflow(a, b, &r)) return neg ? B::kNegInf : B::kPosInf;
  return r;
}

ConstIntBound type_bound(DataType t) {
  if (t.is_bool()) return {0, 1};
  if (t.is_int() && t.bits() < 64) {
    return {-(int64_t{1} << (t.bits() - 1)), (int64_t{1} << (t.bits() - 1)) - 1};
  }
  if (t.is_uint()) return {0, t.bits() < 63 ? (int64_t{1} << t.bits()) - 1 : B::kPosInf};
  return {};
}

namespace {

bool is_inf(int64_t v) { return v == B::kNegInf || v == B::kPosInf; }

int64_t floordiv_i(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

// floordiv of bound ends for b > 0 (b may be +inf).
int64_t div_end(int64_t a, int64_t b) {
  if (is_inf(a)) return a;
  if (b == B::kPosInf) return a >= 0 ? 0 : -1;
  return floordiv_i(a, b);
}

B hull(std::initializer_list<int64_t> vals) { return {std::min(vals), std::max(vals)}; }

B negate(B b) {
  auto neg = [](int64_t v) {
    return v == B::kNegInf ? B::kPosInf : v == B::kPosInf ? B::kNegInf : -v;
  };
  return {neg(b.max_value), neg(b.min_value)};
}

B add(B a, B b) { return {sat_add(a.min_value, b.min_value), sat_add(a.max_value, b.max_value)}; }

B mul(B a, B b) {
  return hull({sat_mul(a.min_value, b.min_value), sat_mul(a.min_value, b.max_value),
               sat_mul(a.max_value, b.min_value), sat_mul(a.max_value, b.max_value)});
}

B floordiv_bound(B a, B b) {
  if (b.min_value > 0) {
    return hull({div_end(a.min_value, b.min_value), div_end(a.min_value, b.max_value),
                 div_end(a.max_value, b.min_value), div_end(a.max_value, b.max_value)});
  }
  if (b.max_value < 0) return floordiv_bound(negate(a), negate(b));  // a/b == (-a)/(-b)
  return {};
}

B floormod_bound(B a, B b) {
  if (b.min_value > 0) {
    if (a.min_value >= 0 && a.max_value < b.min_value) return a;
    if (b.is_const() && !is_inf(a.min_value) && !is_inf(a.max_value)) {
      int64_t c = b.min_value;
      int64_t q = floordiv_i(a.min_value, c);
      if (q == floordiv_i(a.max_value, c)) return {a.min_value - q * c, a.max_value - q * c};
    }
    return {0, sat_add(b.max_value, -1)};
  }
  if (b.max_value < 0) return {sat_add(b.min_value, 1), 0};
  return {};
}

B intersect_bound(B a, B b) {
  return {std::max(a.min_value, b.min_value), std::min(a.max_value, b.max_value)};
}

class BoundEvaluator : public ExprFunctor<B> {
 public:
  explicit BoundEvaluator(Analyzer::Impl& a) : a_(a) {}

  B eval(const PrimExpr& e) { return intersect_bound(visit_expr(e), type_bound(e.dtype())); }

 protected:
  B visit_default(const PrimExpr& e) override { return type_bound(e.dtype()); }
  B visit_IntImm(const IntImmNode* op, const PrimExpr&) override { return {op->value, op->value}; }
  B visit_Var(const VarNode* op, const PrimExpr& e) override {
    auto it = a_.vars.find(op);
    return it == a_.vars.end() ? type_bound(e.dtype()) : it->second.bound;
  }
  B visit_Cast(const CastNode* op, const PrimExpr& e) override {
    B target = type_bound(e.dtype());
    if (!op->value.dtype().is_integer()) return target;
    B v = eval(op->value);
    // A value that fits passes through; otherwise it wraps, so only the type range is known.
    if (v.min_value >= target.min_value && v.max_value <= target.max_value) return v;
    return target;
  }
  B visit_Add(const AddNode* op, const PrimExpr&) override { return add(eval(op->a), eval(op->b)); }
  B visit_Sub(const SubNode* op, const PrimExpr&) override {
    return add(eval(op->a), negate(eval(op->b)));
  }
  B visit_Mul(const MulNode* op, const PrimExpr&) override { return mul(eval(op->a), eval(op->b)); }
  B visit_FloorDiv(const FloorDivNode* op, const PrimExpr&) override {
    return floordiv_bound(eval(op->a), eval(op->b));
  }
  B visit_Div(const DivNode* op, const PrimExpr& e) override {
    // Integer Div is only emitted where both sides are non-negative, where it equals floordiv.
    if (!e.dtype().is_integer()) return {};
    B a = eval(op->a), b = eval(op->b);
    if (a.min_value >= 0 && b.min_value > 0) return floordiv_bound(a, b);
    return type_bound(e.dtype());
  }
  B visit_FloorMod(const FloorModNode* op, const PrimExpr&) override {
    return floormod_bound(eval(op->a), eval(op->b));
  }
  B visit_Min(const MinNode* op, const PrimExpr&) override {
    B a = eval(op->a), b = eval(op->b);
    return {std::min(a.min_value, b.min_value), std::min(a.max_value, b.max_value)};
  }
  B visit_Max(const MaxNode* op, const PrimExpr&) override {
    B a = eval(op->a), b = eval(op->b);
    return {std::max(a.min_value, b.min_value), std::max(a.max_value, b.max_value)};
  }
  B visit_Select(const SelectNode* op, const PrimExpr&) override { return either(op); }
  B visit_IfThenElseExpr(const IfThenElseExprNode* op, const PrimExpr&) override {
    return either(op);
  }
  B visit_Ramp(const RampNode* op, const PrimExpr&) override {
    B last = mul(eval(op->stride), {op->lanes - 1, op->lanes - 1});
    B span{std::min<int64_t>(0, last.min_value), std::max<int64_t>(0, last.max_value)};
    return add(eval(op->base), span);
  }
  B visit_Broadcast(const BroadcastNode* op, const PrimExpr&) override { return eval(op->value); }
  B visit_Let(const LetNode* op, const PrimExpr&) override {
    auto saved = a_.replace(op->var, a_.info_for_value(op->var, op->value));
    B out = eval(op->body);
    a_.replace(op->var, std::move(saved));
    return out;
  }

 private:
  // The hull of the two values of a Select or IfThenElseExpr.
  template <class T>
  B either(const T* op) {
    B t = eval(op->true_value), f = eval(op->false_value);
    return {std::min(t.min_value, f.min_value), std::max(t.max_value, f.max_value)};
  }

  Analyzer::Impl& a_;
};

}  // namespace

ConstIntBound Analyzer::Impl::bound(const PrimExpr& e) { return BoundEvaluator(*this).eval(e); }

ConstIntBound Analyzer::Impl::bound(const LinearSum& s) {
  B out{s.base, s.base};
  for (const auto& t : s.terms) out = add(out, mul(bound(t.mono), {t.coef, t.coef}));
  return out;
}

ConstIntBound Analyzer::Impl::proof_bound(const LinearSum& s) {
  B out = bound(s);
  if (num_symbolic_ranges == 0 || in_symbolic_proof || s.is_const()) return out;
  VarIntervals dom;
  for (const auto& [key, info] : vars) {
    if (info.symbolic.is_bounded()) dom[key] = info.symbolic;
  }
  // Simplifying the relaxed ends may prove again; only constant bounds are used in there.
  in_symbolic_proof = true;
  IntervalSet relaxed;
  try {
    relaxed = eval_interval(s.to_expr(), dom, *this);
  } catch (...) {
    in_symbolic_proof = false;
    throw;
  }
  in_symbolic_proof = false;
  if (relaxed.min.defined()) out.min_value = std::max(out.min_value, bound(relaxed.min).min_value);
  if (relaxed.max.defined()) out.max_value = std::min(out.max_value, bound(relaxed.max).max_value);
  return out;
}

}  // namespace tessel::arith
