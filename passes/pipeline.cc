#include "passes/pipeline.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>

#include "codegen/target.h"
#include "ir/error.h"
#include "passes/alter_op_layout.h"
#include "passes/decompose_recurrent.h"
#include "passes/eliminate_common_subexpr.h"
#include "passes/fold_constant.h"
#include "passes/fuse_layer_norm.h"
#include "passes/graph_util.h"
#include "passes/infer_type.h"
#include "passes/inline_if.h"
#include "passes/pack_conv_weights.h"
#include "passes/pack_dense_weights.h"
#include "passes/pretranspose_weights.h"
#include "passes/simplify_inference.h"
#include "passes/winograd_conv.h"
#include "tir/pipeline.h"

namespace tessel::passes {

std::vector<std::string> graph_pass_names() {
  return {"infer_type",
          "inline_if",
          "simplify_inference",
          "decompose_recurrent",
          "remove_dead_code",
          "fold_constant",
          "fuse_layer_norm",
          "pretranspose_weights",
          "pack_dense_weights",
          "winograd_conv",
          "pack_conv_weights",
          "alter_op_layout",
          "eliminate_common_subexpr",
          "fuse_ops",
          "concat_in_place"};
}

namespace {

// Lowering needs these: types, no If, no Dropout or BatchNormalization, no recurrence.
const std::vector<std::string> kRequiredPasses = {"infer_type", "inline_if", "simplify_inference",
                                                  "decompose_recurrent"};

void check_disabled(const std::vector<std::string>& disabled) {
  std::vector<std::string> optional;
  for (const std::string& p : graph_pass_names()) {
    if (std::find(kRequiredPasses.begin(), kRequiredPasses.end(), p) == kRequiredPasses.end())
      optional.push_back(p);
  }
  for (const std::string& name : disabled) {
    if (std::find(optional.begin(), optional.end(), name) != optional.end()) continue;
    bool required =
        std::find(kRequiredPasses.begin(), kRequiredPasses.end(), name) != kRequiredPasses.end();
    throw Error(fmt::format(
        "disabled pass '{}' {}; the passes that can be disabled are: {}", name,
        required ? "is required to compile and cannot be disabled" : "is not a graph pass",
        fmt::join(optional, ", ")));
  }
}

}  // namespace

GraphPipelineResult run_graph_pipeline(graph::Graph& g, const GraphPipelineOptions& opt) {
  check_disabled(opt.disabled_passes);
  auto enabled = [&](const std::string& name) {
    return std::find(opt.disabled_passes.begin(), opt.disabled_passes.end(), name) ==
           opt.disabled_passes.end();
  };
  const char* env = std::getenv("TESSEL_DUMP_GRAPH");
  std::vector<std::string> dump =
      tir::parse_pass_list(opt.dump ? *opt.dump
                           : env    ? env
                                    : "",
                           graph_pass_names(), "TESSEL_DUMP_GRAPH", "graph");
  GraphPipelineResult result;
  auto run = [&](const std::string& name, int level, const std::function<void()>& pass) {
    // fuse_ops always runs: disabled, it makes every node its own group.
    if (opt.opt_level < level || (name != "fuse_ops" && !enabled(name))) return;
    auto t0 = std::chrono::steady_clock::now();
    pass();
    result.timings.push_back(
        {name,
         std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count()});
    if (opt.after_pass) opt.after_pass(name, g);
    if (std::find(dump.begin(), dump.end(), name) != dump.end())
      std::cerr << "// after " << name << "\n" << g.str();
  };
  run("infer_type", 0, [&] { infer_type(g); });
  run("inline_if", 0, [&] {
    if (inline_if(g)) infer_type(g);
  });
  run("simplify_inference", 0, [&] { simplify_inference(g); });
  run("decompose_recurrent", 0, [&] { decompose_recurrent(g); });
  run("remove_dead_code", 1, [&] { remove_dead_code(g); });
  run("fold_constant", 2, [&] { fold_constant(g); });
  run("fuse_layer_norm", 2, [&] { fuse_layer_norm(g); });
  run("pretranspose_weights", 2, [&] { pretranspose_weights(g); });
  CpuModel cpu = opt.cpu ? *opt.cpu : CpuModel::of(Target::host());
  run("pack_dense_weights", 2, [&] { pack_dense_weights(g, cpu); });
  run("winograd_conv", 2, [&] { winograd_conv(g, cpu); });
  run("pack_conv_weights", 2, [&] { pack_conv_weights(g, cpu, opt.conv_layout); });
  run("alter_op_layout", 2, [&] { alter_op_layout(g, cpu); });
  run("eliminate_common_subexpr", 3, [&] { eliminate_common_subexpr(g); });
  FuseOptions fuse = opt.fuse;
  if (opt.opt_level < 1 || !enabled("fuse_ops")) fuse.max_fused_ops = 1;
  run("fuse_ops", 0, [&] { result.groups = fuse_ops(g, fuse); });
  if (std::find(dump.begin(), dump.end(), "fuse_ops") != dump.end())
    std::cerr << to_string(g, result.groups);
  run("concat_in_place", 2, [&] { result.in_place = plan_in_place_concats(g, result.groups); });
  g.validate();
  return result;
}

bool runs_kernel(const graph::Graph& g, const GraphPipelineResult& result, size_t i) {
  return !computes_nothing(g, result.groups[i]) && !result.in_place.groups.count(i);
}

MemoryPlan plan_kernel_memory(const graph::Graph& g, const GraphPipelineResult& result) {
  std::vector<KernelIO> kernels;
  for (size_t i = 0; i < result.groups.size(); ++i) {
    if (runs_kernel(g, result, i))
      kernels.push_back({result.groups[i].inputs, result.groups[i].outputs});
  }
  return plan_memory(g, kernels, result.in_place.aliases);
}

}  // namespace tessel::passes
