#include "te/functor.h"

#include <string>

namespace tessel::te {

void TeVisitor::visit_non_ir_expr(const PrimExpr& e) {
  switch (te_kind(e->kind())) {
#define TESSEL_DISPATCH(N) \
  case TeKind::N:          \
    return visit_##N(static_cast<const N##Node*>(static_cast<const Node*>(e.get())), e);
    TESSEL_TE_EXPR_KINDS(TESSEL_DISPATCH)
#undef TESSEL_DISPATCH
    TESSEL_TE_OTHER_KINDS(TESSEL_TE_KIND_CASE)
    break;
  }
  TESSEL_UNREACHABLE(std::string("not an expression: ") + te_kind_name(te_kind(e->kind())));
}

void TeVisitor::visit_ProducerLoad(const ProducerLoadNode* op, const PrimExpr&) {
  for (const auto& i : op->indices) visit_expr(i);
}
void TeVisitor::visit_Reduce(const ReduceNode* op, const PrimExpr&) {
  visit_expr(op->source);
  if (op->condition.defined()) visit_expr(op->condition);
}

PrimExpr TeMutator::mutate_non_ir_expr(const PrimExpr& e) {
  switch (te_kind(e->kind())) {
#define TESSEL_DISPATCH(N) \
  case TeKind::N:          \
    return mutate_##N(static_cast<const N##Node*>(static_cast<const Node*>(e.get())), e);
    TESSEL_TE_EXPR_KINDS(TESSEL_DISPATCH)
#undef TESSEL_DISPATCH
    TESSEL_TE_OTHER_KINDS(TESSEL_TE_KIND_CASE)
    break;
  }
  TESSEL_UNREACHABLE(std::string("not an expression: ") + te_kind_name(te_kind(e->kind())));
}

PrimExpr TeMutator::mutate_ProducerLoad(const ProducerLoadNode* op, const PrimExpr& self) {
  std::vector<PrimExpr> idx;
  if (!mutate_exprs(op->indices, &idx)) return self;
  return ProducerLoadNode::make(op->op, op->value_index, idx);
}
PrimExpr TeMutator::mutate_Reduce(const ReduceNode* op, const PrimExpr& self) {
  PrimExpr s = mutate_expr(op->source);
  PrimExpr c = op->condition.defined() ? mutate_expr(op->condition) : op->condition;
  if (s.same_as(op->source) && c.same_as(op->condition)) return self;
  return ReduceNode::make(op->combiner, s, op->axis, c);
}

PrimExpr substitute_body(const PrimExpr& e, const std::vector<std::pair<Var, PrimExpr>>& map) {
  if (map.empty()) return e;
  return VarSubstituter<TeMutator>(map).mutate_expr(e);
}

}  // namespace tessel::te
