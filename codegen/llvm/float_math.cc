#include "codegen/llvm/float_math.h"

#include <llvm/Analysis/VectorUtils.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/IntrinsicsX86.h>

#include <vector>

namespace tessel::codegen {

namespace {

// exp(r) = 1 + r + r^2 * P(r) for |r| <= ln(2) / 2, relative error 3.7e-9 before rounding: P of
// degree 4, fitted by least squares on Chebyshev nodes a coefficient at a time from the lowest,
// each rounded to float32 before the rest were fitted again. Degree 5 (one FMA more) gained
// nothing visible in float32: both stay within one ulp (tests/codegen/llvm/float_math_test.cc).
constexpr double kExpP[] = {0.49999988079071045, 0.166665181517601, 0.04166964814066887,
                            0.008368944749236107, 0.0013745303731411695};
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
    llvm::Type* int_type = b_.getInt32Ty();
    if (auto* vector = llvm::dyn_cast<llvm::VectorType>(type_))
      int_type = llvm::VectorType::get(int_type, vector->getElementCount());
    constexpr int32_t kRoundBits = 0x4b400000;  // 1.5 * 2^23
    llvm::Value* ki =
        b_.CreateSub(b_.CreateBitCast(sum, int_type), llvm::ConstantInt::get(int_type, kRoundBits));
    llvm::Value* half = b_.CreateAShr(ki, 1);
    auto power = [&](llvm::Value* e) {
      llvm::Value* bits = b_.CreateShl(b_.CreateAdd(e, llvm::ConstantInt::get(int_type, 127)), 23);
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
    constexpr double kLn2High = 0.693359375, kLn2Low = -2.12194440e-4, kRound = 12582912.0;
    llvm::Value* sum = mul_add(xc, c(1.4426950408889634), c(kRound));
    llvm::Value* k = sub(sum, c(kRound));
    llvm::Value* r = mul_add(k, c(-kLn2High), xc);
    r = mul_add(k, c(-kLn2Low), r);
    // r^2 beside P's chain, not plain Horner: that is one operation fewer, but its longer chain of
    // FMAs ran a softmax 5-8% slower with AVX2 code (docs/codegen.md).
    llvm::Value* er = add(mul_add(polynomial(kExpP, r), mul(r, r), r), c(1.0));
    return scale_by_exp2(er, k, sum);  // a NaN x gives a NaN er, and so a NaN
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

llvm::Value* emit_tanh_f32(llvm::IRBuilderBase& b, llvm::Value* x, const FloatMathIsa& isa) {
  return FloatMath(b, x->getType(), isa).tanh(x);
}

llvm::Value* emit_erf_f32(llvm::IRBuilderBase& b, llvm::Value* x, const FloatMathIsa& isa) {
  return FloatMath(b, x->getType(), isa).erf(x);
}

}  // namespace tessel::codegen
