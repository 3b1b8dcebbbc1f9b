#include "passes/graph_util.h"

#include <cstring>

#include "ir/op_table.h"

namespace tessel::passes {

using graph::Graph;
using graph::kNoValue;
using graph::NodeId;
using graph::ValueId;

void replace_uses(Graph& g, ValueId from, ValueId to) {
  for (auto& node : g.nodes) {
    for (auto& in : node.inputs) {
      if (in == from) in = to;
    }
  }
  for (auto& out : g.outputs) {
    if (out == from) out = to;
  }
}

void set_nodes(graph::Graph& g, std::vector<graph::Node> nodes) {
  g.nodes = std::move(nodes);
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    for (graph::ValueId out : g.nodes[n].outputs) {
      if (out != graph::kNoValue) g.value(out).producer = static_cast<graph::NodeId>(n);
    }
  }
}

void remove_dead_code(Graph& g) {
  std::vector<bool> live_value(g.values.size(), false), live_node(g.nodes.size(), false);
  for (ValueId v : g.outputs) live_value[v] = true;
  for (ValueId v : g.inputs) live_value[v] = true;  // inputs stay part of the signature
  for (size_t n = g.nodes.size(); n-- > 0;) {
    const auto& node = g.nodes[n];
    // A folded node's outputs are constants: readers no longer need the node.
    for (ValueId out : node.outputs) {
      live_node[n] =
          live_node[n] || (out != kNoValue && live_value[out] && !g.values[out].constant);
    }
    if (!live_node[n]) continue;
    for (ValueId in : node.inputs) {
      if (in != kNoValue) live_value[in] = true;
    }
    for (ValueId out : node.outputs) {
      if (out != kNoValue) live_value[out] = true;  // all outputs of a live node stay
    }
  }
  std::vector<ValueId> remap(g.values.size(), kNoValue);
  std::vector<graph::Value> values;
  for (size_t v = 0; v < g.values.size(); ++v) {
    if (!live_value[v]) continue;
    remap[v] = static_cast<ValueId>(values.size());
    values.push_back(std::move(g.values[v]));
  }
  std::vector<graph::Node> nodes;
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    if (!live_node[n]) continue;
    graph::Node node = std::move(g.nodes[n]);
    for (auto& in : node.inputs) in = in == kNoValue ? kNoValue : remap[in];
    for (auto& out : node.outputs) {
      if (out == kNoValue) continue;
      out = remap[out];
      values[out].producer = static_cast<NodeId>(nodes.size());
    }
    nodes.push_back(std::move(node));
  }
  for (auto& v : values) {
    if (v.constant) v.producer = -1;
  }
  for (auto& v : g.inputs) v = remap[v];
  for (auto& v : g.outputs) v = remap[v];
  g.values = std::move(values);
  g.nodes = std::move(nodes);
}

bool attr_equal(const graph::Attr& a, const graph::Attr& b) {
  if (a.index() != b.index()) return false;
  if (const auto* ta = std::get_if<graph::TensorData>(&a)) {
    const auto& tb = std::get<graph::TensorData>(b);
    return ta->dtype() == tb.dtype() && ta->shape() == tb.shape() && ta->nbytes() == tb.nbytes() &&
           std::memcmp(ta->raw(), tb.raw(), ta->nbytes()) == 0;
  }
  return std::visit(
      [&](const auto& va) {
        using T = std::decay_t<decltype(va)>;
        if constexpr (std::is_same_v<T, graph::TensorData>) {
          return false;  // handled above
        } else {
          return va == std::get<T>(b);
        }
      },
      a);
}

double node_flops(const graph::Graph& g, const graph::Node& node) {
  const graph::OpDef& def = node.def();
  return def.flops ? def.flops(g, node) : 0;
}

}  // namespace tessel::passes
