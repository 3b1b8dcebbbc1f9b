// Constant folding with the reference executor. `fold_constant` evaluates every node whose inputs
// are all constants; `try_fold_node` is the building block type inference uses to resolve shape
// arithmetic (small constants, Shape/Size of statically shaped values) as it goes.
// Requires: typed inputs. Guarantees: folded nodes are gone and their outputs are constants.
#pragma once

#include <cstdint>

#include "ir/graph.h"

namespace tessel::passes {

// Folds node `n` when its inputs are constants and each output has at most `max_elements`
// elements (negative: no limit), or when it is Shape/Size of a statically shaped value. The node
// stays in the graph with its outputs turned into constants; remove_dead_code drops it.
bool try_fold_node(graph::Graph& g, graph::NodeId n, int64_t max_elements);

void fold_constant(graph::Graph& g);

}  // namespace tessel::passes
