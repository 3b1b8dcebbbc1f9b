#include "tir/transforms/lower_intrinsics.h"

#include <initializer_list>

#include "ir/functor.h"

namespace tessel::tir {
namespace {

PrimExpr constant_like(const PrimExpr& x, double v) { return make_const(x.dtype(), v); }

// Horner evaluation of c[0] * y^(n-1) + ... + c[n-1].
PrimExpr horner(const PrimExpr& y, std::initializer_list<double> coeffs) {
  PrimExpr acc;
  for (double c : coeffs) {
    acc = acc.defined() ? acc * y + constant_like(y, c) : constant_like(y, c);
  }
  return acc;
}

PrimExpr clamp(const PrimExpr& x, double bound) {
  return max(min(x, constant_like(x, bound)), constant_like(x, -bound));
}

// Eigen's float tanh: an odd 13/6 rational minimax approximation; beyond +-7.905 tanh rounds
// to +-1 in float32.
PrimExpr tanh_approx(const PrimExpr& arg) {
  PrimExpr x = clamp(arg, 7.90531110763549805);
  PrimExpr x2 = x * x;
  PrimExpr p = x * horner(x2, {-2.76076847742355e-16, 2.00018790482477e-13, -8.60467152213735e-11,
                               5.12229709037114e-08, 1.48572235717979e-05, 6.37261928875436e-04,
                               4.89352455891786e-03});
  PrimExpr q = horner(
      x2, {1.19825839466702e-06, 1.18534705686654e-04, 2.26843463243900e-03, 4.89352518554385e-03});
  return p / q;
}

// Eigen's float erf: the same form; beyond +-4 erf rounds to +-1 in float32.
PrimExpr erf_approx(const PrimExpr& arg) {
  PrimExpr x = clamp(arg, 4.0);
  PrimExpr x2 = x * x;
  PrimExpr p = x * horner(x2, {-2.72614225801306e-10, 2.77068142495902e-08, -2.10102402082508e-06,
                               -5.69250639462346e-05, -7.34990630326855e-04, -2.95459980854025e-03,
                               -1.60960333262415e-02});
  PrimExpr q = horner(x2, {-1.45660718464996e-05, -2.13374055278905e-04, -1.68282697438203e-03,
                           -7.37332916720468e-03, -1.42647390514189e-02});
  return p / q;
}

// The approximations use their argument many times, so a non-trivial one is bound to a let.
// float16 is evaluated in float32: the coefficients need more precision than half has.
PrimExpr approximate(const PrimExpr& arg, PrimExpr (*approx)(const PrimExpr&)) {
  DataType t = arg.dtype();
  PrimExpr x = cast(DataType::f32().with_lanes(t.lanes()), arg);
  PrimExpr result;
  if (x.is<VarNode>() || x.is<FloatImmNode>()) {
    result = approx(x);
  } else {
    Var v("x", x.dtype());
    result = LetNode::make(v, x, approx(v));
  }
  return cast(t, result);
}

class IntrinsicLowerer : public IRMutator {
 protected:
  PrimExpr mutate_Call(const CallNode* op, const PrimExpr& self) override {
    PrimExpr e = IRMutator::mutate_Call(op, self);
    const auto* call = e.as<CallNode>();
    const PrimExpr& x = call->args[0];
    if (!x.dtype().is_float()) return e;
    switch (call->op) {
      case Intrinsic::sigmoid:
        return constant_like(x, 1) / (constant_like(x, 1) + exp(-x));
      case Intrinsic::rsqrt:
        return constant_like(x, 1) / sqrt(x);
      case Intrinsic::tanh:
        return x.dtype().bits() == 64 ? e : approximate(x, tanh_approx);
      case Intrinsic::erf:
        return x.dtype().bits() == 64 ? e : approximate(x, erf_approx);
      case Intrinsic::exp:
      case Intrinsic::exp2:
      case Intrinsic::log:
      case Intrinsic::log2:
      case Intrinsic::sqrt:
      case Intrinsic::pow:
      case Intrinsic::fabs:
      case Intrinsic::floor:
      case Intrinsic::ceil:
      case Intrinsic::round:
      case Intrinsic::trunc:
      case Intrinsic::sin:
      case Intrinsic::cos:
      case Intrinsic::fma:
      case Intrinsic::isnan:
      case Intrinsic::likely:
        return e;  // codegen emits these as LLVM intrinsics or libm calls
    }
    TESSEL_UNREACHABLE("unknown intrinsic");
  }
};

}  // namespace

PrimExpr lower_intrinsic_calls(const PrimExpr& e) { return IntrinsicLowerer().mutate_expr(e); }

PrimFunc lower_intrinsics(const PrimFunc& f) {
  Stmt body = IntrinsicLowerer().mutate_stmt(f->body);
  return body.same_as(f->body) ? f : f.with_body(body);
}

}  // namespace tessel::tir
