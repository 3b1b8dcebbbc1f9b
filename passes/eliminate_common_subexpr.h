// Common-subexpression elimination: a node with the same op, inputs and attributes as an earlier
// node is dropped and its outputs' readers use the earlier node's outputs. Requires nothing.
#pragma once

#include "ir/graph.h"

namespace tessel::passes {

void eliminate_common_subexpr(graph::Graph& g);

}  // namespace tessel::passes
