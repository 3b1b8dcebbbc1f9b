#include "passes/eliminate_common_subexpr.h"

#include <unordered_map>

#include "passes/graph_util.h"

namespace tessel::passes {

namespace {
bool same_node(const graph::Node& a, const graph::Node& b) {
  if (a.op != b.op || a.inputs != b.inputs || a.outputs.size() != b.outputs.size() ||
      a.attrs.size() != b.attrs.size()) {
    return false;
  }
  for (auto ia = a.attrs.begin(), ib = b.attrs.begin(); ia != a.attrs.end(); ++ia, ++ib) {
    if (ia->first != ib->first || !attr_equal(ia->second, ib->second)) return false;
  }
  return true;
}

struct KeyHash {
  size_t operator()(const std::pair<graph::OpKind, graph::ValueId>& k) const {
    return std::hash<uint64_t>()(static_cast<uint64_t>(k.first) << 32 |
                                 static_cast<uint32_t>(k.second));
  }
};
}  // namespace

void eliminate_common_subexpr(graph::Graph& g) {
  // Candidates share op and first input; equal nodes are then compared in full.
  std::unordered_multimap<std::pair<graph::OpKind, graph::ValueId>, graph::NodeId, KeyHash> seen;
  bool changed = false;
  for (graph::NodeId n = 0; n < static_cast<graph::NodeId>(g.nodes.size()); ++n) {
    const graph::Node& node = g.nodes[n];
    std::pair key{node.op, node.inputs.empty() ? graph::kNoValue : node.inputs[0]};
    auto [lo, hi] = seen.equal_range(key);
    bool replaced = false;
    for (auto it = lo; it != hi && !replaced; ++it) {
      const graph::Node& earlier = g.nodes[it->second];
      if (!same_node(earlier, node)) continue;
      for (size_t i = 0; i < node.outputs.size(); ++i)
        replace_uses(g, node.outputs[i], earlier.outputs[i]);
      replaced = changed = true;
    }
    if (!replaced) seen.emplace(key, n);
  }
  if (changed) remove_dead_code(g);
}

}  // namespace tessel::passes
