#include "codegen/llvm/float_math.h"

#include <llvm/IR/Intrinsics.h>

namespace tessel::codegen {

namespace {

// exp(r) = 1 + r + r^2 * P(r) for |r| <= ln(2) / 2.
constexpr double kExpP[] = {5.0000000134925826e-01, 1.6666666718995282e-01, 4.1666464852581825e-02,
                            8.3332984816470463e-03, 1.3933653242995010e-03, 1.9899276638935196e-04};
// tanh(x) = x + x^3 * P(x^2) for |x| < kTanhSmall.
constexpr double kTanhSmall = 0.55;
constexpr double kTanhP[] = {-0.3333333204348375, 0.1333311752729629, -0.05391005428342945,
                             0.02131268357208746, -0.00661565486928758};
// erf(x) = x * P(x^2) for |x| < 1.
constexpr double kErfP[] = {1.1283791658793834e+00, -3.7612626896842516e-01,
                            1.1283597403158943e-01, -2.6854326507358944e-02,
                            5.1893077610369875e-03, -8.0188186025223485e-04,
                            7.8823761028398720e-05};
// erfc(x) = exp(-x^2) * Q(1 / (1 + x / 2)) for 1 <= x <= kErfOne; past it erf(x) rounds to 1.
constexpr double kErfOne = 4.5;
constexpr double kErfcQ[] = {0.00035831770330457, 0.2768279500660255,  0.3137317658526073,
                             0.14935898882144757, 0.32864825781907847, 0.0046727952413638,
                             -0.07462168105714405};

class FloatMath {
 public:
  FloatMath(llvm::IRBuilderBase& b, llvm::Type* type) : b_(b), type_(type) {}

  llvm::Value* c(double v) const { return llvm::ConstantFP::get(type_, v); }
  llvm::Value* add(llvm::Value* x, llvm::Value* y) const { return b_.CreateFAdd(x, y); }
  llvm::Value* sub(llvm::Value* x, llvm::Value* y) const { return b_.CreateFSub(x, y); }
  llvm::Value* mul(llvm::Value* x, llvm::Value* y) const { return b_.CreateFMul(x, y); }
  llvm::Value* div(llvm::Value* x, llvm::Value* y) const { return b_.CreateFDiv(x, y); }
  // x * y + z, fused where the target has FMA (llvm.fma would call fmaf where it has not).
  llvm::Value* mul_add(llvm::Value* x, llvm::Value* y, llvm::Value* z) const {
    return b_.CreateIntrinsic(llvm::Intrinsic::fmuladd, {type_}, {x, y, z});
  }
  llvm::Value* unary(llvm::Intrinsic::ID id, llvm::Value* x) const {
    return b_.CreateUnaryIntrinsic(id, x);
  }
  llvm::Value* binary(llvm::Intrinsic::ID id, llvm::Value* x, llvm::Value* y) const {
    return b_.CreateBinaryIntrinsic(id, x, y);
  }
  llvm::Value* less(llvm::Value* x, double v) const { return b_.CreateFCmpOLT(x, c(v)); }
  llvm::Value* select(llvm::Value* cond, llvm::Value* x, llvm::Value* y) const {
    return b_.CreateSelect(cond, x, y);
  }
  // x itself where it is NaN (the clamps below would turn a NaN into a number).
  llvm::Value* keep_nan(llvm::Value* x, llvm::Value* y) const {
    return select(b_.CreateFCmpUNO(x, x), x, y);
  }

  // P(x) for coefficients lowest degree first.
  template <size_t N>
  llvm::Value* polynomial(const double (&coeffs)[N], llvm::Value* x) const {
    llvm::Value* p = c(coeffs[N - 1]);
    for (size_t k = N - 1; k-- > 0;) p = mul_add(p, x, c(coeffs[k]));
    return p;
  }

  // v * 2^k for an integer-valued float k in [-252, 254]: by two factors, each a normal float
  // built in its exponent bits and applied in turn, so that results in the subnormal range, and
  // those next to the largest float or past it, come out right.
  llvm::Value* scale_by_exp2(llvm::Value* v, llvm::Value* k) const {
    llvm::Type* int_type = b_.getInt32Ty();
    if (auto* vector = llvm::dyn_cast<llvm::VectorType>(type_))
      int_type = llvm::VectorType::get(int_type, vector->getElementCount());
    llvm::Value* ki = b_.CreateFPToSI(k, int_type);
    llvm::Value* half = b_.CreateAShr(ki, 1);
    auto power = [&](llvm::Value* e) {
      llvm::Value* bits = b_.CreateShl(b_.CreateAdd(e, llvm::ConstantInt::get(int_type, 127)), 23);
      return b_.CreateBitCast(bits, type_);
    };
    return mul(mul(v, power(half)), power(b_.CreateSub(ki, half)));
  }

  llvm::Value* exp(llvm::Value* x) const {
    // Past these exp(x) is 0 or inf in float32; the clamp keeps k in exp2_integer's range.
    llvm::Value* xc =
        binary(llvm::Intrinsic::minnum, binary(llvm::Intrinsic::maxnum, x, c(-104.0)), c(89.0));
    // x = k ln 2 + r, |r| <= ln(2) / 2; ln 2 in two parts so that k * kLn2High is exact.
    constexpr double kLn2High = 0.693359375, kLn2Low = -2.12194440e-4;
    llvm::Value* k = unary(llvm::Intrinsic::roundeven, mul(xc, c(1.4426950408889634)));
    llvm::Value* r = mul_add(k, c(-kLn2High), xc);
    r = mul_add(k, c(-kLn2Low), r);
    llvm::Value* er = add(mul_add(polynomial(kExpP, r), mul(r, r), r), c(1.0));
    return keep_nan(x, scale_by_exp2(er, k));
  }

  llvm::Value* tanh(llvm::Value* x) const {
    llvm::Value* a = unary(llvm::Intrinsic::fabs, x);
    llvm::Value* x2 = mul(x, x);
    llvm::Value* small = mul_add(mul(x, x2), polynomial(kTanhP, x2), x);
    // 1 - 2 / (e^2a + 1): no cancellation worth a bit once a >= kTanhSmall; inf gives 1.
    llvm::Value* large = sub(c(1.0), div(c(2.0), add(exp(add(a, a)), c(1.0))));
    return select(less(a, kTanhSmall), small,
                  binary(llvm::Intrinsic::copysign, large, x));  // NaN: exp's NaN
  }

  llvm::Value* erf(llvm::Value* x) const {
    llvm::Value* a = unary(llvm::Intrinsic::fabs, x);
    llvm::Value* small = mul(x, polynomial(kErfP, mul(x, x)));
    llvm::Value* ac = binary(llvm::Intrinsic::minnum, a, c(kErfOne));
    llvm::Value* t = div(c(1.0), mul_add(ac, c(0.5), c(1.0)));
    llvm::Value* erfc = mul(exp(b_.CreateFNeg(mul(ac, ac))), polynomial(kErfcQ, t));
    llvm::Value* large = binary(llvm::Intrinsic::copysign, sub(c(1.0), erfc), x);
    return keep_nan(x, select(less(a, 1.0), small, large));
  }

 private:
  llvm::IRBuilderBase& b_;
  llvm::Type* type_;
};

}  // namespace

llvm::Value* emit_exp_f32(llvm::IRBuilderBase& b, llvm::Value* x) {
  return FloatMath(b, x->getType()).exp(x);
}

llvm::Value* emit_tanh_f32(llvm::IRBuilderBase& b, llvm::Value* x) {
  return FloatMath(b, x->getType()).tanh(x);
}

llvm::Value* emit_erf_f32(llvm::IRBuilderBase& b, llvm::Value* x) {
  return FloatMath(b, x->getType()).erf(x);
}

}  // namespace tessel::codegen
