// Concats whose inputs are written straight into their output: when every dim before the concat
// axis is 1, each input is one contiguous range of the output, so the kernel that computes an
// input can write it there (a view of the output's buffer, passes/plan_memory.h) and the Concat
// runs no kernel. SqueezeNet's fire modules concatenate two conv outputs this way, DenseNet's
// blocks each new layer's features. Runs after fusion, on the kernels' groups.
// A Concat group qualifies when it is the Concat alone, its output is static and not a graph
// output, and each input is computed by a kernel (not a constant, graph input or output), appears
// once, has no place yet (a part of another in-place Concat, or a view), and starts at a multiple
// of the kernels' buffer alignment. An input may be an in-place Concat's output: its parts then
// live in this output (aliases resolved to the root of such a chain). A Concat whose inputs are,
// in order, a run of such a Concat's inputs is a view of that run of its output (DenseNet's block
// concatenates its input and the features so far in every layer: each Concat a prefix of the
// block's last). The Concats of most inputs are planned first, so the block's last one hosts.
#pragma once

#include <map>
#include <set>
#include <vector>

#include "passes/fuse_ops.h"
#include "passes/plan_memory.h"

namespace tessel::passes {

struct InPlaceConcats {
  std::set<size_t> groups;  // the Concat groups that run no kernel
  // Each input → its place in the output; each view → its place in its host.
  std::map<graph::ValueId, ValueAlias> aliases;
};

InPlaceConcats plan_in_place_concats(const graph::Graph& g, const std::vector<FusedGroup>& groups);

}  // namespace tessel::passes
