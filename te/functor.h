// ir's visitor and mutator, extended to te's nodes: compute bodies mix ir expressions with tensor
// reads and reductions, so te walks them with these (ir's functors reject te's nodes).
#pragma once

#include <utility>
#include <vector>

#include "ir/functor.h"
#include "te/expr.h"

namespace tessel::te {

class TeVisitor : public IRVisitor {
 protected:
  void visit_non_ir_expr(const PrimExpr& e) override;
#define TESSEL_VISIT_TE_EXPR(N) virtual void visit_##N(const N##Node* op, const PrimExpr& self);
  TESSEL_TE_EXPR_KINDS(TESSEL_VISIT_TE_EXPR)
#undef TESSEL_VISIT_TE_EXPR
};

class TeMutator : public IRMutator {
 protected:
  PrimExpr mutate_non_ir_expr(const PrimExpr& e) override;
#define TESSEL_MUTATE_TE_EXPR(N) \
  virtual PrimExpr mutate_##N(const N##Node* op, const PrimExpr& self);
  TESSEL_TE_EXPR_KINDS(TESSEL_MUTATE_TE_EXPR)
#undef TESSEL_MUTATE_TE_EXPR
};

// substitute() for expressions that may hold te's nodes (compute bodies).
PrimExpr substitute_body(const PrimExpr& e, const std::vector<std::pair<Var, PrimExpr>>& map);

}  // namespace tessel::te
