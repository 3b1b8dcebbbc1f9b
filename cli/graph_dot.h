// The fused graph as Graphviz DOT (`tessel inspect --dot/--svg`): one cluster per fusion group,
// filled by its pattern, ops inside, tensor types on the edges, the graph's inputs and outputs as
// ellipses and a legend of the patterns drawn.
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"
#include "passes/fuse_ops.h"

namespace tessel::cli {

std::string fused_graph_dot(const graph::Graph& g, const std::vector<passes::FusedGroup>& groups,
                            const std::string& title);

// Runs Graphviz's `dot -Tsvg` on `dot_text` into `svg_path`; Error when dot is not installed or
// fails.
void render_svg_with_graphviz(const std::string& dot_text, const std::string& svg_path);

}  // namespace tessel::cli
