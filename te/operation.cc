#include "te/operation.h"

#include <fmt/format.h>

#include "ir/error.h"
#include "te/functor.h"

namespace tessel::te {

ComputeOpNode::ComputeOpNode(std::string n, std::vector<IterVar> ax, std::vector<IterVar> rax,
                             PrimExpr b)
    : OperationNode(kKind, std::move(n)),
      axis(std::move(ax)),
      reduce_axis(std::move(rax)),
      body(std::move(b)) {
  for (const auto& iv : axis) shape.push_back(iv->dom.extent);
}

IterVar Tensor::axis(int i) const {
  const auto* c = op_.as<ComputeOpNode>();
  if (!c) throw Error(fmt::format("tensor '{}' is a placeholder and has no axes", name()));
  if (i < 0 || i >= static_cast<int>(c->axis.size())) {
    throw Error(
        fmt::format("tensor '{}' has {} axes; axis {} does not exist", name(), c->axis.size(), i));
  }
  return c->axis[i];
}

IterVar Tensor::reduce_axis(int i) const {
  const auto* c = op_.as<ComputeOpNode>();
  if (!c || i < 0 || i >= static_cast<int>(c->reduce_axis.size())) {
    throw Error(fmt::format("tensor '{}' has no reduce axis {}", name(), i));
  }
  return c->reduce_axis[i];
}

PrimExpr Tensor::operator()(std::vector<PrimExpr> indices) const {
  if (!defined()) throw Error("read of an undefined tensor");
  return ProducerLoadNode::make(op_, value_index_, std::move(indices));
}

Var var(std::string name, DataType dtype) { return Var(std::move(name), dtype); }

namespace {
void check_shape(const std::vector<PrimExpr>& shape, const std::string& name) {
  for (size_t d = 0; d < shape.size(); ++d) {
    if (!shape[d].defined() || !shape[d].dtype().is_int()) {
      throw Error(fmt::format("tensor '{}': dim {} of the shape must be an integer", name, d));
    }
    if (const int64_t* v = as_const_int(shape[d]); v && *v < 0) {
      throw Error(fmt::format("tensor '{}': dim {} of the shape is negative ({})", name, d, *v));
    }
  }
}

// Finds Reduce nodes that are not at the top of a compute body.
class NestedReduceFinder : public TeVisitor {
 public:
  bool found = false;
  void visit_Reduce(const ReduceNode*, const PrimExpr&) override { found = true; }
};
}  // namespace

Tensor placeholder(std::vector<PrimExpr> shape, DataType dtype, std::string name) {
  check_shape(shape, name);
  return Tensor(Operation(new PlaceholderOpNode(std::move(name), std::move(shape), dtype)));
}

Tensor compute_impl(std::vector<PrimExpr> shape,
                    const std::function<PrimExpr(const std::vector<Var>&)>& fcompute,
                    std::string name, std::vector<std::string> axis_names) {
  check_shape(shape, name);
  if (!axis_names.empty() && axis_names.size() != shape.size()) {
    throw Error(fmt::format("compute '{}': {} axis names for a rank-{} shape", name,
                            axis_names.size(), shape.size()));
  }
  std::vector<Var> vars;
  std::vector<IterVar> axis;
  for (size_t d = 0; d < shape.size(); ++d) {
    std::string vname = !axis_names.empty() ? axis_names[d]
                        : shape.size() <= 2 ? std::string(d == 0 ? "i" : "j")
                                            : fmt::format("i{}", d);
    vars.emplace_back(vname, shape[d].dtype());
    axis.push_back(IterVar::make(Range(make_zero(shape[d].dtype()), shape[d]), vars.back(),
                                 IterVarType::kDataPar));
  }
  PrimExpr body = fcompute(vars);
  if (!body.defined()) {
    throw Error(
        fmt::format("compute '{}': the function must take {} index arguments", name, shape.size()));
  }
  std::vector<IterVar> reduce_axis;
  if (const auto* r = body.as<ReduceNode>()) {
    reduce_axis = r->axis;
    NestedReduceFinder f;
    f.visit_expr(r->source);
    if (f.found)
      throw Error(fmt::format("compute '{}': nested reductions are not supported", name));
  } else {
    NestedReduceFinder f;
    f.visit_expr(body);
    if (f.found) {
      throw Error(fmt::format(
          "compute '{}': a reduction must be the whole body (e.g. sum(...)), not part of an "
          "expression; compute it in its own stage",
          name));
    }
  }
  return Tensor(Operation(new ComputeOpNode(std::move(name), std::move(axis),
                                            std::move(reduce_axis), std::move(body))));
}

IterVar reduce_axis(PrimExpr begin, PrimExpr end, std::string name) {
  Var v(std::move(name), begin.dtype());
  return IterVar::make(Range(begin, end - begin), v, IterVarType::kCommReduce);
}

Reducer::Reducer(std::string name, std::function<PrimExpr(PrimExpr, PrimExpr)> combine,
                 std::function<PrimExpr(DataType)> identity)
    : name_(std::move(name)), combine_(std::move(combine)), identity_(std::move(identity)) {}

PrimExpr Reducer::operator()(PrimExpr source, std::vector<IterVar> axis, PrimExpr where) const {
  if (axis.empty())
    throw Error(fmt::format("{}: a reduction needs at least one reduce_axis", name_));
  DataType t = source.dtype();
  Var lhs("x", t), rhs("y", t);
  PrimExpr result = combine_(lhs, rhs);
  if (result.dtype() != t) {
    throw Error(fmt::format("reducer '{}' combines {} values into {}", name_, t.str(),
                            result.dtype().str()));
  }
  CommReducer c(new CommReducerNode(name_, lhs, rhs, result, identity_(t)));
  if (!where.defined()) where = make_const(DataType::boolean(), 1);
  return ReduceNode::make(c, std::move(source), std::move(axis), std::move(where));
}

PrimExpr sum(PrimExpr source, std::vector<IterVar> axis, PrimExpr where) {
  static const Reducer r("sum", [](PrimExpr a, PrimExpr b) { return a + b; }, make_zero);
  return r(std::move(source), std::move(axis), std::move(where));
}

PrimExpr max(PrimExpr source, std::vector<IterVar> axis, PrimExpr where) {
  static const Reducer r(
      "max", [](PrimExpr a, PrimExpr b) { return tessel::max(a, b); }, min_value);
  return r(std::move(source), std::move(axis), std::move(where));
}

PrimExpr min(PrimExpr source, std::vector<IterVar> axis, PrimExpr where) {
  static const Reducer r(
      "min", [](PrimExpr a, PrimExpr b) { return tessel::min(a, b); }, max_value);
  return r(std::move(source), std::move(axis), std::move(where));
}

}  // namespace tessel::te
