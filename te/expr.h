// te's own nodes: operations and reads of their outputs, iteration axes and reductions. They live
// only in compute bodies and schedules; schedule_to_tir lowers them all, so tir never sees them.
#pragma once

#include <string>
#include <vector>

#include "ir/expr.h"
#include "te/node_kinds.h"

namespace tessel::te {

// An operation (placeholder or compute, te/operation.h) with its outputs.
class OperationNode : public Node {
 public:
  OperationNode(NodeKind kind, std::string n) : Node(kind), name(std::move(n)) {}
  std::string name;
  virtual int num_outputs() const = 0;
  virtual DataType output_dtype(int i) const = 0;
  virtual const std::vector<PrimExpr>& output_shape(int i) const = 0;
};
using Operation = Ref<OperationNode>;

// A read of a te tensor (output `value_index` of `op`).
class ProducerLoadNode : public ExprNode {
 public:
  static constexpr NodeKind kKind = node_kind(TeKind::ProducerLoad);
  ProducerLoadNode(DataType t, Operation o, int vi, std::vector<PrimExpr> idx)
      : ExprNode(kKind, t), op(std::move(o)), value_index(vi), indices(std::move(idx)) {}
  Operation op;
  int value_index;
  std::vector<PrimExpr> indices;
  static PrimExpr make(Operation op, int value_index, std::vector<PrimExpr> indices);
};

enum class IterVarType : uint8_t { kDataPar, kCommReduce };

// An axis of a stage: a data-parallel axis of a compute, a reduce_axis, or an axis that split or
// fuse made.
class IterVarNode : public Node {
 public:
  static constexpr NodeKind kKind = node_kind(TeKind::IterVar);
  IterVarNode(Var v, Range d, IterVarType t)
      : Node(kKind), var(std::move(v)), dom(std::move(d)), iter_type(t) {}
  Var var;
  Range dom;  // undefined for iter vars created by split/fuse until bound inference
  IterVarType iter_type;
};

class IterVar : public Ref<IterVarNode> {
 public:
  using Ref<IterVarNode>::Ref;
  IterVar() = default;
  IterVar(const Ref<IterVarNode>& r) : Ref<IterVarNode>(r) {}  // NOLINT
  static IterVar make(Range dom, Var var, IterVarType type);
  operator PrimExpr() const { return get()->var; }  // NOLINT: use an axis as its loop var
  const std::string& name() const { return get()->var->name_hint; }
};

// A commutative reducer: combine(lhs, rhs) with an identity element.
class CommReducerNode : public Node {
 public:
  static constexpr NodeKind kKind = node_kind(TeKind::CommReducer);
  CommReducerNode(std::string n, Var l, Var r, PrimExpr res, PrimExpr id)
      : Node(kKind),
        name(std::move(n)),
        lhs(std::move(l)),
        rhs(std::move(r)),
        result(std::move(res)),
        identity(std::move(id)) {}
  std::string name;  // "sum", "max", "min" or the user's name
  Var lhs, rhs;
  PrimExpr result;
  PrimExpr identity;
  PrimExpr combine(const PrimExpr& a, const PrimExpr& b) const;
};
using CommReducer = Ref<CommReducerNode>;

class ReduceNode : public ExprNode {
 public:
  static constexpr NodeKind kKind = node_kind(TeKind::Reduce);
  ReduceNode(DataType t, CommReducer c, PrimExpr s, std::vector<IterVar> ax, PrimExpr cond)
      : ExprNode(kKind, t),
        combiner(std::move(c)),
        source(std::move(s)),
        axis(std::move(ax)),
        condition(std::move(cond)) {}
  CommReducer combiner;
  PrimExpr source;
  std::vector<IterVar> axis;
  PrimExpr condition;  // only points where it holds are combined
  static PrimExpr make(CommReducer combiner, PrimExpr source, std::vector<IterVar> axis,
                       PrimExpr condition);
};

}  // namespace tessel::te
