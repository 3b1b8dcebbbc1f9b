#include "te/expr.h"

#include <fmt/format.h>

#include "ir/error.h"
#include "te/functor.h"

namespace tessel::te {

TeKind te_kind(NodeKind k) {
  auto n = static_cast<int>(k);
  TESSEL_ICHECK(n >= kNumIrNodeKinds && n < kNumIrNodeKinds + kNumTeKinds)
      << node_kind_name(k) << " is not a te kind";
  return static_cast<TeKind>(n - kNumIrNodeKinds);
}

const char* te_kind_name(TeKind k) {
  switch (k) {
#define TESSEL_TE_KIND_NAME(N) \
  case TeKind::N:              \
    return #N;
    TESSEL_TE_EXPR_KINDS(TESSEL_TE_KIND_NAME)
    TESSEL_TE_OTHER_KINDS(TESSEL_TE_KIND_NAME)
#undef TESSEL_TE_KIND_NAME
  }
  return "?";
}

PrimExpr ProducerLoadNode::make(Operation op, int value_index, std::vector<PrimExpr> indices) {
  const auto& shape = op->output_shape(value_index);
  if (indices.size() != shape.size()) {
    throw Error(fmt::format("tensor '{}' has {} dimensions but is indexed with {}", op->name,
                            shape.size(), indices.size()));
  }
  for (const auto& i : indices) {
    if (!i.dtype().is_int()) {
      throw Error(
          fmt::format("tensor '{}' indexed with a value of type {}", op->name, i.dtype().str()));
    }
  }
  DataType t = op->output_dtype(value_index);
  return PrimExpr(new ProducerLoadNode(t, std::move(op), value_index, std::move(indices)));
}

IterVar IterVar::make(Range dom, Var var, IterVarType type) {
  return IterVar(new IterVarNode(std::move(var), std::move(dom), type));
}

PrimExpr CommReducerNode::combine(const PrimExpr& a, const PrimExpr& b) const {
  return substitute_body(result, {{lhs, a}, {rhs, b}});
}

PrimExpr ReduceNode::make(CommReducer combiner, PrimExpr source, std::vector<IterVar> axis,
                          PrimExpr condition) {
  TESSEL_ICHECK(combiner.defined() && source.defined());
  if (source.dtype() != combiner->identity.dtype()) {
    throw Error(fmt::format("reduction of a {} value with a reducer over {}", source.dtype().str(),
                            combiner->identity.dtype().str()));
  }
  for (const auto& iv : axis) {
    if (iv->iter_type != IterVarType::kCommReduce) {
      throw Error(fmt::format("axis '{}' of a reduction is not a reduce_axis", iv.name()));
    }
  }
  DataType t = source.dtype();
  return PrimExpr(new ReduceNode(t, std::move(combiner), std::move(source), std::move(axis),
                                 std::move(condition)));
}

}  // namespace tessel::te
