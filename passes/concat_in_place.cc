#include "passes/concat_in_place.h"

#include <algorithm>

#include "ir/ops/shape_util.h"
#include "runtime/ndarray.h"

namespace tessel::passes {

InPlaceConcats plan_in_place_concats(const graph::Graph& g, const std::vector<FusedGroup>& groups) {
  std::set<graph::ValueId> outputs(g.outputs.begin(), g.outputs.end());
  std::set<graph::ValueId> computed;  // written by a kernel
  for (const FusedGroup& group : groups) {
    if (!computes_nothing(g, group)) computed.insert(group.outputs.begin(), group.outputs.end());
  }
  InPlaceConcats result;
  std::set<graph::ValueId> taken;  // parts and hosts of the Concats chosen so far
  for (size_t i = 0; i < groups.size(); ++i) {
    const FusedGroup& group = groups[i];
    if (group.nodes.size() != 1) continue;
    const graph::Node& concat = g.nodes[static_cast<size_t>(group.nodes[0])];
    if (concat.op != graph::OpKind::Concat) continue;
    graph::ValueId host = concat.outputs[0];
    const graph::TensorType& out = g.value(host).type;
    if (!out.is_static() || outputs.count(host) || taken.count(host)) continue;
    int64_t axis = graph::ops::normalize_axis(concat.attr_int("axis", 0),
                                              static_cast<int64_t>(out.shape.size()), concat);
    if (!std::all_of(out.shape.begin(), out.shape.begin() + axis, [](int64_t d) { return d == 1; }))
      continue;
    std::map<graph::ValueId, ValueAlias> parts;
    int64_t offset = 0;
    bool ok = true;
    for (graph::ValueId v : concat.inputs) {
      // Kernels require their arguments aligned as the runtime allocates buffers.
      ok = ok && computed.count(v) && !outputs.count(v) && !taken.count(v) &&
           offset % static_cast<int64_t>(runtime::kArrayAlignment) == 0 &&
           parts.emplace(v, ValueAlias{host, offset}).second;
      offset += value_bytes(g.value(v));
    }
    if (!ok) continue;
    result.groups.insert(i);
    taken.insert(host);
    for (const auto& [v, alias] : parts) {
      taken.insert(v);
      result.aliases.emplace(v, alias);
    }
  }
  return result;
}

}  // namespace tessel::passes
