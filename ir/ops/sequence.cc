// Type inference for the recurrent ops (LSTM, GRU, RNN), Resize, Einsum and If.
#include <fmt/format.h>

#include <numeric>

#include "ir/error.h"
#include "ir/ops/op_defs.h"
#include "ir/ops/sequence_shapes.h"
#include "ir/ops/shape_util.h"

namespace tessel::graph::ops {

namespace {

using Types = std::vector<TensorType>;

// X is [seq, batch, input] (layout 0) or [batch, seq, input] (layout 1); R is [dirs, gates * H, H].
// Y is [seq, dirs, batch, H] / [batch, seq, dirs, H]; Y_h and Y_c are [dirs, batch, H] / [batch,
// dirs, H].
Types infer_recurrent(const Graph& g, const Node& node, int64_t gates) {
  const TensorType& x = input_type(g, node, 0);
  const TensorType& w = input_type(g, node, 1);
  const TensorType& r = input_type(g, node, 2);
  if (x.shape.size() != 3 || w.shape.size() != 3 || r.shape.size() != 3) {
    throw Error(fmt::format("{}: X {}, W {} and R {} must have rank 3", node.describe(), x.str(),
                            w.str(), r.str()));
  }
  require_same_dtype(g, node, {0, 1, 2, 3, 5, 6, 7});  // all but the int32 sequence_lens
  std::string direction = node.attr_string("direction", "forward");
  if (direction != "forward" && direction != "reverse" && direction != "bidirectional") {
    throw Error(fmt::format("{}: unknown direction '{}'", node.describe(), direction));
  }
  int64_t dirs = direction == "bidirectional" ? 2 : 1;
  int64_t hidden = node.attr_int("hidden_size", r.shape[2]);
  if (hidden == kUnknownDim)
    throw Error(fmt::format("{}: hidden_size is unknown", node.describe()));
  if (w.shape[0] != kUnknownDim && w.shape[0] != dirs) {
    throw Error(fmt::format("{}: W has {} directions, direction '{}' needs {}", node.describe(),
                            w.shape[0], direction, dirs));
  }
  if (w.shape[1] != kUnknownDim && w.shape[1] != gates * hidden) {
    throw Error(fmt::format("{}: W has {} rows, expected {} gates x hidden_size {}",
                            node.describe(), w.shape[1], gates, hidden));
  }
  bool batch_first = node.attr_int("layout", 0) != 0;
  int64_t seq = x.shape[batch_first ? 1 : 0], batch = x.shape[batch_first ? 0 : 1];
  TensorType y{x.dtype,
               batch_first ? std::vector<int64_t>{batch, seq, dirs, hidden}
                           : std::vector<int64_t>{seq, dirs, batch, hidden},
               {}};
  TensorType state{x.dtype,
                   batch_first ? std::vector<int64_t>{batch, dirs, hidden}
                               : std::vector<int64_t>{dirs, batch, hidden},
                   {}};
  Types out{y, state, state};
  out.resize(std::min<size_t>(node.outputs.size(), gates == 4 ? 3 : 2));
  return out;
}

// Resize (X, roi, scales, sizes); the output dims need constant scales or sizes.
Types infer_resize(const Graph& g, const Node& node) {
  const TensorType& x = input_type(g, node, 0);
  std::vector<int64_t> sizes;
  if (has_input(node, kResizeSizes)) sizes = constant_ints(g, node, kResizeSizes, "sizes");
  std::vector<double> scales;
  if (sizes.empty()) {
    const TensorData& s = required_constant(g, node, kResizeScales, "scales");
    for (int64_t i = 0; i < s.numel(); ++i) scales.push_back(s.get_double(i));
  }
  return {TensorType{x.dtype, resize_output_dims(node, x.shape, scales, sizes), {}}};
}

// The importer rewrites every Upsample into Resize (frontend/canonicalize_ops.h); the op stays in
// the table so that models using it import.
Types infer_upsample(const Graph&, const Node& node) {
  throw Error(fmt::format("{}: Upsample is rewritten into Resize at import; build a Resize node",
                          node.describe()));
}

Types infer_einsum(const Graph& g, const Node& node) {
  std::vector<std::vector<int64_t>> shapes;
  for (size_t i = 0; i < node.inputs.size(); ++i) shapes.push_back(input_type(g, node, i).shape);
  if (shapes.empty())
    throw Error(fmt::format("{}: Einsum needs at least one operand", node.describe()));
  std::vector<size_t> operands(node.inputs.size());
  std::iota(operands.begin(), operands.end(), 0);
  require_same_dtype(g, node, operands);
  EinsumSpec spec = parse_einsum(node, shapes);
  std::vector<int64_t> out;
  for (int l : spec.output_labels) out.push_back(spec.label_dims[l]);
  return {TensorType{input_type(g, node, 0).dtype, out, {}}};
}

// The then-branch's output types, with unknown dims where the branches' shapes differ.
Types infer_if(const Graph& g, const Node& node) {
  std::shared_ptr<Graph> then_g = node.attr_graph("then_branch"),
                         else_g = node.attr_graph("else_branch");
  if (!then_g || !else_g)
    throw Error(fmt::format("{}: needs then_branch and else_branch graphs", node.describe()));
  const TensorType& cond = input_type(g, node, 0);
  if (!cond.dtype.is_bool() || cond.numel() > 1) {
    throw Error(fmt::format("{}: the condition must be a single bool, got {}", node.describe(),
                            cond.str()));
  }
  if (then_g->outputs.size() != else_g->outputs.size()) {
    throw Error(fmt::format("{}: then_branch has {} outputs, else_branch {}", node.describe(),
                            then_g->outputs.size(), else_g->outputs.size()));
  }
  if (then_g->outputs.size() != node.outputs.size()) {
    throw Error(fmt::format("{}: the branches have {} outputs but the node has {}", node.describe(),
                            then_g->outputs.size(), node.outputs.size()));
  }
  Types out;
  for (size_t i = 0; i < then_g->outputs.size(); ++i) {
    TensorType t = then_g->value(then_g->outputs[i]).type;
    const TensorType& e = else_g->value(else_g->outputs[i]).type;
    if (t.dtype != e.dtype || t.shape.size() != e.shape.size()) {
      throw Error(fmt::format("{}: output {} is {} in then_branch but {} in else_branch",
                              node.describe(), i, t.str(), e.str()));
    }
    for (size_t d = 0; d < t.shape.size(); ++d) {
      if (t.shape[d] != e.shape[d]) t.shape[d] = kUnknownDim;
    }
    t.dim_params.clear();
    out.push_back(t);
  }
  return out;
}

}  // namespace

std::vector<OpDef> sequence_defs() {
  using P = OpPattern;
  return {
      {OpKind::LSTM, 7, P::kOpaque,
       [](const Graph& g, const Node& n) { return infer_recurrent(g, n, 4); }},
      {OpKind::GRU, 7, P::kOpaque,
       [](const Graph& g, const Node& n) { return infer_recurrent(g, n, 3); }},
      {OpKind::RNN, 7, P::kOpaque,
       [](const Graph& g, const Node& n) { return infer_recurrent(g, n, 1); }},
      {OpKind::Resize, 10, P::kInjective, infer_resize},
      {OpKind::Upsample, 7, P::kInjective, infer_upsample},
      {OpKind::Einsum, 12, P::kOpaque, infer_einsum},
      {OpKind::If, 1, P::kOpaque, infer_if},
  };
}

}  // namespace tessel::graph::ops
