#include "codegen/llvm/float_math.h"

#include <llvm/Analysis/VectorUtils.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/IntrinsicsX86.h>

#include <limits>
#include <vector>

namespace tessel::codegen {

namespace {

// ln 2 in two parts: k * kLn2High is exact for the k of exp's and log's reductions (|k| <= 151).
constexpr double kLn2High = 0.693359375, kLn2Low = -2.12194440e-4;
// exp(r) = 1 + r + r^2 * P(r) for |r| <= ln(2) / 2, relative error 3.7e-9 before rounding: P of
// degree 4, fitted by least squares on Chebyshev nodes a coefficient at a time from the lowest,
// each rounded to float32 before the rest were fitted again (scripts/fit_float_polynomial.py).
// Degree 5 (one FMA more) gained nothing visible in float32: both stay within one ulp
// (tests/codegen/llvm/float_math_test.cc).
constexpr double kExpP[] = {0.49999988079071045, 0.166665181517601, 0.04166964814066887,
                            0.008368944749236107, 0.0013745303731411695};
// log(1 + f) = f - f^2 / 2 + f^3 * P(f) for sqrt(1/2) - 1 <= f < sqrt(2) - 1, relative error
// 6.9e-9 before rounding; fitted as kExpP is.
constexpr double kLogP[] = {0.3333335518836975,   -0.2500085234642029, 0.1999976634979248,
                            -0.16621315479278564, 0.14228099584579468, -0.13203458487987518,
                            0.12615187466144562,  -0.07353802770376205};
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
  FloatMath(llvm::IRBuilderBase& b, llvm::Type* type, const FloatMathIsa& isa)
      : b_(b), type_(type), isa_(isa) {}

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
  // max(x, lo) and min(x, hi) that pass a NaN x through. In this form each is one maxps/minps,
  // which return their second operand when either is NaN; llvm.maxnum returns the number, which
  // costs x86 a compare and a blend more, and the NaN would then need restoring.
  llvm::Value* at_least(llvm::Value* x, double lo) const { return select(less(x, lo), c(lo), x); }
  llvm::Value* at_most(llvm::Value* x, double hi) const {
    return select(b_.CreateFCmpOGT(x, c(hi)), c(hi), x);
  }

  // int32 of type_'s shape (scalar or vector), for work on a float's bits.
  llvm::Type* int32_type() const {
    llvm::Type* int_type = b_.getInt32Ty();
    if (auto* vector = llvm::dyn_cast<llvm::VectorType>(type_))
      int_type = llvm::VectorType::get(int_type, vector->getElementCount());
    return int_type;
  }
  llvm::Value* int32(int32_t v) const { return llvm::ConstantInt::get(int32_type(), v); }

  // P(x) for coefficients lowest degree first.
  template <size_t N>
  llvm::Value* polynomial(const double (&coeffs)[N], llvm::Value* x) const {
    llvm::Value* p = c(coeffs[N - 1]);
    for (size_t k = N - 1; k-- > 0;) p = mul_add(p, x, c(coeffs[k]));
    return p;
  }

  // v * 2^k for an integer-valued float k in [-252, 254], rounded once, so that results in the
  // subnormal range, and those next to the largest float or past it, come out right. `sum` is
  // k + 1.5 * 2^23, which holds k in its low bits.
  llvm::Value* scale_by_exp2(llvm::Value* v, llvm::Value* k, llvm::Value* sum) const {
    return isa_.avx512f ? scalef(v, k) : scale_by_two_powers(v, sum);
  }

  // By two factors, each a normal float built in its exponent bits and applied in turn. The
  // integer k comes from `sum`'s bits, not a conversion, which would be poison for a NaN.
  llvm::Value* scale_by_two_powers(llvm::Value* v, llvm::Value* sum) const {
    llvm::Type* int_type = int32_type();
    constexpr int32_t kRoundBits = 0x4b400000;  // 1.5 * 2^23
    llvm::Value* ki = b_.CreateSub(b_.CreateBitCast(sum, int_type), int32(kRoundBits));
    llvm::Value* half = b_.CreateAShr(ki, 1);
    auto power = [&](llvm::Value* e) {
      llvm::Value* bits = b_.CreateShl(b_.CreateAdd(e, int32(127)), 23);
      return b_.CreateBitCast(bits, type_);
    };
    return mul(mul(v, power(half)), power(b_.CreateSub(ki, half)));
  }

  // AVX-512's vscalefps: one instruction for the nine above (exp's costliest part). It takes 16
  // lanes, so other widths go through it in pieces of 16, the last one filled with zeros.
  llvm::Value* scalef(llvm::Value* v, llvm::Value* k) const {
    constexpr unsigned kWidth = 16;
    auto* vector = llvm::dyn_cast<llvm::FixedVectorType>(type_);
    unsigned lanes = vector ? vector->getNumElements() : 1;
    auto* wide = llvm::FixedVectorType::get(b_.getFloatTy(), kWidth);
    llvm::Value* zeros = llvm::Constant::getNullValue(wide);
    auto piece = [&](llvm::Value* x, unsigned first) -> llvm::Value* {
      if (!vector) return b_.CreateInsertElement(zeros, x, uint64_t{0});
      if (lanes == kWidth) return x;
      std::vector<int> mask(kWidth);
      for (unsigned i = 0; i < kWidth; ++i) {
        mask[i] = first + i < lanes ? static_cast<int>(first + i) : static_cast<int>(lanes);
      }
      return b_.CreateShuffleVector(x, llvm::Constant::getNullValue(type_), mask);
    };
    std::vector<llvm::Value*> pieces;
    for (unsigned first = 0; first < lanes; first += kWidth) {
      pieces.push_back(
          b_.CreateIntrinsic(llvm::Intrinsic::x86_avx512_mask_scalef_ps_512, {},
                             {piece(v, first), piece(k, first), zeros, b_.getInt16(0xffff),
                              b_.getInt32(4)}));  // all lanes, the current rounding mode
    }
    if (!vector) return b_.CreateExtractElement(pieces[0], uint64_t{0});
    if (lanes == kWidth) return pieces[0];
    llvm::Value* all = pieces.size() == 1 ? pieces[0] : llvm::concatenateVectors(b_, pieces);
    std::vector<int> first_lanes(lanes);
    for (unsigned i = 0; i < lanes; ++i) first_lanes[i] = static_cast<int>(i);
    return b_.CreateShuffleVector(all, first_lanes);
  }

  llvm::Value* exp(llvm::Value* x) const {
    // Past these exp(x) is 0 or inf in float32; the clamp keeps k in scale_by_exp2's range.
    llvm::Value* xc = at_most(at_least(x, -104.0), 89.0);
    // x = k ln 2 + r, |r| <= ln(2) / 2; ln 2 in two parts so that k * kLn2High is exact. Adding
    // 1.5 * 2^23 rounds x / ln 2 to the integer k, which then sits in the sum's low bits.
    constexpr double kRound = 12582912.0;
    llvm::Value* sum = mul_add(xc, c(1.4426950408889634), c(kRound));
    llvm::Value* k = sub(sum, c(kRound));
    llvm::Value* r = mul_add(k, c(-kLn2High), xc);
    r = mul_add(k, c(-kLn2Low), r);
    // r^2 beside P's chain, not plain Horner: that is one operation fewer, but its longer chain of
    // FMAs ran a softmax 5-8% slower with AVX2 code (docs/codegen.md).
    llvm::Value* er = add(mul_add(polynomial(kExpP, r), mul(r, r), r), c(1.0));
    return scale_by_exp2(er, k, sum);  // a NaN x gives a NaN er, and so a NaN
  }

  llvm::Value* log(llvm::Value* x) const {
    // x = 2^k m with m in [sqrt(1/2), sqrt(2)): subtracting sqrt(1/2)'s bits from x's carries
    // into the exponent exactly when x's mantissa is at least sqrt(1/2)'s. A subnormal x is
    // first scaled into the normal range by 2^23.
    constexpr int32_t kSqrtHalfBits = 0x3f3504f3, kMantissa = 0x007fffff;
    constexpr double kMinNormal = 1.1754943508222875e-38, kTwo23 = 8388608.0;
    llvm::Value* tiny = less(x, kMinNormal);
    llvm::Value* bits = b_.CreateBitCast(select(tiny, mul(x, c(kTwo23)), x), int32_type());
    llvm::Value* d = b_.CreateSub(bits, int32(kSqrtHalfBits));
    llvm::Value* k = b_.CreateSub(b_.CreateAShr(d, 23), select(tiny, int32(23), int32(0)));
    llvm::Value* m = b_.CreateBitCast(
        b_.CreateAdd(b_.CreateAnd(d, int32(kMantissa)), int32(kSqrtHalfBits)), type_);
    llvm::Value* f = sub(m, c(1.0));  // exact
    // log x = k ln 2 + f - f^2 / 2 + f^3 P(f), the small terms added first.
    llvm::Value* kf = b_.CreateSIToFP(k, type_);
    llvm::Value* y = mul(mul(f, f), mul_add(f, polynomial(kLogP, f), c(-0.5)));
    y = mul_add(kf, c(kLn2High), add(mul_add(kf, c(kLn2Low), y), f));
    const double inf = std::numeric_limits<double>::infinity();
    y = select(b_.CreateFCmpOEQ(x, c(inf)), c(inf), y);
    y = select(b_.CreateFCmpOEQ(x, c(0.0)), c(-inf), y);  // either zero
    return select(b_.CreateFCmpULT(x, c(0.0)), c(std::numeric_limits<double>::quiet_NaN()),
                  y);  // negative or NaN
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
    llvm::Value* ac = at_most(a, kErfOne);
    llvm::Value* t = div(c(1.0), mul_add(ac, c(0.5), c(1.0)));
    llvm::Value* erfc = mul(exp(b_.CreateFNeg(mul(ac, ac))), polynomial(kErfcQ, t));
    llvm::Value* large = binary(llvm::Intrinsic::copysign, sub(c(1.0), erfc), x);
    return select(less(a, 1.0), small, large);  // NaN: large, from exp's NaN
  }

 private:
  llvm::IRBuilderBase& b_;
  llvm::Type* type_;
  FloatMathIsa isa_;
};

}  // namespace

llvm::Value* emit_exp_f32(llvm::IRBuilderBase& b, llvm::Value* x, const FloatMathIsa& isa) {
  return FloatMath(b, x->getType(), isa).exp(x);
}

llvm::Value* emit_log_f32(llvm::IRBuilderBase& b, llvm::Value* x, const FloatMathIsa& isa) {
  return FloatMath(b, x->getType(), isa).log(x);
}

llvm::Value* emit_tanh_f32(llvm::IRBuilderBase& b, llvm::Value* x, const FloatMathIsa& isa) {
  return FloatMath(b, x->getType(), isa).tanh(x);
}

llvm::Value* emit_erf_f32(llvm::IRBuilderBase& b, llvm::Value* x, const FloatMathIsa& isa) {
  return FloatMath(b, x->getType(), isa).erf(x);
}

}  // namespace tessel::codegen
