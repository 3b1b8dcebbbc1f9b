#include "passes/fuse_layer_norm.h"

#include <algorithm>
#include <optional>
#include <set>

#include "ir/ops/op_params.h"
#include "passes/graph_util.h"

namespace tessel::passes {

namespace {

using graph::Graph;
using graph::kNoValue;
using graph::Node;
using graph::NodeId;
using graph::OpKind;
using graph::TensorData;
using graph::ValueId;

// One decomposed layer normalization: its input, axis, epsilon, affine constants (or kNoValue),
// the value it computes and the nodes it replaces.
struct Chain {
  ValueId x = kNoValue;
  int64_t axis = 0;
  double eps = 0;
  ValueId gamma = kNoValue, beta = kNoValue;
  ValueId out = kNoValue;
  std::set<NodeId> nodes;
};

class Matcher {
 public:
  explicit Matcher(const Graph& g) : g_(g), consumers_(g.consumers()) {}

  // The chain whose division is `div`, extended by the affine ops after it.
  std::optional<Chain> match(NodeId div_id) {
    const Node& div = g_.nodes[static_cast<size_t>(div_id)];
    if (div.op != OpKind::Div || div.inputs.size() != 2) return std::nullopt;
    Chain c;
    c.nodes.insert(div_id);
    ValueId d = div.inputs[0];
    const Node* sub = producer(d, OpKind::Sub, c);
    const Node* sqrt = producer(div.inputs[1], OpKind::Sqrt, c);
    if (!sub || !sqrt || sub->inputs.size() != 2) return std::nullopt;
    c.x = sub->inputs[0];
    const graph::TensorType& x = g_.value(c.x).type;
    if (x.dtype != DataType::f32() || !x.is_static() || x.shape.empty()) return std::nullopt;
    const Node* mean = producer(sub->inputs[1], OpKind::ReduceMean, c);
    const Node* add = producer(sqrt->inputs[0], OpKind::Add, c);
    if (!mean || !add || mean->inputs[0] != c.x || add->inputs.size() != 2) return std::nullopt;
    // var + eps, either way round.
    std::optional<double> eps = scalar(add->inputs[1]);
    ValueId var_value = add->inputs[0];
    if (!eps) {
      eps = scalar(add->inputs[0]);
      var_value = add->inputs[1];
    }
    const Node* var = producer(var_value, OpKind::ReduceMean, c);
    if (!eps || !var) return std::nullopt;
    const Node* square = producer(var->inputs[0], OpKind::Pow, c);
    if (square) {
      std::optional<double> exponent = scalar(square->inputs[1]);
      if (!exponent || *exponent != 2.0) return std::nullopt;
    } else {
      square = producer(var->inputs[0], OpKind::Mul, c);
      if (!square || square->inputs[1] != d) return std::nullopt;
    }
    std::optional<int64_t> axis = trailing_axis(*mean, x.shape.size());
    if (square->inputs[0] != d || !axis || trailing_axis(*var, x.shape.size()) != axis)
      return std::nullopt;
    c.axis = *axis;
    c.eps = *eps;
    // Each intermediate is read inside the chain only: d by the square and the division.
    for (ValueId v : {sub->inputs[1], sqrt->inputs[0], var_value, var->inputs[0], div.inputs[1]}) {
      if (!private_to(v, 1)) return std::nullopt;
    }
    // One-element constants of a higher rank than x would widen the result.
    if (!private_to(d, 2) || g_.value(div.outputs[0]).type.shape != x.shape) return std::nullopt;
    c.out = div.outputs[0];
    c.gamma = affine(c, OpKind::Mul);
    if (c.gamma != kNoValue) c.beta = affine(c, OpKind::Add);
    return c;
  }

 private:
  // The node of kind `op` computing `v`, added to the chain's nodes; nullptr if none.
  const Node* producer(ValueId v, OpKind op, Chain& c) const {
    NodeId p = v == kNoValue ? -1 : g_.value(v).producer;
    if (p < 0 || g_.nodes[static_cast<size_t>(p)].op != op) return nullptr;
    c.nodes.insert(p);
    return &g_.nodes[static_cast<size_t>(p)];
  }

  std::optional<double> scalar(ValueId v) const {
    const auto& t = g_.value(v).constant;
    if (!t || !t->dtype().is_float() || t->numel() != 1) return std::nullopt;
    return t->get_double(0);
  }

  bool is_output(ValueId v) const {
    return std::find(g_.outputs.begin(), g_.outputs.end(), v) != g_.outputs.end();
  }

  // `v` is read by exactly `readers` distinct nodes and is no graph output.
  bool private_to(ValueId v, size_t readers) const {
    const auto& c = consumers_[static_cast<size_t>(v)];
    return std::set<NodeId>(c.begin(), c.end()).size() == readers && !is_output(v);
  }

  // The first reduced dim when `reduce` keeps its dims and reduces a suffix of a rank-`rank`
  // input.
  std::optional<int64_t> trailing_axis(const Node& reduce, size_t rank) const {
    graph::ops::ReduceSpec spec;
    try {
      spec = graph::ops::reduce_spec(reduce, static_cast<int64_t>(rank),
                                     graph::ops::constant_params(g_, reduce));
    } catch (const Error&) {
      return std::nullopt;  // axes computed at run time
    }
    auto first = std::find(spec.reduced.begin(), spec.reduced.end(), true);
    if (!spec.keepdims || first == spec.reduced.end() ||
        !std::all_of(first, spec.reduced.end(), [](bool r) { return r; }))
      return std::nullopt;
    return first - spec.reduced.begin();
  }

  // When the chain's value is read only by `op` (Mul or Add) with a float32 constant over the
  // normalized dims, takes that op into the chain and returns the constant.
  ValueId affine(Chain& c, OpKind op) const {
    const auto& readers = consumers_[static_cast<size_t>(c.out)];
    if (readers.size() != 1 || is_output(c.out)) return kNoValue;
    const Node& n = g_.nodes[static_cast<size_t>(readers[0])];
    if (n.op != op || n.inputs.size() != 2) return kNoValue;
    ValueId param = n.inputs[0] == c.out ? n.inputs[1] : n.inputs[0];
    const auto& t = g_.value(param).constant;
    const std::vector<int64_t>& x = g_.value(c.x).type.shape;
    if (!t || t->dtype() != DataType::f32() || g_.value(n.outputs[0]).type.shape != x)
      return kNoValue;
    // Its dims past the leading 1s must be the trailing normalized dims (or 1s).
    std::vector<int64_t> shape = t->shape();
    while (!shape.empty() && shape.front() == 1) shape.erase(shape.begin());
    auto norm_rank = static_cast<size_t>(static_cast<int64_t>(x.size()) - c.axis);
    if (shape.size() > norm_rank) return kNoValue;
    for (size_t i = 0; i < shape.size(); ++i) {
      if (shape[i] != 1 && shape[i] != x[x.size() - shape.size() + i]) return kNoValue;
    }
    c.nodes.insert(readers[0]);
    c.out = n.outputs[0];
    return param;
  }

  const Graph& g_;
  std::vector<std::vector<NodeId>> consumers_;
};

// A parameter as LayerNormalization reads it: its dims past the leading 1s, or ones over the
// normalized dims when the chain has no scale.
ValueId layer_norm_param(Graph& g, const Chain& c, ValueId param, const std::string& name) {
  const std::vector<int64_t>& x = g.value(c.x).type.shape;
  if (param == kNoValue) {
    TensorData ones(DataType::f32(), std::vector<int64_t>(x.begin() + c.axis, x.end()));
    for (int64_t i = 0; i < ones.numel(); ++i) ones.set_double(i, 1.0);
    return g.add_constant(name, std::move(ones));
  }
  const TensorData& t = *g.value(param).constant;
  std::vector<int64_t> shape = t.shape();
  while (!shape.empty() && shape.front() == 1) shape.erase(shape.begin());
  if (shape == t.shape()) return param;
  TensorData reshaped = t.reshaped(shape);
  return g.add_constant(g.value(param).name + "_" + name, std::move(reshaped));
}

}  // namespace

void fuse_layer_norm(Graph& g) {
  std::vector<Chain> chains;
  std::set<NodeId> taken;
  Matcher matcher(g);
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    std::optional<Chain> c = matcher.match(static_cast<NodeId>(n));
    if (!c || std::any_of(c->nodes.begin(), c->nodes.end(),
                          [&](NodeId id) { return taken.count(id) != 0; }))
      continue;
    taken.insert(c->nodes.begin(), c->nodes.end());
    chains.push_back(std::move(*c));
  }
  if (chains.empty()) return;
  // Each chain's node takes the place of its last node, after everything the chain reads.
  std::vector<std::optional<Node>> at_last(g.nodes.size());
  for (const Chain& c : chains) {
    const Node& first = g.nodes[static_cast<size_t>(*c.nodes.begin())];
    std::string name = first.name + "_layer_norm";
    std::vector<ValueId> inputs{c.x, layer_norm_param(g, c, c.gamma, "scale")};
    if (c.beta != kNoValue) inputs.push_back(layer_norm_param(g, c, c.beta, "bias"));
    at_last[static_cast<size_t>(*c.nodes.rbegin())] =
        Node(OpKind::LayerNormalization, name, inputs, {c.out},
             {{"axis", graph::Attr(c.axis)}, {"epsilon", graph::Attr(c.eps)}});
  }
  std::vector<Node> nodes;
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    if (at_last[n]) {
      nodes.push_back(std::move(*at_last[n]));
    } else if (!taken.count(static_cast<NodeId>(n))) {
      nodes.push_back(std::move(g.nodes[n]));
    }
  }
  set_nodes(g, std::move(nodes));
  remove_dead_code(g);
}

}  // namespace tessel::passes
