// Default CPU schedules for fused groups anchored by an nn op (the group's master node).
// Convolutions, pools and matmuls: the one reduction is computed in a register tile (output
// channels or rows unrolled x a vector of output columns) at the tile loop of the group's output,
// so the elementwise epilogue (bias, activation, residual add) runs on the tile while it is hot;
// its padded/transposed inputs are computed at root; the outer loops run in parallel.
// The register tile is a template with knobs (AutoTVM style): rows, columns and output-height
// blocking, the order of the reduction loops, unrolling the innermost one, and parallelism. The
// fallback config is the hand-written policy, which is what an untuned compile uses.
// Softmax and normalizations: statistics at root, parallel over their rows; the output injective.
#pragma once

#include <optional>
#include <vector>

#include "ir/graph.h"
#include "te/schedule.h"
#include "topi/config_space.h"

namespace tessel::topi {

// The knobs of the template that schedules `s` (a fused group's computes, not yet scheduled) when
// `master` anchors it; none for groups without a template.
std::optional<ConfigSpace> tuning_space(const te::Schedule& s, const graph::Graph& g,
                                        const graph::Node& master, int vector_lanes);

// Schedules every stage of `s` (whose outputs are `outputs`) when `master` is an nn op with a
// schedule here and the group has the expected shape; returns false and leaves `s` untouched
// otherwise, so the caller applies its default policy. A templated schedule follows `config`, a
// point of tuning_space(s, ...), or the space's fallback when it is null.
bool schedule_for_master(te::Schedule& s, const graph::Graph& g, const graph::Node& master,
                         const std::vector<te::Tensor>& outputs, int vector_lanes,
                         const ConfigEntity* config = nullptr);

}  // namespace tessel::topi
