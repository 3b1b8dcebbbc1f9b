// Default CPU schedules for fused groups anchored by an nn op (the group's master node).
// Convolutions, pools and matmuls: the one reduction is computed in a register tile (output
// channels or rows unrolled x a vector of output columns) at the tile loop of the group's output,
// so the elementwise epilogue (bias, activation, residual add) runs on the tile while it is hot;
// its padded/transposed inputs are computed at root; the outer loops run in parallel.
// Softmax and normalizations: statistics at root, parallel over their rows; the output injective.
#pragma once

#include <vector>

#include "ir/graph.h"
#include "te/schedule.h"

namespace tessel::topi {

// Schedules every stage of `s` (whose outputs are `outputs`) when `master` is an nn op with a
// schedule here and the group has the expected shape; returns false and leaves `s` untouched
// otherwise, so the caller applies its default policy.
bool schedule_for_master(te::Schedule& s, const graph::Graph& g, const graph::Node& master,
                         const std::vector<te::Tensor>& outputs, int vector_lanes);

}  // namespace tessel::topi
