// Tunable tasks of a model: one per distinct workload of a tunable anchor op (Conv, MatMul, Gemm)
// among the fused groups, with how often it occurs. A workload key names the op, its input types
// and its attributes, e.g. "Conv|float32[1, 64, 56, 56]|float32[64, 64, 3, 3]|group=1;pads=[1, 1,
// 1, 1]"; equal workloads give equal keys in every model and run (records are looked up by it).
#pragma once

#include <string>
#include <vector>

#include "codegen/cpu_model.h"
#include "ir/graph.h"
#include "passes/fuse_ops.h"

namespace tessel::autotune {

struct Task {
  std::string op;        // the anchor op type
  std::string workload;  // workload_key of the anchor
  int weight = 0;        // number of fused groups with this workload
  double flops = 0;      // of one occurrence (passes::node_flops)
  int group = -1;        // the first fused group with this workload (the one tuning measures)
  int graph = 0;         // which of the model's plans `group` belongs to (tune_tasks' graphs)
  // For a conv in the layout that passes::pack_conv_weights' rule did not pick: the workload of
  // the form it picked. Compile takes whichever form's best record is faster.
  std::string layout_of;
};

std::string workload_key(const graph::Graph& g, const graph::Node& node);
// The workload key a packable Conv (passes::is_packable) has once it is ConvNCHWc for `cpu`.
std::string packed_workload_key(const graph::Graph& g, const graph::Node& conv,
                                const CpuModel& cpu);
// The keys it may have once passes::alter_op_layout has also blocked its input, its output or
// both (what the pass does depends on the neighbours): packed_workload_key first.
std::vector<std::string> packed_workload_keys(const graph::Graph& g, const graph::Node& conv,
                                              const CpuModel& cpu);
// The keys of a ConvNCHWc node in each activation layout (its own among them). They share one
// template space: the blocks it computes are the same.
std::vector<std::string> layout_workload_keys(const graph::Graph& g, const graph::Node& nchwc);
// Tasks in order of first occurrence, in plan `graph`; requires a typed graph and its fused groups.
std::vector<Task> extract_tasks(const graph::Graph& g,
                                const std::vector<passes::FusedGroup>& groups, int graph = 0);
// The tasks of `g` (plan 0), then those of `other` (plan 1: the same model with every packable
// Conv in the other layout) that `g` lacks, each with its layout_of.
std::vector<Task> extract_tasks_both_layouts(const graph::Graph& g,
                                             const std::vector<passes::FusedGroup>& groups,
                                             const graph::Graph& other,
                                             const std::vector<passes::FusedGroup>& other_groups);

}  // namespace tessel::autotune
