// The graph pass pipeline, in order, by opt level (a pass runs when opt_level >= its level):
//   infer_type (0, always: types and shape folding) -> simplify_inference (0) ->
//   decompose_recurrent (0, always: LSTM / GRU / RNN unrolled, as te has no recurrence) ->
//   remove_dead_code (1) -> fold_constant (2) -> pretranspose_weights (2) -> pack_dense_weights (2)
//   -> winograd_conv (2) -> pack_conv_weights (2) -> eliminate_common_subexpr (3) -> fuse_ops (1;
//   at level 0 every node is its own group) -> concat_in_place (2; on the groups).
// disabled_passes skips optimizations by name (tvmc's --disabled-pass); a disabled fuse_ops leaves
// every node its own group. The level-0 passes that lowering relies on cannot be disabled.
// TESSEL_DUMP_GRAPH=all (or pass names, comma-separated) prints the graph after those passes to
// stderr; after_pass sees every pass. Each pass's wall time is reported.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "codegen/cpu_model.h"
#include "passes/concat_in_place.h"
#include "passes/fuse_ops.h"
#include "passes/pack_conv_weights.h"

namespace tessel::passes {

struct GraphPipelineOptions {
  int opt_level = 3;
  std::vector<std::string> disabled_passes;  // Error for a name that is not an optional pass
  FuseOptions fuse;
  ConvLayoutChoice conv_layout;  // pack_conv_weights' choice; unset: its rule
  std::optional<CpuModel> cpu;   // the target, for the packing passes' rules; unset: the host
  std::function<void(const std::string& pass, const graph::Graph&)> after_pass;
  std::optional<std::string> dump;  // unset: read TESSEL_DUMP_GRAPH
};

struct PassTiming {
  std::string pass;
  double ms;
};

struct GraphPipelineResult {
  std::vector<FusedGroup> groups;
  InPlaceConcats in_place;  // Concat groups that run no kernel, their inputs written in place
  std::vector<PassTiming> timings;
};

GraphPipelineResult run_graph_pipeline(graph::Graph& g, const GraphPipelineOptions& opt = {});

// Whether group `i` of `result` runs a kernel: it computes something and is no in-place Concat.
bool runs_kernel(const graph::Graph& g, const GraphPipelineResult& result, size_t i);
// The memory plan of the kernels that `result`'s groups run, in order, with the in-place Concats'
// aliases.
MemoryPlan plan_kernel_memory(const graph::Graph& g, const GraphPipelineResult& result);

std::vector<std::string> graph_pass_names();

}  // namespace tessel::passes
