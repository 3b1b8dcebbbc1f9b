#include "codegen/llvm/codegen_llvm.h"

#include <fmt/format.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/MDBuilder.h>

#include <algorithm>
#include <bit>

namespace tessel::codegen {
namespace {

// Collects the vars a statement reads, including the data vars of the buffers it accesses.
class VarCollector : public IRVisitor {
 public:
  std::vector<Var> vars;

 protected:
  void add(const VarNode* v) {
    if (std::none_of(vars.begin(), vars.end(), [&](const Var& u) { return u.get() == v; })) {
      vars.emplace_back(Ref<VarNode>(v));
    }
  }
  void visit_Var(const VarNode* op, const PrimExpr&) override { add(op); }
  void visit_BufferLoad(const BufferLoadNode* op, const PrimExpr& self) override {
    add(op->buffer->data.get());
    IRVisitor::visit_BufferLoad(op, self);
  }
  void visit_BufferStore(const BufferStoreNode* op, const Stmt& self) override {
    add(op->buffer->data.get());
    IRVisitor::visit_BufferStore(op, self);
  }
};

// An integer division by this may fault (by zero, or INT_MIN by -1): it is not a constant.
bool is_faulting_divisor(const PrimExpr& b) {
  return b.dtype().is_integer() && as_const_int(b) == nullptr;
}

// Whether evaluating `e` where its guard fails could fault: it loads memory or divides integers.
bool may_fault(const PrimExpr& e) {
  struct Finder : IRVisitor {
    bool found = false;
    void visit_BufferLoad(const BufferLoadNode*, const PrimExpr&) override { found = true; }
    void visit_Div(const DivNode* op, const PrimExpr& self) override {
      found = found || is_faulting_divisor(op->b);
      IRVisitor::visit_Div(op, self);
    }
    void visit_FloorDiv(const FloorDivNode* op, const PrimExpr& self) override {
      found = found || is_faulting_divisor(op->b);
      IRVisitor::visit_FloorDiv(op, self);
    }
    void visit_FloorMod(const FloorModNode* op, const PrimExpr& self) override {
      found = found || is_faulting_divisor(op->b);
      IRVisitor::visit_FloorMod(op, self);
    }
  } finder;
  finder.visit_expr(e);
  return finder.found;
}

// Number of trailing zero bits `e` is known to have (capped), for alignment of accesses.
int known_trailing_zeros(const PrimExpr& e) {
  constexpr int kCap = 16;
  if (const int64_t* c = as_const_int(e)) {
    return *c == 0 ? kCap : std::min(kCap, std::countr_zero(static_cast<uint64_t>(*c)));
  }
  if (const auto* op = e.as<AddNode>()) {
    return std::min(known_trailing_zeros(op->a), known_trailing_zeros(op->b));
  }
  if (const auto* op = e.as<SubNode>()) {
    return std::min(known_trailing_zeros(op->a), known_trailing_zeros(op->b));
  }
  if (const auto* op = e.as<MulNode>()) {
    return std::min(kCap, known_trailing_zeros(op->a) + known_trailing_zeros(op->b));
  }
  if (const auto* op = e.as<CastNode>()) return known_trailing_zeros(op->value);
  return 0;
}

// bfloat16 lives in i16 bits. Widening puts them in the high half of a float32's bits.
llvm::Value* bfloat_to_f32(llvm::IRBuilder<>& b, llvm::Value* bits, llvm::Type* i32,
                           llvm::Type* f32) {
  return b.CreateBitCast(b.CreateShl(b.CreateZExt(bits, i32), llvm::ConstantInt::get(i32, 16)),
                         f32);
}

// Narrowing keeps the high half (truncation, like the reference executor) and sets the quiet bit
// on NaN, so a NaN whose payload is all in the low half does not become infinity.
llvm::Value* f32_to_bfloat(llvm::IRBuilder<>& b, llvm::Value* f, llvm::Type* i32, llvm::Type* i16) {
  llvm::Value* high = b.CreateLShr(b.CreateBitCast(f, i32), llvm::ConstantInt::get(i32, 16));
  llvm::Value* quiet = b.CreateOr(high, llvm::ConstantInt::get(i32, 0x40));
  return b.CreateTrunc(b.CreateSelect(b.CreateFCmpUNO(f, f), quiet, high), i16);
}
}  // namespace

CodeGenLLVM::CodeGenLLVM(llvm::Module& module, const Target& target)
    : module_(module),
      ctx_(module.getContext()),
      builder_(module.getContext()),
      target_(target),
      vector_bits_(target.vector_bits()),
      float_math_isa_{.avx512f = target.has_feature("avx512f")} {
  llvm::FastMathFlags fmf;
  fmf.setAllowContract(true);
  builder_.setFastMathFlags(fmf);
}

// ---------------- functions and bindings ----------------

void CodeGenLLVM::set_target_attributes(llvm::Function* fn) const {
  fn->addFnAttr("target-cpu", target_.cpu);
  if (!target_.features.empty()) fn->addFnAttr("target-features", target_.features);
  // tir already chose its vector width from vector_bits(); let LLVM use registers that wide.
  fn->addFnAttr("prefer-vector-width", std::to_string(vector_bits_));
  fn->setDoesNotThrow();
}

llvm::Function* CodeGenLLVM::emit_function(const std::string& name,
                                           const std::vector<llvm::Type*>& prefix,
                                           const std::vector<Var>& vars,
                                           const std::function<void(llvm::Function*)>& emit_body) {
  std::vector<llvm::Type*> params = prefix;
  for (const Var& v : vars) params.push_back(llvm_type(v.dtype()));
  auto* fn = llvm::Function::Create(llvm::FunctionType::get(builder_.getInt32Ty(), params, false),
                                    llvm::GlobalValue::InternalLinkage, name, module_);
  set_target_attributes(fn);

  auto saved_vars = std::move(vars_);
  auto* saved_function = function_;
  auto saved_ip = builder_.saveIP();
  vars_.clear();
  function_ = fn;
  builder_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", fn));
  for (size_t i = 0; i < vars.size(); ++i) {
    unsigned index = static_cast<unsigned>(prefix.size() + i);
    llvm::Argument* arg = fn->getArg(index);
    arg->setName(vars[i]->name_hint);
    if (vars[i].dtype().is_handle()) {
      fn->addParamAttr(index, llvm::Attribute::NoAlias);
      fn->addParamAttr(index, llvm::Attribute::getWithAlignment(ctx_, llvm::Align(kBufferAlign)));
    }
    bind(vars[i], arg);
  }
  emit_body(fn);
  builder_.CreateRet(const_i32(0));

  vars_ = std::move(saved_vars);
  function_ = saved_function;
  builder_.restoreIP(saved_ip);
  return fn;
}

std::vector<Var> CodeGenLLVM::free_vars(const Stmt& s) const {
  VarCollector collector;
  collector.visit_stmt(s);
  std::vector<Var> out;
  for (const Var& v : collector.vars) {
    if (vars_.count(v.get())) out.push_back(v);
  }
  return out;
}

void CodeGenLLVM::bind(const Var& var, llvm::Value* value) {
  TESSEL_ICHECK(vars_.emplace(var.get(), value).second)
      << "var " << var->name_hint << " is bound twice";
}

void CodeGenLLVM::unbind(const Var& var) {
  vars_.erase(var.get());
  non_negative_.erase(var.get());
}

void CodeGenLLVM::unbind_all() {
  vars_.clear();
  non_negative_.clear();
}

bool CodeGenLLVM::is_non_negative(const PrimExpr& e) const {
  DataType t = e.dtype();
  if (t.is_uint() || t.is_bool()) return true;
  if (!t.is_int()) return false;
  if (const int64_t* c = as_const_int(e)) return *c >= 0;
  auto both = [&](const auto* op) { return is_non_negative(op->a) && is_non_negative(op->b); };
  switch (e->kind()) {
    case NodeKind::Var:
      return non_negative_.count(static_cast<const VarNode*>(e.get())) > 0;
    case NodeKind::Add:
      return both(e.as<AddNode>());
    case NodeKind::Mul:
      return both(e.as<MulNode>());
    case NodeKind::Div:
      return both(e.as<DivNode>());
    case NodeKind::FloorDiv:
      return both(e.as<FloorDivNode>());
    case NodeKind::Min:
      return both(e.as<MinNode>());
    case NodeKind::FloorMod:
      return is_non_negative(e.as<FloorModNode>()->b);
    case NodeKind::Max: {
      const auto* op = e.as<MaxNode>();
      return is_non_negative(op->a) || is_non_negative(op->b);
    }
    case NodeKind::Select: {
      const auto* op = e.as<SelectNode>();
      return is_non_negative(op->true_value) && is_non_negative(op->false_value);
    }
    case NodeKind::IfThenElseExpr: {
      const auto* op = e.as<IfThenElseExprNode>();
      return is_non_negative(op->true_value) && is_non_negative(op->false_value);
    }
    case NodeKind::Cast: {
      const auto* op = e.as<CastNode>();
      return op->value.dtype().is_integer() && op->value.dtype().bits() <= t.bits() &&
             is_non_negative(op->value);
    }
    case NodeKind::Ramp: {
      const auto* op = e.as<RampNode>();
      return is_non_negative(op->base) && is_non_negative(op->stride);
    }
    case NodeKind::Broadcast:
      return is_non_negative(e.as<BroadcastNode>()->value);
    case NodeKind::IntImm:
    case NodeKind::FloatImm:
    case NodeKind::Sub:
      TESSEL_COMPARE_KINDS(TESSEL_KIND_CASE)
      TESSEL_LOGIC_KINDS(TESSEL_KIND_CASE)
    case NodeKind::Not:
    case NodeKind::Let:
    case NodeKind::Call:
    case NodeKind::BufferLoad:
      return false;
      TESSEL_NON_EXPR_KINDS(TESSEL_KIND_CASE)
      TESSEL_UNREACHABLE(std::string("not an expression: ") + node_kind_name(e->kind()));
  }
  fail_non_ir_node(e->kind(), "codegen");
}

// ---------------- types and constants ----------------

llvm::Type* CodeGenLLVM::llvm_type(DataType t) const {
  if (t.is_void()) return llvm::Type::getVoidTy(ctx_);
  llvm::Type* elem = nullptr;
  if (t.is_handle()) {
    elem = llvm::PointerType::get(ctx_, 0);
  } else if (t.is_float()) {
    switch (t.bits()) {
      case 16:
        elem = llvm::Type::getHalfTy(ctx_);
        break;
      case 32:
        elem = llvm::Type::getFloatTy(ctx_);
        break;
      case 64:
        elem = llvm::Type::getDoubleTy(ctx_);
        break;
      default:
        TESSEL_UNREACHABLE("unsupported float type " + t.str());
    }
  } else {
    elem = llvm::Type::getIntNTy(ctx_, t.bits());
  }
  return t.is_scalar() ? elem : llvm::FixedVectorType::get(elem, t.lanes());
}

llvm::Type* CodeGenLLVM::memory_type(DataType t) const {
  return llvm_type(t.is_bool() ? DataType(DataType::kUInt, 8, t.lanes()) : t);
}

llvm::Value* CodeGenLLVM::const_i32(int64_t v) const {
  return llvm::ConstantInt::get(llvm::Type::getInt32Ty(ctx_), v, true);
}
llvm::Value* CodeGenLLVM::const_i64(int64_t v) const {
  return llvm::ConstantInt::get(llvm::Type::getInt64Ty(ctx_), v, true);
}

llvm::Value* CodeGenLLVM::cast_value(DataType from, DataType to, llvm::Value* v) {
  if (from == to) return v;
  TESSEL_ICHECK(!from.is_handle() && !to.is_handle())
      << "cast between " << from.str() << " and " << to.str();
  if (from.is_bfloat() || to.is_bfloat()) {  // through float32
    DataType f32 = DataType::f32().with_lanes(from.lanes());
    llvm::Type* i32 = llvm_type(DataType::i32().with_lanes(from.lanes()));
    if (from.is_bfloat())
      return cast_value(f32, to, bfloat_to_f32(builder_, v, i32, llvm_type(f32)));
    return f32_to_bfloat(builder_, cast_value(from, f32, v), i32, llvm_type(to));
  }
  llvm::Type* ty = llvm_type(to);
  if (to.is_bool()) {
    llvm::Value* zero = llvm::Constant::getNullValue(v->getType());
    return from.is_float() ? builder_.CreateFCmpUNE(v, zero) : builder_.CreateICmpNE(v, zero);
  }
  if (from.is_float() && to.is_float()) return builder_.CreateFPCast(v, ty);
  if (from.is_float())
    return to.is_int() ? builder_.CreateFPToSI(v, ty) : builder_.CreateFPToUI(v, ty);
  if (to.is_float())
    return from.is_int() ? builder_.CreateSIToFP(v, ty) : builder_.CreateUIToFP(v, ty);
  return builder_.CreateIntCast(v, ty, from.is_int());
}

llvm::Value* CodeGenLLVM::emit_i64(const PrimExpr& e) {
  return cast_value(e.dtype(), DataType::i64().with_lanes(e.dtype().lanes()), emit_expr(e));
}

llvm::AllocaInst* CodeGenLLVM::entry_alloca(llvm::Type* type, llvm::Value* count, int align) {
  llvm::BasicBlock& entry = function_->getEntryBlock();
  llvm::IRBuilder<> b(&entry, entry.begin());
  llvm::AllocaInst* a = b.CreateAlloca(type, count);
  a->setAlignment(llvm::Align(align));
  return a;
}

// ---------------- expressions ----------------

llvm::Value* CodeGenLLVM::visit_IntImm(const IntImmNode* op, const PrimExpr&) {
  return llvm::ConstantInt::get(llvm_type(op->dtype), static_cast<uint64_t>(op->value), true);
}

llvm::Value* CodeGenLLVM::visit_FloatImm(const FloatImmNode* op, const PrimExpr&) {
  return llvm::ConstantFP::get(llvm_type(op->dtype), op->value);
}

llvm::Value* CodeGenLLVM::visit_Var(const VarNode* op, const PrimExpr&) {
  auto it = vars_.find(op);
  TESSEL_ICHECK(it != vars_.end()) << "var " << op->name_hint << " is used but not bound";
  return it->second;
}

llvm::Value* CodeGenLLVM::visit_Cast(const CastNode* op, const PrimExpr&) {
  return cast_value(op->value.dtype(), op->dtype, emit_expr(op->value));
}

llvm::Value* CodeGenLLVM::visit_Add(const AddNode* op, const PrimExpr&) {
  llvm::Value *a = emit_expr(op->a), *b = emit_expr(op->b);
  if (op->dtype.is_float()) return builder_.CreateFAdd(a, b);
  return op->dtype.is_int() ? builder_.CreateNSWAdd(a, b) : builder_.CreateAdd(a, b);
}

llvm::Value* CodeGenLLVM::visit_Sub(const SubNode* op, const PrimExpr&) {
  llvm::Value *a = emit_expr(op->a), *b = emit_expr(op->b);
  if (op->dtype.is_float()) return builder_.CreateFSub(a, b);
  return op->dtype.is_int() ? builder_.CreateNSWSub(a, b) : builder_.CreateSub(a, b);
}

llvm::Value* CodeGenLLVM::visit_Mul(const MulNode* op, const PrimExpr&) {
  llvm::Value *a = emit_expr(op->a), *b = emit_expr(op->b);
  if (op->dtype.is_float()) return builder_.CreateFMul(a, b);
  return op->dtype.is_int() ? builder_.CreateNSWMul(a, b) : builder_.CreateMul(a, b);
}

llvm::Value* CodeGenLLVM::visit_Div(const DivNode* op, const PrimExpr&) {
  llvm::Value *a = emit_expr(op->a), *b = emit_expr(op->b);
  if (op->dtype.is_float()) return builder_.CreateFDiv(a, b);
  b = guard_divisor(op->b, b);
  return op->dtype.is_int() ? builder_.CreateSDiv(a, b) : builder_.CreateUDiv(a, b);
}

llvm::Value* CodeGenLLVM::visit_FloorDiv(const FloorDivNode* op, const PrimExpr&) {
  return emit_floor_div_mod(op->a, op->b, op->dtype, true);
}

llvm::Value* CodeGenLLVM::visit_FloorMod(const FloorModNode* op, const PrimExpr&) {
  return emit_floor_div_mod(op->a, op->b, op->dtype, false);
}

llvm::Value* CodeGenLLVM::emit_floor_div_mod(const PrimExpr& a, const PrimExpr& b, DataType t,
                                             bool is_div) {
  llvm::Value *x = emit_expr(a), *y = emit_expr(b);
  llvm::Type* ty = x->getType();
  if (t.is_float()) {
    llvm::Value* q =
        builder_.CreateUnaryIntrinsic(llvm::Intrinsic::floor, builder_.CreateFDiv(x, y));
    return is_div ? q : builder_.CreateFSub(x, builder_.CreateFMul(q, y));
  }
  y = guard_divisor(b, y);
  if (t.is_uint() || t.is_bool())
    return is_div ? builder_.CreateUDiv(x, y) : builder_.CreateURem(x, y);
  const int64_t* c = as_const_int(b);
  if (c != nullptr && *c > 0 && std::has_single_bit(static_cast<uint64_t>(*c))) {
    // Arithmetic shift and mask are exact floor division/modulo by a power of two.
    if (is_div) {
      return builder_.CreateAShr(
          x, llvm::ConstantInt::get(ty, std::countr_zero(static_cast<uint64_t>(*c))));
    }
    return builder_.CreateAnd(x, llvm::ConstantInt::get(ty, *c - 1));
  }
  if (is_non_negative(a) && is_non_negative(b)) {
    return is_div ? builder_.CreateUDiv(x, y) : builder_.CreateURem(x, y);
  }
  // Truncating division rounds toward zero; floor differs by one when the remainder is nonzero
  // and its sign differs from the divisor's.
  llvm::Value* q = builder_.CreateSDiv(x, y);
  llvm::Value* r = builder_.CreateSRem(x, y);
  llvm::Value* zero = llvm::Constant::getNullValue(ty);
  llvm::Value* fix = builder_.CreateAnd(builder_.CreateICmpNE(r, zero),
                                        builder_.CreateICmpSLT(builder_.CreateXor(r, y), zero));
  if (is_div) return builder_.CreateSub(q, builder_.CreateZExt(fix, ty));
  return builder_.CreateAdd(r, builder_.CreateSelect(fix, y, zero));
}

llvm::Value* CodeGenLLVM::emit_min_max(const PrimExpr& a, const PrimExpr& b, bool is_min) {
  llvm::Value *x = emit_expr(a), *y = emit_expr(b);
  DataType t = a.dtype();
  if (t.is_float()) {
    // A compare-and-select, not minnum/maxnum: it maps to x86 min/max instructions exactly.
    llvm::Value* pick_x = is_min ? builder_.CreateFCmpOLT(x, y) : builder_.CreateFCmpOGT(x, y);
    return builder_.CreateSelect(pick_x, x, y);
  }
  llvm::Intrinsic::ID id = t.is_int() ? (is_min ? llvm::Intrinsic::smin : llvm::Intrinsic::smax)
                                      : (is_min ? llvm::Intrinsic::umin : llvm::Intrinsic::umax);
  return builder_.CreateBinaryIntrinsic(id, x, y);
}

llvm::Value* CodeGenLLVM::visit_Min(const MinNode* op, const PrimExpr&) {
  return emit_min_max(op->a, op->b, true);
}

llvm::Value* CodeGenLLVM::visit_Max(const MaxNode* op, const PrimExpr&) {
  return emit_min_max(op->a, op->b, false);
}

llvm::Value* CodeGenLLVM::emit_compare(const PrimExpr& a, const PrimExpr& b,
                                       llvm::CmpInst::Predicate signed_p,
                                       llvm::CmpInst::Predicate unsigned_p,
                                       llvm::CmpInst::Predicate float_p) {
  llvm::Value *x = emit_expr(a), *y = emit_expr(b);
  DataType t = a.dtype();
  if (t.is_float()) return builder_.CreateFCmp(float_p, x, y);
  return builder_.CreateICmp(t.is_int() ? signed_p : unsigned_p, x, y);
}

#define TESSEL_DEFINE_COMPARE(Name, S, U, F)                                                 \
  llvm::Value* CodeGenLLVM::visit_##Name(const Name##Node* op, const PrimExpr&) {            \
    return emit_compare(op->a, op->b, llvm::CmpInst::S, llvm::CmpInst::U, llvm::CmpInst::F); \
  }
TESSEL_DEFINE_COMPARE(EQ, ICMP_EQ, ICMP_EQ, FCMP_OEQ)
TESSEL_DEFINE_COMPARE(NE, ICMP_NE, ICMP_NE, FCMP_UNE)
TESSEL_DEFINE_COMPARE(LT, ICMP_SLT, ICMP_ULT, FCMP_OLT)
TESSEL_DEFINE_COMPARE(LE, ICMP_SLE, ICMP_ULE, FCMP_OLE)
TESSEL_DEFINE_COMPARE(GT, ICMP_SGT, ICMP_UGT, FCMP_OGT)
TESSEL_DEFINE_COMPARE(GE, ICMP_SGE, ICMP_UGE, FCMP_OGE)
#undef TESSEL_DEFINE_COMPARE

llvm::Value* CodeGenLLVM::visit_And(const AndNode* op, const PrimExpr&) {
  return builder_.CreateAnd(emit_expr(op->a), emit_expr(op->b));
}

llvm::Value* CodeGenLLVM::visit_Or(const OrNode* op, const PrimExpr&) {
  return builder_.CreateOr(emit_expr(op->a), emit_expr(op->b));
}

llvm::Value* CodeGenLLVM::visit_Not(const NotNode* op, const PrimExpr&) {
  return builder_.CreateNot(emit_expr(op->a));
}

llvm::Value* CodeGenLLVM::visit_Select(const SelectNode* op, const PrimExpr&) {
  llvm::Value* cond = emit_expr(op->condition);
  return builder_.CreateSelect(cond, emit_expr(op->true_value), emit_expr(op->false_value));
}

llvm::Value* CodeGenLLVM::visit_IfThenElseExpr(const IfThenElseExprNode* op, const PrimExpr&) {
  bool guard_true = may_fault(op->true_value), guard_false = may_fault(op->false_value);
  llvm::Value* cond = emit_expr(op->condition);
  if (!guard_true && !guard_false) {  // computing a value that is not taken is harmless
    return builder_.CreateSelect(cond, emit_expr(op->true_value), emit_expr(op->false_value));
  }
  if (op->condition.dtype().is_scalar()) {
    return emit_branches(op->condition, cond, op->true_value, op->false_value);
  }
  llvm::Value* t = guard_true ? emit_masked(op->true_value, cond) : emit_expr(op->true_value);
  llvm::Value* f = guard_false ? emit_masked(op->false_value, builder_.CreateNot(cond))
                               : emit_expr(op->false_value);
  return builder_.CreateSelect(cond, t, f);
}

llvm::Value* CodeGenLLVM::emit_branches(const PrimExpr& cond_expr, llvm::Value* cond,
                                        const PrimExpr& t, const PrimExpr& f) {
  auto* then_bb = llvm::BasicBlock::Create(ctx_, "ite.then", function_);
  auto* else_bb = llvm::BasicBlock::Create(ctx_, "ite.else", function_);
  auto* end_bb = llvm::BasicBlock::Create(ctx_, "ite.end", function_);
  builder_.CreateCondBr(cond, then_bb, else_bb, branch_weights(cond_expr));
  builder_.SetInsertPoint(then_bb);
  llvm::Value* tv = emit_expr(t);
  llvm::BasicBlock* then_end = builder_.GetInsertBlock();  // the value may have branched too
  builder_.CreateBr(end_bb);
  builder_.SetInsertPoint(else_bb);
  llvm::Value* fv = emit_expr(f);
  llvm::BasicBlock* else_end = builder_.GetInsertBlock();
  builder_.CreateBr(end_bb);
  builder_.SetInsertPoint(end_bb);
  llvm::PHINode* phi = builder_.CreatePHI(tv->getType(), 2);
  phi->addIncoming(tv, then_end);
  phi->addIncoming(fv, else_end);
  return phi;
}

llvm::Value* CodeGenLLVM::emit_masked(const PrimExpr& e, llvm::Value* lanes) {
  llvm::Value* outer = mask_;
  mask_ = outer != nullptr ? builder_.CreateAnd(outer, lanes) : lanes;
  llvm::Value* v = emit_expr(e);
  mask_ = outer;
  return v;
}

llvm::Value* CodeGenLLVM::lane_mask(int lanes) {
  auto* type = llvm::cast<llvm::FixedVectorType>(mask_->getType());
  if (static_cast<int>(type->getNumElements()) == lanes) return mask_;
  TESSEL_ICHECK(lanes == 1) << "a " << lanes << "-lane value under a " << type->getNumElements()
                            << "-lane if_then_else";
  return builder_.CreateOrReduce(mask_);
}

llvm::Value* CodeGenLLVM::guard_divisor(const PrimExpr& b, llvm::Value* y) {
  if (mask_ == nullptr || !is_faulting_divisor(b)) return y;
  return builder_.CreateSelect(lane_mask(b.dtype().lanes()), y,
                               llvm::ConstantInt::get(y->getType(), 1));
}

llvm::Value* CodeGenLLVM::visit_Ramp(const RampNode* op, const PrimExpr&) {
  DataType elem = op->dtype.element_of();
  std::vector<llvm::Constant*> offsets;
  for (int i = 0; i < op->lanes; ++i) {
    offsets.push_back(llvm::ConstantInt::get(llvm_type(elem), i));
  }
  llvm::Value* base = builder_.CreateVectorSplat(op->lanes, emit_expr(op->base));
  llvm::Value* stride = builder_.CreateVectorSplat(op->lanes, emit_expr(op->stride));
  llvm::Value* steps = builder_.CreateMul(stride, llvm::ConstantVector::get(offsets));
  return elem.is_int() ? builder_.CreateNSWAdd(base, steps) : builder_.CreateAdd(base, steps);
}

llvm::Value* CodeGenLLVM::visit_Broadcast(const BroadcastNode* op, const PrimExpr&) {
  return builder_.CreateVectorSplat(op->lanes, emit_expr(op->value));
}

llvm::Value* CodeGenLLVM::visit_Let(const LetNode* op, const PrimExpr&) {
  bind(op->var, emit_expr(op->value));
  if (is_non_negative(op->value)) mark_non_negative(op->var);
  llvm::Value* result = emit_expr(op->body);
  unbind(op->var);
  return result;
}

llvm::Value* CodeGenLLVM::visit_Call(const CallNode* op, const PrimExpr&) {
  return emit_intrinsic(op);
}

// ---------------- memory ----------------

llvm::Align CodeGenLLVM::known_alignment(const PrimExpr& index, int elem_bytes) const {
  int64_t bytes = static_cast<int64_t>(elem_bytes) << known_trailing_zeros(index);
  return llvm::Align(std::min<int64_t>(kBufferAlign, bytes));
}

namespace {

// `index` as `rest + constant` (rest undefined when it is all constant): the constant terms of
// a sum, added last.
std::pair<PrimExpr, int64_t> split_constant_offset(const PrimExpr& index) {
  if (const int64_t* c = as_const_int(index)) return {PrimExpr(), *c};
  if (const auto* add = index.as<AddNode>()) {
    auto [a, ca] = split_constant_offset(add->a);
    auto [b, cb] = split_constant_offset(add->b);
    if (!a.defined() || !b.defined()) return {a.defined() ? a : b, ca + cb};
    if (ca + cb != 0) return {a + b, ca + cb};
  }
  if (const auto* sub = index.as<SubNode>()) {
    if (const int64_t* c = as_const_int(sub->b)) {
      auto [a, ca] = split_constant_offset(sub->a);
      if (a.defined()) return {a, ca - *c};
    }
  }
  return {index, 0};
}

}  // namespace

CodeGenLLVM::Address CodeGenLLVM::address_of(const Buffer& buffer,
                                             const std::vector<PrimExpr>& indices, int lanes,
                                             bool in_bounds) {
  TESSEL_ICHECK(indices.size() == 1) << "buffer " << buffer->name << " is accessed with "
                                     << indices.size() << " indices; codegen needs 1-d accesses";
  llvm::Value* base = visit_Var(buffer->data.get(), buffer->data);
  llvm::Type* elem = memory_type(buffer->dtype.element_of());
  int elem_bytes = buffer->dtype.bytes();
  const PrimExpr& index = indices[0];
  // A scalar offset's constant terms are added after its 32-bit sum is widened, so that they
  // fold into the address (`64(%r, %i, 4)`) and the accesses of a tile that differ by them share
  // one index register: widening `x + 7` computed in 32 bits costs an add and a sign extension
  // per access, which in a 1x1 conv's reduction were two integer ops beside each FMA pair.
  auto gep = [&](const PrimExpr& offset) {
    auto [rest, constant] = offset.dtype().is_scalar() ? split_constant_offset(offset)
                                                       : std::pair<PrimExpr, int64_t>{offset, 0};
    llvm::Value* i = constant == 0 || !rest.defined()
                         ? emit_expr(offset)
                         : builder_.CreateNSWAdd(emit_i64(rest), const_i64(constant));
    return in_bounds ? builder_.CreateInBoundsGEP(elem, base, i)
                     : builder_.CreateGEP(elem, base, i);
  };
  if (lanes == 1) return {gep(index), false, known_alignment(index, elem_bytes)};
  if (const auto* ramp = index.as<RampNode>(); ramp != nullptr && is_one(ramp->stride)) {
    return {gep(ramp->base), false, known_alignment(ramp->base, elem_bytes)};
  }
  // Any other vector index: a vector of lane addresses for gather/scatter.
  return {gep(index), true, llvm::Align(elem_bytes)};
}

// A vector of every s-th element (a strided pool or conv reading its input): the span from the
// first to the last lane in one masked load, then the lanes picked out by a shuffle (a gather
// costs a load per lane). Only up to kMaxStridedLoad, where the span stays a few vectors; only the
// elements the lanes cover are read, so the load is as in bounds as the gather was.
constexpr int64_t kMaxStridedLoad = 4;

llvm::Value* CodeGenLLVM::strided_load(const BufferLoadNode* op) {
  const auto* ramp = op->indices.size() == 1 ? op->indices[0].as<RampNode>() : nullptr;
  const int64_t* stride = ramp ? as_const_int(ramp->stride) : nullptr;
  if (!stride || *stride < 2 || *stride > kMaxStridedLoad || op->dtype.is_bool()) return nullptr;
  int lanes = op->dtype.lanes();
  Address addr = address_of(op->buffer, {ramp->base}, 1, true);
  llvm::Type* elem = memory_type(op->dtype.element_of());
  // s whole vectors, the lanes past the last one read masked off: LLVM splits an odd-length
  // load (31 floats) into pieces and the shuffle of it into scalar moves.
  auto span = static_cast<unsigned>((lanes - 1) * *stride + 1);
  auto width = static_cast<unsigned>(lanes * *stride);
  std::vector<llvm::Constant*> read;
  for (unsigned k = 0; k < width; ++k) read.push_back(builder_.getInt1(k < span));
  auto* type = llvm::FixedVectorType::get(elem, width);
  llvm::Value* wide =
      builder_.CreateMaskedLoad(type, addr.ptr, addr.align, llvm::ConstantVector::get(read));
  std::vector<int> picks;
  for (int lane = 0; lane < lanes; ++lane) picks.push_back(static_cast<int>(lane * *stride));
  return builder_.CreateShuffleVector(wide, picks);
}

llvm::Value* CodeGenLLVM::visit_BufferLoad(const BufferLoadNode* op, const PrimExpr&) {
  int lanes = op->dtype.lanes();
  if (mask_ == nullptr && lanes > 1) {
    if (llvm::Value* v = strided_load(op)) return v;
  }
  Address addr = address_of(op->buffer, op->indices, lanes, mask_ == nullptr);
  llvm::Type* type = memory_type(op->dtype);
  llvm::Value* v;
  if (mask_ != nullptr) {
    v = masked_load(type, addr, lane_mask(lanes));
  } else if (addr.gather) {
    v = builder_.CreateMaskedGather(type, addr.ptr, addr.align);
  } else {
    v = builder_.CreateAlignedLoad(type, addr.ptr, addr.align);
  }
  return op->dtype.is_bool() ? builder_.CreateTrunc(v, llvm_type(op->dtype)) : v;
}

// Inactive lanes read nothing and give zero; a scalar is read when any lane is active.
llvm::Value* CodeGenLLVM::masked_load(llvm::Type* type, const Address& addr, llvm::Value* mask) {
  if (!type->isVectorTy()) {
    auto* one_lane = llvm::FixedVectorType::get(type, 1);
    llvm::Value* v = masked_load(one_lane, addr, builder_.CreateVectorSplat(1, mask));
    return builder_.CreateExtractElement(v, uint64_t{0});
  }
  llvm::Value* zero = llvm::Constant::getNullValue(type);
  if (addr.gather) return builder_.CreateMaskedGather(type, addr.ptr, addr.align, mask, zero);
  return builder_.CreateMaskedLoad(type, addr.ptr, addr.align, mask, zero);
}

void CodeGenLLVM::emit_store(const BufferStoreNode* op) {
  DataType t = op->value.dtype();
  Address addr = address_of(op->buffer, op->indices, t.lanes(), true);
  llvm::Value* v = emit_expr(op->value);
  if (t.is_bool()) v = builder_.CreateZExt(v, memory_type(t));
  if (addr.gather) {
    builder_.CreateMaskedScatter(v, addr.ptr, addr.align);
  } else {
    builder_.CreateAlignedStore(v, addr.ptr, addr.align);
  }
}

// ---------------- statements ----------------

void CodeGenLLVM::emit_stmt(const Stmt& s) {
  switch (s->kind()) {
    case NodeKind::LetStmt: {
      const auto* op = s.as<LetStmtNode>();
      bind(op->var, emit_expr(op->value));
      if (is_non_negative(op->value)) mark_non_negative(op->var);
      emit_stmt(op->body);
      unbind(op->var);
      return;
    }
    case NodeKind::AssertStmt:
      return emit_assert(s.as<AssertStmtNode>());
    case NodeKind::Evaluate: {
      const auto* op = s.as<EvaluateNode>();
      if (!op->value.is<IntImmNode>()) emit_expr(op->value);
      return;
    }
    case NodeKind::SeqStmt:
      for (const Stmt& child : s.as<SeqStmtNode>()->seq) emit_stmt(child);
      return;
    case NodeKind::IfThenElse:
      return emit_if(s.as<IfThenElseNode>());
    case NodeKind::For:
      return emit_for(s.as<ForNode>());
    case NodeKind::BufferStore:
      return emit_store(s.as<BufferStoreNode>());
    case NodeKind::Allocate:
      return emit_allocate(s.as<AllocateNode>());
      TESSEL_NON_STMT_KINDS(TESSEL_KIND_CASE)
      TESSEL_UNREACHABLE(std::string("not a statement: ") + node_kind_name(s->kind()));
  }
  fail_non_ir_node(s->kind(), "codegen");
}

void CodeGenLLVM::emit_if(const IfThenElseNode* op) {
  llvm::Value* cond = emit_expr(op->condition);
  auto* then_bb = llvm::BasicBlock::Create(ctx_, "if.then", function_);
  auto* else_bb =
      op->else_case.defined() ? llvm::BasicBlock::Create(ctx_, "if.else", function_) : nullptr;
  auto* end_bb = llvm::BasicBlock::Create(ctx_, "if.end", function_);
  builder_.CreateCondBr(cond, then_bb, else_bb ? else_bb : end_bb, branch_weights(op->condition));
  builder_.SetInsertPoint(then_bb);
  emit_stmt(op->then_case);
  builder_.CreateBr(end_bb);
  if (else_bb != nullptr) {
    builder_.SetInsertPoint(else_bb);
    emit_stmt(op->else_case);
    builder_.CreateBr(end_bb);
  }
  builder_.SetInsertPoint(end_bb);
}

llvm::MDNode* CodeGenLLVM::branch_weights(const PrimExpr& cond) {
  if (likely_condition(cond) == nullptr) return nullptr;
  return llvm::MDBuilder(ctx_).createLikelyBranchWeights();
}

void CodeGenLLVM::emit_for(const ForNode* op) {
  std::vector<llvm::Metadata*> properties;
  switch (op->kind) {
    case ForKind::kParallel:
      return emit_parallel_for(op);
    case ForKind::kVectorized:
      TESSEL_UNREACHABLE("vectorized loop over " + op->loop_var->name_hint +
                         " reached codegen; vectorize_loops must lower it to Ramp/Broadcast");
    case ForKind::kThreadBinding:
      TESSEL_UNREACHABLE("thread-bound loop over " + op->loop_var->name_hint +
                         " reached the CPU code generator");
    case ForKind::kUnrolled: {
      const char* hint =
          as_const_int(op->extent) ? "llvm.loop.unroll.full" : "llvm.loop.unroll.enable";
      properties.push_back(llvm::MDNode::get(ctx_, {llvm::MDString::get(ctx_, hint)}));
      break;
    }
    case ForKind::kSerial:
      break;
  }
  emit_serial_for(op, properties);
}

void CodeGenLLVM::emit_serial_for(const ForNode* op,
                                  const std::vector<llvm::Metadata*>& properties) {
  DataType t = op->loop_var.dtype();
  llvm::Value* begin = cast_value(op->min.dtype(), t, emit_expr(op->min));
  llvm::Value* extent = cast_value(op->extent.dtype(), t, emit_expr(op->extent));
  emit_loop(op->loop_var, begin, builder_.CreateNSWAdd(begin, extent), is_non_negative(op->min),
            op->body, properties);
}

void CodeGenLLVM::emit_loop(const Var& var, llvm::Value* begin, llvm::Value* end, bool non_negative,
                            const Stmt& body, const std::vector<llvm::Metadata*>& properties) {
  llvm::BasicBlock* preheader = builder_.GetInsertBlock();
  auto* head = llvm::BasicBlock::Create(ctx_, "for.head", function_);
  auto* body_bb = llvm::BasicBlock::Create(ctx_, "for.body", function_);
  auto* exit = llvm::BasicBlock::Create(ctx_, "for.end", function_);
  builder_.CreateBr(head);
  builder_.SetInsertPoint(head);
  llvm::PHINode* i = builder_.CreatePHI(begin->getType(), 2, var->name_hint);
  i->addIncoming(begin, preheader);
  builder_.CreateCondBr(builder_.CreateICmpSLT(i, end), body_bb, exit);

  builder_.SetInsertPoint(body_bb);
  bind(var, i);
  if (non_negative) mark_non_negative(var);
  emit_stmt(body);
  unbind(var);
  llvm::Value* next = builder_.CreateNSWAdd(i, llvm::ConstantInt::get(begin->getType(), 1));
  llvm::BranchInst* back = builder_.CreateBr(head);
  i->addIncoming(next, builder_.GetInsertBlock());
  if (!properties.empty()) {
    std::vector<llvm::Metadata*> ops{nullptr};
    ops.insert(ops.end(), properties.begin(), properties.end());
    llvm::MDNode* loop_id = llvm::MDNode::getDistinct(ctx_, ops);
    loop_id->replaceOperandWith(0, loop_id);
    back->setMetadata(llvm::LLVMContext::MD_loop, loop_id);
  }
  builder_.SetInsertPoint(exit);
}

}  // namespace tessel::codegen
