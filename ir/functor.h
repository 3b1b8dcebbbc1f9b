// Dispatch over node kinds with a switch: ExprFunctor<R> for value-returning analyses and code
// generators, IRVisitor for read-only walks, IRMutator for rewrites (unchanged input is returned
// as the same handle, so sharing is preserved). A kind ir does not know (te's) goes to
// visit_non_ir_expr / mutate_non_ir_expr, which te's functors override (te/functor.h); here it is
// a Tessel bug.
#pragma once

#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ir/error.h"
#include "ir/expr.h"
#include "ir/stmt.h"

namespace tessel {

template <class R, class... Args>
class ExprFunctor {
 public:
  virtual ~ExprFunctor() = default;
  virtual R visit_expr(const PrimExpr& e, Args... args) {
    switch (e->kind()) {
#define TESSEL_DISPATCH(N) \
  case NodeKind::N:        \
    return visit_##N(static_cast<const N##Node*>(static_cast<const Node*>(e.get())), e, args...);
      TESSEL_EXPR_KINDS(TESSEL_DISPATCH)
#undef TESSEL_DISPATCH
      TESSEL_NON_EXPR_KINDS(TESSEL_KIND_CASE)
      TESSEL_UNREACHABLE(std::string("not an expression: ") + node_kind_name(e->kind()));
    }
    return visit_non_ir_expr(e, args...);
  }

 protected:
  virtual R visit_non_ir_expr(const PrimExpr& e, Args...) {
    fail_non_ir_node(e->kind(), "an ir ExprFunctor");
  }
  virtual R visit_default(const PrimExpr& e, Args...) {
    TESSEL_UNREACHABLE(std::string("unhandled expression kind ") + node_kind_name(e->kind()));
  }
#define TESSEL_DEFAULT(N)                                                \
  virtual R visit_##N(const N##Node*, const PrimExpr& e, Args... args) { \
    return visit_default(e, args...);                                    \
  }
  TESSEL_EXPR_KINDS(TESSEL_DEFAULT)
#undef TESSEL_DEFAULT
};

class IRVisitor {
 public:
  virtual ~IRVisitor() = default;
  virtual void visit_expr(const PrimExpr& e);
  virtual void visit_stmt(const Stmt& s);

 protected:
  virtual void visit_non_ir_expr(const PrimExpr& e);
#define TESSEL_VISIT_EXPR(N) virtual void visit_##N(const N##Node* op, const PrimExpr& self);
  TESSEL_EXPR_KINDS(TESSEL_VISIT_EXPR)
#undef TESSEL_VISIT_EXPR
#define TESSEL_VISIT_STMT(N) virtual void visit_##N(const N##Node* op, const Stmt& self);
  TESSEL_STMT_KINDS(TESSEL_VISIT_STMT)
#undef TESSEL_VISIT_STMT
};

class IRMutator {
 public:
  virtual ~IRMutator() = default;
  virtual PrimExpr mutate_expr(const PrimExpr& e);
  virtual Stmt mutate_stmt(const Stmt& s);

 protected:
  // Mutates each element; returns true when any changed.
  bool mutate_exprs(const std::vector<PrimExpr>& in, std::vector<PrimExpr>* out);
  Buffer mutate_buffer_shape(const Buffer& b);

  virtual PrimExpr mutate_non_ir_expr(const PrimExpr& e);
#define TESSEL_MUTATE_EXPR(N) virtual PrimExpr mutate_##N(const N##Node* op, const PrimExpr& self);
  TESSEL_EXPR_KINDS(TESSEL_MUTATE_EXPR)
#undef TESSEL_MUTATE_EXPR
#define TESSEL_MUTATE_STMT(N) virtual Stmt mutate_##N(const N##Node* op, const Stmt& self);
  TESSEL_STMT_KINDS(TESSEL_MUTATE_STMT)
#undef TESSEL_MUTATE_STMT
};

// Replaces vars by expressions (keyed by VarNode*). `Mutator` is IRMutator, or a mutator that
// also walks the nodes of a layer above (te::TeMutator).
template <class Mutator>
class VarSubstituter : public Mutator {
 public:
  explicit VarSubstituter(const std::vector<std::pair<Var, PrimExpr>>& map) {
    for (const auto& [v, e] : map) vars_[v.get()] = e;
  }

 protected:
  PrimExpr mutate_Var(const VarNode* op, const PrimExpr& self) override {
    auto it = vars_.find(op);
    return it == vars_.end() ? self : it->second;
  }

  std::unordered_map<const VarNode*, PrimExpr> vars_;
};

PrimExpr substitute(const PrimExpr& e, const std::vector<std::pair<Var, PrimExpr>>& map);
Stmt substitute(const Stmt& s, const std::vector<std::pair<Var, PrimExpr>>& map);

// True when `e` mentions any of `vars`.
bool uses_var(const PrimExpr& e, const std::vector<const VarNode*>& vars);

}  // namespace tessel
