#include "tir/transforms/fresh_vars.h"

#include <unordered_map>

#include "ir/functor.h"

namespace tessel::tir {
namespace {

class FreshVarCopier : public VarSubstituter<IRMutator> {
 public:
  using VarSubstituter::VarSubstituter;

 protected:
  PrimExpr mutate_Let(const LetNode* op, const PrimExpr&) override {
    PrimExpr value = mutate_expr(op->value);
    Var v = fresh(op->var);
    return LetNode::make(v, value, mutate_expr(op->body));
  }
  PrimExpr mutate_BufferLoad(const BufferLoadNode* op, const PrimExpr&) override {
    std::vector<PrimExpr> idx;
    mutate_exprs(op->indices, &idx);
    return BufferLoadNode::make(remap(op->buffer), idx);
  }
  Stmt mutate_LetStmt(const LetStmtNode* op, const Stmt&) override {
    PrimExpr value = mutate_expr(op->value);
    Var v = fresh(op->var);
    return LetStmtNode::make(v, value, mutate_stmt(op->body));
  }
  Stmt mutate_For(const ForNode* op, const Stmt&) override {
    PrimExpr mn = mutate_expr(op->min), ext = mutate_expr(op->extent);
    Var v = fresh(op->loop_var);
    return ForNode::make(v, mn, ext, op->kind, mutate_stmt(op->body), op->thread_tag);
  }
  Stmt mutate_BufferStore(const BufferStoreNode* op, const Stmt&) override {
    std::vector<PrimExpr> idx;
    mutate_exprs(op->indices, &idx);
    return BufferStoreNode::make(remap(op->buffer), mutate_expr(op->value), idx);
  }
  Stmt mutate_Allocate(const AllocateNode* op, const Stmt&) override {
    fresh(op->buffer->data);
    Buffer b = remap(op->buffer);
    return AllocateNode::make(b, mutate_stmt(op->body));
  }

 private:
  Var fresh(const Var& v) {
    Var n(v->name_hint, v.dtype());
    vars_[v.get()] = n;
    return n;
  }
  // A buffer whose data var or shape mentions a renamed var becomes a new buffer; every access
  // to the same old buffer maps to the same new one.
  Buffer remap(const Buffer& b) {
    auto it = buffers_.find(b.get());
    if (it != buffers_.end()) return it->second;
    PrimExpr data = mutate_expr(b->data);
    std::vector<PrimExpr> shape, strides;
    bool changed = mutate_exprs(b->shape, &shape);
    changed |= mutate_exprs(b->strides, &strides);
    Buffer out = b;
    if (changed || !data.same_as(b->data)) {
      const auto* dv = data.as<VarNode>();
      TESSEL_ICHECK(dv) << "buffer " << b->name << ": data var substituted by a non-var";
      out =
          make_node<BufferNode>(Var(Ref<VarNode>(dv)), b->dtype, shape, strides, b->name, b->scope);
    }
    buffers_[b.get()] = out;
    return out;
  }

  std::unordered_map<const BufferNode*, Buffer> buffers_;
};

}  // namespace

Stmt copy_with_fresh_vars(const Stmt& s, const std::vector<std::pair<Var, PrimExpr>>& subst) {
  return FreshVarCopier(subst).mutate_stmt(s);
}

}  // namespace tessel::tir
