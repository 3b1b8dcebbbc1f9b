// Tunable tasks of a model: one per distinct workload of a tunable anchor op (Conv, MatMul, Gemm)
// among the fused groups, with how often it occurs. A workload key names the op, its input types
// and its attributes, e.g. "Conv|float32[1, 64, 56, 56]|float32[64, 64, 3, 3]|group=1;pads=[1, 1, 1, 1]";
// equal workloads give equal keys in every model and run (records are looked up by it).
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"
#include "passes/fuse_ops.h"

namespace tessel::autotune {

struct Task {
  std::string op;        // the anchor op type
  std::string workload;  // workload_key of the anchor
  int weight = 0;        // number of fused groups with this workload
  double flops = 0;      // of one occurrence (passes::node_flops)
  int group = -1;        // the first fused group with this workload (the one tuning measures)
};

// The op types that have tuning templates.
bool is_tunable(const std::string& op_type);
std::string workload_key(const graph::Graph& g, const graph::Node& node);
// Tasks in order of first occurrence; requires a typed graph and its fused groups.
std::vector<Task> extract_tasks(const graph::Graph& g, const std::vector<passes::FusedGroup>& groups);

}  // namespace tessel::autotune
