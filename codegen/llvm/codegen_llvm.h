// CodeGenLLVM: the common translation of lowered tir (1-d buffer accesses, Ramp/Broadcast vectors,
// Serial/Unrolled loops) into LLVM IR. Memory is keyed by a buffer's data var, so every Buffer
// sharing that var reaches the same pointer. Floats get only the `contract` fast-math flag (mul+add
// may fuse into FMA; no reassociation, no finite-math assumptions). Subclasses provide the host ABI
// and the statements that need runtime support (parallel loops, Allocate, AssertStmt).
#pragma once

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <functional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "codegen/llvm/float_math.h"
#include "codegen/target.h"
#include "ir/functor.h"

namespace tessel::codegen {

class CodeGenLLVM : public ExprFunctor<llvm::Value*> {
 public:
  CodeGenLLVM(llvm::Module& module, const Target& target);

 protected:
  // Every buffer's base pointer is at least this aligned (arguments are checked, allocations
  // are made so).
  static constexpr int kBufferAlign = 64;

  // Emits an internal function "prefix params..., tir vars..." returning i32 (0 on success).
  // Handle vars become `noalias align 64` pointers. `emit_body` runs with the insert point in the
  // entry block and the vars bound; it must leave the insert point where `ret 0` belongs. The
  // caller's insert point and bindings are restored afterwards.
  llvm::Function* emit_function(const std::string& name, const std::vector<llvm::Type*>& prefix,
                                const std::vector<Var>& vars,
                                const std::function<void(llvm::Function*)>& emit_body);
  // The vars used by `s` that are bound at this point, in order of first use.
  std::vector<Var> free_vars(const Stmt& s) const;

  // Statements.
  void emit_stmt(const Stmt& s);
  // for (var = begin; var < end; ++var) body, with optional llvm.loop metadata properties.
  void emit_loop(const Var& var, llvm::Value* begin, llvm::Value* end, bool non_negative,
                 const Stmt& body, const std::vector<llvm::Metadata*>& loop_properties);
  void emit_serial_for(const ForNode* op, const std::vector<llvm::Metadata*>& loop_properties);
  virtual void emit_parallel_for(const ForNode* op) = 0;
  virtual void emit_allocate(const AllocateNode* op) = 0;
  virtual void emit_assert(const AssertStmtNode* op) = 0;

  // Var bindings (scoped: unbind when the binder's scope ends).
  void bind(const Var& var, llvm::Value* value);
  void unbind(const Var& var);
  bool is_bound(const Var& var) const { return vars_.count(var.get()) > 0; }
  void unbind_all();
  // A non-negative int var (loop var from a non-negative min, shape var) enables cheaper division.
  void mark_non_negative(const Var& var) { non_negative_.insert(var.get()); }
  bool is_non_negative(const PrimExpr& e) const;

  // Types and constants.
  llvm::Type* llvm_type(DataType t) const;
  llvm::Type* memory_type(DataType t) const;  // bool lives in memory as i8
  llvm::Value* const_i32(int64_t v) const;
  llvm::Value* const_i64(int64_t v) const;
  llvm::Value* cast_value(DataType from, DataType to, llvm::Value* v);
  llvm::Value* emit_expr(const PrimExpr& e) { return visit_expr(e); }
  llvm::Value* emit_i64(const PrimExpr& e);
  // An alloca in the current function's entry block (so loops do not grow the stack).
  llvm::AllocaInst* entry_alloca(llvm::Type* type, llvm::Value* count, int align);
  // Applies target-cpu/features and vector width to a function.
  void set_target_attributes(llvm::Function* fn) const;

  llvm::Module& module_;
  llvm::LLVMContext& ctx_;
  llvm::IRBuilder<> builder_;
  Target target_;
  int vector_bits_;
  // What the inline float math may use of the target (read once: each query builds LLVM's
  // subtarget info).
  FloatMathIsa float_math_isa_;
  llvm::Function* function_ = nullptr;  // the function being emitted

  // Expressions.
#define TESSEL_DECLARE_VISIT(N) \
  llvm::Value* visit_##N(const N##Node* op, const PrimExpr& self) override;
  TESSEL_EXPR_KINDS(TESSEL_DECLARE_VISIT)
#undef TESSEL_DECLARE_VISIT

 private:
  llvm::Value* emit_floor_div_mod(const PrimExpr& a, const PrimExpr& b, DataType t, bool is_div);
  llvm::Value* emit_compare(const PrimExpr& a, const PrimExpr& b, llvm::CmpInst::Predicate signed_p,
                            llvm::CmpInst::Predicate unsigned_p, llvm::CmpInst::Predicate float_p);
  llvm::Value* emit_min_max(const PrimExpr& a, const PrimExpr& b, bool is_min);
  // Intrinsic calls (codegen_llvm_intrin.cc).
  llvm::Value* emit_intrinsic(const CallNode* op);
  llvm::Value* emit_libm_call(const std::string& name, DataType t, std::vector<llvm::Value*> args);

  // Buffer access: a scalar or contiguous vector pointer, or a vector of pointers to gather from.
  // `in_bounds` marks the address computation inbounds (not for a masked access, whose masked-off
  // lanes may point outside the buffer).
  struct Address {
    llvm::Value* ptr;
    bool gather;
    llvm::Align align;
  };
  Address address_of(const Buffer& buffer, const std::vector<PrimExpr>& indices, int lanes,
                     bool in_bounds);
  llvm::Value* masked_load(llvm::Type* type, const Address& addr, llvm::Value* mask);
  // A load of a constant-stride ramp as one wide load and a shuffle; nullptr when it is not one.
  llvm::Value* strided_load(const BufferLoadNode* op);
  llvm::Align known_alignment(const PrimExpr& index, int elem_bytes) const;
  void emit_store(const BufferStoreNode* op);
  void emit_if(const IfThenElseNode* op);
  // Branch weights for a `likely` condition, else nullptr.
  llvm::MDNode* branch_weights(const PrimExpr& cond);

  // Lazy if_then_else (see IfThenElseExprNode): a branch and a phi for a scalar condition; for a
  // vector one, each value is emitted with `mask_` narrowed to the lanes that take it.
  llvm::Value* emit_branches(const PrimExpr& cond_expr, llvm::Value* cond, const PrimExpr& t,
                             const PrimExpr& f);
  llvm::Value* emit_masked(const PrimExpr& e, llvm::Value* lanes);
  // The active mask for a value of `lanes` lanes (a scalar: whether any lane is active).
  llvm::Value* lane_mask(int lanes);
  // Under a mask, inactive lanes divide by one: their divisor may come from a load not made.
  llvm::Value* guard_divisor(const PrimExpr& b, llvm::Value* y);
  void emit_for(const ForNode* op);

  std::unordered_map<const VarNode*, llvm::Value*> vars_;
  std::unordered_set<const VarNode*> non_negative_;
  // While emitting a value of a vector if_then_else: the lanes that take it (i1 vector), else null.
  // Loads are masked with it, so lanes whose condition fails read no memory.
  llvm::Value* mask_ = nullptr;
};

}  // namespace tessel::codegen
