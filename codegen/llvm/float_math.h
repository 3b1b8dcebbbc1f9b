// exp, log, tanh and erf of float32 scalars and vectors as inline polynomials. LLVM has no vector
// form of these without a vector math library, and expands llvm.exp.v16f32 into sixteen calls to
// expf: a softmax, a GELU, an LSTM cell or a Softplus then runs at libm's scalar speed however its
// loops are vectorized. These run on the vector unit, lane for lane the same as the scalar form,
// so a vectorized loop and its scalar tail agree.
//
// Accuracy over all floats (docs/codegen.md): exp within 1 ulp (0 past -104, inf past 89), log
// within 1 ulp (-inf at 0, NaN below), tanh within 2e-7 relative, erf within 1e-7 absolute and
// 2e-7 relative; NaN in gives NaN out. The coefficients were fitted for Tessel by least squares on
// Chebyshev nodes (docs/codegen.md says how).
#pragma once

#include <llvm/IR/IRBuilder.h>

namespace tessel::codegen {

// Target instructions the polynomials may use beyond portable LLVM IR; each gives the same bits
// as the portable form.
struct FloatMathIsa {
  bool avx512f = false;  // vscalefps scales exp's result by 2^k
};

// Each takes and returns a float32 or a vector of float32.
llvm::Value* emit_exp_f32(llvm::IRBuilderBase& b, llvm::Value* x, const FloatMathIsa& isa);
llvm::Value* emit_log_f32(llvm::IRBuilderBase& b, llvm::Value* x, const FloatMathIsa& isa);
llvm::Value* emit_tanh_f32(llvm::IRBuilderBase& b, llvm::Value* x, const FloatMathIsa& isa);
llvm::Value* emit_erf_f32(llvm::IRBuilderBase& b, llvm::Value* x, const FloatMathIsa& isa);

}  // namespace tessel::codegen
