// Math intrinsics for scalar and vector types: LLVM intrinsics where LLVM has them (the backend
// expands vector forms to libm calls per lane as needed), arithmetic for rsqrt and sigmoid, and
// per-lane libm calls for tanh and erf; float32 exp, log, tanh, erf and sigmoid are inline
// polynomials on the vector unit instead (codegen/llvm/float_math.h). `round` rounds half to even
// (llvm.roundeven), like ONNX Round and std::nearbyint in the default rounding mode.
#include <llvm/IR/Intrinsics.h>

#include "codegen/llvm/codegen_llvm.h"
#include "codegen/llvm/float_math.h"

namespace tessel::codegen {

llvm::Value* CodeGenLLVM::emit_intrinsic(const CallNode* op) {
  auto arg = [&](int i) { return emit_expr(op->args[i]); };
  auto unary = [&](llvm::Intrinsic::ID id) { return builder_.CreateUnaryIntrinsic(id, arg(0)); };
  auto one = [&] { return llvm::ConstantFP::get(llvm_type(op->dtype), 1.0); };
  bool f32 = op->dtype.element_of() == DataType::f32();
  auto exp = [&](llvm::Value* x) {
    return f32 ? emit_exp_f32(builder_, x, float_math_isa_)
               : builder_.CreateUnaryIntrinsic(llvm::Intrinsic::exp, x);
  };
  switch (op->op) {
    case Intrinsic::exp:
      return exp(arg(0));
    case Intrinsic::exp2:
      return unary(llvm::Intrinsic::exp2);
    case Intrinsic::log:
      return f32 ? emit_log_f32(builder_, arg(0), float_math_isa_) : unary(llvm::Intrinsic::log);
    case Intrinsic::log2:
      return unary(llvm::Intrinsic::log2);
    case Intrinsic::sqrt:
      return unary(llvm::Intrinsic::sqrt);
    case Intrinsic::fabs:
      return unary(llvm::Intrinsic::fabs);
    case Intrinsic::floor:
      return unary(llvm::Intrinsic::floor);
    case Intrinsic::ceil:
      return unary(llvm::Intrinsic::ceil);
    case Intrinsic::round:
      return unary(llvm::Intrinsic::roundeven);
    case Intrinsic::trunc:
      return unary(llvm::Intrinsic::trunc);
    case Intrinsic::sin:
      return unary(llvm::Intrinsic::sin);
    case Intrinsic::cos:
      return unary(llvm::Intrinsic::cos);
    case Intrinsic::pow: {
      llvm::Value* x = arg(0);
      return builder_.CreateBinaryIntrinsic(llvm::Intrinsic::pow, x, arg(1));
    }
    case Intrinsic::fma: {
      llvm::Value *a = arg(0), *b = arg(1), *c = arg(2);
      return builder_.CreateIntrinsic(llvm::Intrinsic::fma, {a->getType()}, {a, b, c});
    }
    case Intrinsic::rsqrt: {
      llvm::Value* x = arg(0);
      return builder_.CreateFDiv(one(), builder_.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, x));
    }
    case Intrinsic::sigmoid:
      return builder_.CreateFDiv(one(),
                                 builder_.CreateFAdd(one(), exp(builder_.CreateFNeg(arg(0)))));
    case Intrinsic::tanh:
      return f32 ? emit_tanh_f32(builder_, arg(0), float_math_isa_)
                 : emit_libm_call("tanh", op->dtype, {arg(0)});
    case Intrinsic::erf:
      return f32 ? emit_erf_f32(builder_, arg(0), float_math_isa_)
                 : emit_libm_call("erf", op->dtype, {arg(0)});
    case Intrinsic::isnan: {
      llvm::Value* x = arg(0);
      return builder_.CreateFCmpUNO(x, x);
    }
    case Intrinsic::likely:
      return arg(0);  // the hint itself is read by emit_if
  }
  TESSEL_UNREACHABLE(std::string("intrinsic ") + intrinsic_name(op->op));
}

llvm::Value* CodeGenLLVM::emit_libm_call(const std::string& name, DataType t,
                                         std::vector<llvm::Value*> args) {
  // float16 computes in float32; float32 calls the "f" variant.
  DataType elem = t.element_of();
  DataType compute = elem.bits() == 64 ? DataType::f64() : DataType::f32();
  llvm::Type* compute_type = llvm_type(compute);
  std::vector<llvm::Type*> param_types(args.size(), compute_type);
  llvm::FunctionCallee callee =
      module_.getOrInsertFunction(compute.bits() == 32 ? name + "f" : name,
                                  llvm::FunctionType::get(compute_type, param_types, false));
  if (auto* fn = llvm::dyn_cast<llvm::Function>(callee.getCallee())) {
    fn->setDoesNotThrow();
    fn->setDoesNotAccessMemory();
  }
  auto call_one = [&](std::vector<llvm::Value*> xs) {
    for (auto& x : xs) x = builder_.CreateFPCast(x, compute_type);
    return builder_.CreateFPCast(builder_.CreateCall(callee, xs), llvm_type(elem));
  };
  if (t.is_scalar()) return call_one(args);
  llvm::Value* out = llvm::PoisonValue::get(llvm_type(t));
  for (int lane = 0; lane < t.lanes(); ++lane) {
    std::vector<llvm::Value*> xs;
    for (llvm::Value* a : args) xs.push_back(builder_.CreateExtractElement(a, lane));
    out = builder_.CreateInsertElement(out, call_one(xs), lane);
  }
  return out;
}

}  // namespace tessel::codegen
