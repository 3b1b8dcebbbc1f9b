// Lowers one fused group to a te function: a placeholder per group input, the topi compute of
// each node in order, the group's outputs as the function's outputs, and the schedule that the
// target's strategy (topi/strategy.h) gives the op family of the group's anchor (its master
// node, whose OpDef names the family). This is the graph-to-te glue: it decodes from the anchor
// node the parameters its schedule reads (topi::AnchorOp). Requires: a typed graph. Throws
// tessel::Error naming the node when an op has no te lowering.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "codegen/cpu_model.h"
#include "passes/fuse_ops.h"
#include "te/schedule.h"
#include "topi/config_space.h"

namespace tessel::passes {

struct LoweredGroup {
  std::string name;  // function name, unique within the model
  te::Schedule schedule;
  std::vector<te::Tensor> args;            // group inputs, then group outputs
  std::vector<graph::ValueId> arg_values;  // the graph value behind each arg
  // The knobs of the group's schedule template (topi/strategy.h); none when it has no template.
  std::optional<topi::ConfigSpace> space;
  // The config its schedule follows, and whether it came from the picker rather than the fallback.
  std::optional<topi::ConfigEntity> config;
  bool tuned = false;
};

// Picks the config of a templated group from its space (a tuning record, a tuner's candidate);
// none means the fallback.
using ConfigPicker = std::function<std::optional<topi::ConfigEntity>(const topi::ConfigSpace&)>;

// How compute_group names the te stages: after the graph's values and nodes (readable dumps), or
// by position in the group (inputs in0, in1, ...; the computes of node j n<j>, n<j>_pad, ...), so
// that a schedule's trace replays on every group of the same computation, in any model.
enum class StageNames { kFromGraph, kByPosition };

// The group's computes with every stage at root, no strategy applied (schedule, args and
// arg_values set): what the auto-scheduler schedules.
LoweredGroup compute_group(const graph::Graph& g, const FusedGroup& group, int index,
                           StageNames names = StageNames::kFromGraph);

// The knobs of the group's schedule template (topi/strategy.h), as lower_to_te would offer them
// to its picker; none when its op has no template.
std::optional<topi::ConfigSpace> template_space(const graph::Graph& g, const FusedGroup& group,
                                                const CpuModel& cpu);

// The group's computes scheduled by its op's strategy (topi/strategy.h): the config `pick` gives,
// else the template's fallback. Stages named by position give a trace that replays on
// compute_group's schedule of the same names (the auto-scheduler's template sketch).
LoweredGroup lower_to_te(const graph::Graph& g, const FusedGroup& group, int index,
                         const CpuModel& cpu, const ConfigPicker& pick = {},
                         StageNames names = StageNames::kFromGraph);

}  // namespace tessel::passes
