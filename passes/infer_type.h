// Types every value with the op table, node by node in topological order. Shape arithmetic is
// folded on the way (constants of at most kShapeFoldLimit elements, Shape/Size of statically
// shaped values), so Shape -> Gather -> Concat -> Reshape chains resolve once input shapes are
// fixed. Requires: graph inputs with static shapes (frontend::require_static_inputs).
// Guarantees: every value has a static type, or an Error names the node.
#pragma once

#include "ir/graph.h"

namespace tessel::passes {

inline constexpr int64_t kShapeFoldLimit = 1024;

void infer_type(graph::Graph& g);

}  // namespace tessel::passes
