// FuseOps: partitions the graph's nodes into fused groups by operator pattern, with a
// post-dominator tree and union-find (TVM's algorithm): a conv/dense/pool (OutEWiseFusable)
// absorbs the elementwise/broadcast ops that follow it up to its post-dominator (bias adds,
// activations, residual adds); elementwise/broadcast ops fuse into a following injective,
// reduction or OutEWiseFusable op; chains of injective ops fuse; opaque ops stay alone.
// Requires: a typed graph. Guarantees: every node in exactly one group; groups are convex (no path
// leaves a group and comes back), ordered topologically, each within the size/argument limits.
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/op_table.h"

namespace tessel::passes {

struct FuseOptions {
  int max_fused_ops = 256;    // TVM's kMaxFusedOps
  int max_function_args = 0;  // inputs + outputs of a group; 0 = no limit
};

struct FusedGroup {
  std::vector<graph::NodeId> nodes;     // topological order
  graph::NodeId master;                 // the node whose schedule the group uses (anchor op)
  graph::OpPattern pattern;             // the strongest pattern in the group
  std::vector<graph::ValueId> inputs;   // values read from outside the group (constants included)
  std::vector<graph::ValueId> outputs;  // values read outside the group or graph outputs
};

std::vector<FusedGroup> fuse_ops(const graph::Graph& g, const FuseOptions& opt = {});

// True when every output of the group is empty: it needs no kernel.
bool computes_nothing(const graph::Graph& g, const FusedGroup& group);

// "group 0 [Conv+Add+Relu] (OutEWiseFusable): conv1, add1, relu1" per line.
std::string to_string(const graph::Graph& g, const std::vector<FusedGroup>& groups);

}  // namespace tessel::passes
