// Small rewriting helpers shared by the graph passes.
#pragma once

#include "ir/graph.h"

namespace tessel::passes {

// Makes every reader of `from` (nodes and graph outputs) read `to` instead.
void replace_uses(graph::Graph& g, graph::ValueId from, graph::ValueId to);

// Replaces g.nodes (in topological order) and points each value at its new producer.
void set_nodes(graph::Graph& g, std::vector<graph::Node> nodes);

// Drops nodes none of whose outputs is used (transitively) by a graph output, nodes whose outputs
// were all folded to constants, and values nothing refers to; renumbers the rest. Node order is
// kept.
void remove_dead_code(graph::Graph& g);

// 2 x multiply-adds of `node` (typed graph) as its OpDef counts them (convolutions and matrix
// products); 0 for ops without a count.
double node_flops(const graph::Graph& g, const graph::Node& node);

// Structural equality of attribute values (tensors by contents, subgraphs by identity).
bool attr_equal(const graph::Attr& a, const graph::Attr& b);

}  // namespace tessel::passes
