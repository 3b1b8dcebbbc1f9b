// Dispatch over node kinds with a switch: ExprFunctor<R> for value-returning analyses and code
// generators, IRVisitor for read-only walks, IRMutator for rewrites (unchanged input is returned
// as the same handle, so sharing is preserved).
#pragma once

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
      default:
        TESSEL_UNREACHABLE(std::string("not an expression: ") + node_kind_name(e->kind()));
    }
  }

 protected:
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

#define TESSEL_MUTATE_EXPR(N) virtual PrimExpr mutate_##N(const N##Node* op, const PrimExpr& self);
  TESSEL_EXPR_KINDS(TESSEL_MUTATE_EXPR)
#undef TESSEL_MUTATE_EXPR
#define TESSEL_MUTATE_STMT(N) virtual Stmt mutate_##N(const N##Node* op, const Stmt& self);
  TESSEL_STMT_KINDS(TESSEL_MUTATE_STMT)
#undef TESSEL_MUTATE_STMT
};

// Replaces vars by expressions (keyed by VarNode*).
PrimExpr substitute(const PrimExpr& e, const std::vector<std::pair<Var, PrimExpr>>& map);
Stmt substitute(const Stmt& s, const std::vector<std::pair<Var, PrimExpr>>& map);

// True when `e` mentions any of `vars`.
bool uses_var(const PrimExpr& e, const std::vector<const VarNode*>& vars);
bool uses_var(const Stmt& s, const std::vector<const VarNode*>& vars);

}  // namespace tessel
