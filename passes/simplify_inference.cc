#include "passes/simplify_inference.h"

#include <algorithm>
#include <cmath>

#include "ir/ops/op_params.h"
#include "passes/graph_util.h"

namespace tessel::passes {

using graph::Graph;
using graph::kNoValue;
using graph::Node;
using graph::TensorData;
using graph::ValueId;

namespace {

const TensorData* const_f32(const Graph& g, const Node& n, size_t i) {
  if (i >= n.inputs.size() || n.inputs[i] == kNoValue) return nullptr;
  const auto& c = g.value(n.inputs[i]).constant;
  return c && c->dtype() == DataType::f32() ? &*c : nullptr;
}

bool is_graph_output(const Graph& g, ValueId v) {
  return std::find(g.outputs.begin(), g.outputs.end(), v) != g.outputs.end();
}

// Per-channel scale and shift of an inference BatchNormalization, or false.
bool batch_norm_affine(const Graph& g, const Node& bn, std::vector<float>* scale,
                       std::vector<float>* shift) {
  const TensorData *gamma = const_f32(g, bn, 1), *beta = const_f32(g, bn, 2),
                   *mean = const_f32(g, bn, 3), *var = const_f32(g, bn, 4);
  if (!gamma || !beta || !mean || !var) return false;
  if (bn.outputs.size() > 1) {
    for (size_t i = 1; i < bn.outputs.size(); ++i) {
      if (bn.outputs[i] != kNoValue) return false;  // training-mode outputs are requested
    }
  }
  double eps = bn.attr_float("epsilon", 1e-5);
  int64_t c = gamma->numel();
  scale->resize(c);
  shift->resize(c);
  for (int64_t i = 0; i < c; ++i) {
    double s = gamma->data<float>()[i] / std::sqrt(double(var->data<float>()[i]) + eps);
    (*scale)[i] = static_cast<float>(s);
    (*shift)[i] = static_cast<float>(beta->data<float>()[i] - mean->data<float>()[i] * s);
  }
  return true;
}

// Folds y = conv(x) * scale[oc] + shift[oc] into the conv's weight and bias. A weight that only
// this conv reads is scaled in place (a model's weights are most of its bytes).
bool fold_into_conv(Graph& g, Node& conv, const std::vector<float>& scale,
                    const std::vector<float>& shift,
                    const std::vector<std::vector<graph::NodeId>>& consumers) {
  const TensorData* w = const_f32(g, conv, 1);
  if (!w || w->shape().empty() || w->shape()[0] != static_cast<int64_t>(scale.size())) return false;
  const TensorData* b = conv.inputs.size() > 2 ? const_f32(g, conv, 2) : nullptr;
  if (conv.inputs.size() > 2 && conv.inputs[2] != kNoValue && !b) return false;
  ValueId w_id = conv.inputs[1];
  bool in_place = consumers[w_id].size() == 1 && !is_graph_output(g, w_id) && w->unique();
  TensorData nw = in_place ? *w : TensorData(DataType::f32(), w->shape());
  int64_t per_oc = nw.numel() / w->shape()[0];
  const float* from = w->data<float>();
  float* to = nw.data<float>();
  for (int64_t oc = 0; oc < w->shape()[0]; ++oc) {
    for (int64_t k = 0; k < per_oc; ++k) to[oc * per_oc + k] = from[oc * per_oc + k] * scale[oc];
  }
  TensorData nb(DataType::f32(), {w->shape()[0]});
  for (int64_t oc = 0; oc < w->shape()[0]; ++oc) {
    nb.data<float>()[oc] = (b ? b->data<float>()[oc] : 0.0f) * scale[oc] + shift[oc];
  }
  ValueId wv = in_place ? w_id : g.add_constant(g.value(w_id).name + "_bnfold", std::move(nw));
  ValueId bv = g.add_constant(conv.name + "_bias_bnfold", std::move(nb));
  conv.inputs.resize(3, kNoValue);
  conv.inputs[1] = wv;
  conv.inputs[2] = bv;
  return true;
}

// Rewrites a BatchNormalization node into Mul + Add with per-channel constants.
void to_scale_shift(Graph& g, graph::NodeId bn_id, const std::vector<float>& scale,
                    const std::vector<float>& shift) {
  Node bn = g.nodes[bn_id];
  const graph::TensorType xt =
      g.value(bn.inputs[0]).type;  // a copy: adding values below reallocates
  std::vector<int64_t> shape(xt.shape.size(), 1);
  if (shape.size() >= 2) shape[1] = static_cast<int64_t>(scale.size());
  TensorData s(DataType::f32(), shape), t(DataType::f32(), shape);
  std::copy(scale.begin(), scale.end(), s.data<float>());
  std::copy(shift.begin(), shift.end(), t.data<float>());
  ValueId sv = g.add_constant(bn.name + "_scale", std::move(s));
  ValueId tv = g.add_constant(bn.name + "_shift", std::move(t));
  ValueId mid = g.add_value(bn.name + "_scaled", xt);
  Node mul{graph::OpKind::Mul, bn.name + "_mul", {bn.inputs[0], sv}, {mid}, {}};
  Node add{graph::OpKind::Add, bn.name + "_add", {mid, tv}, {bn.outputs[0]}, {}};
  // Replace in place to keep topological order: the BN slot becomes the Mul, the Add follows.
  g.nodes[bn_id] = mul;
  g.value(mid).producer = bn_id;
  g.nodes.insert(g.nodes.begin() + bn_id + 1, add);
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    for (ValueId out : g.nodes[n].outputs) {
      if (out != kNoValue) g.value(out).producer = static_cast<graph::NodeId>(n);
    }
  }
}

}  // namespace

void simplify_inference(Graph& g) {
  bool changed = false;
  auto consumers = g.consumers();
  for (graph::NodeId n = 0; n < static_cast<graph::NodeId>(g.nodes.size()); ++n) {
    Node& node = g.nodes[n];
    if (node.op == graph::OpKind::Identity ||
        (node.op == graph::OpKind::Dropout && !graph::ops::dropout_may_train(g, node))) {
      bool mask_used = node.outputs.size() > 1 && node.outputs[1] != kNoValue &&
                       (!consumers[node.outputs[1]].empty() || is_graph_output(g, node.outputs[1]));
      bool passthrough =
          is_graph_output(g, node.outputs[0]) &&
          (is_graph_output(g, node.inputs[0]) ||
           std::find(g.inputs.begin(), g.inputs.end(), node.inputs[0]) != g.inputs.end());
      if (mask_used || passthrough) continue;
      replace_uses(g, node.outputs[0], node.inputs[0]);
      changed = true;
    } else if (node.op == graph::OpKind::BatchNormalization) {
      std::vector<float> scale, shift;
      if (!batch_norm_affine(g, node, &scale, &shift)) continue;
      ValueId x = node.inputs[0];
      graph::NodeId producer = g.value(x).producer;
      bool sole_reader = consumers[x].size() == 1 && !is_graph_output(g, x);
      if (producer >= 0 && sole_reader && g.nodes[producer].op == graph::OpKind::Conv &&
          fold_into_conv(g, g.nodes[producer], scale, shift, consumers)) {
        replace_uses(g, g.nodes[n].outputs[0], x);
      } else {
        to_scale_shift(g, n, scale, shift);
        consumers = g.consumers();
        ++n;  // skip the inserted Add
      }
      changed = true;
    }
  }
  if (changed) remove_dead_code(g);
}

}  // namespace tessel::passes
