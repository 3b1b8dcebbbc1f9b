// tessel inspect MODEL.onnx [--input-shapes S] [--dot FILE] [--svg FILE]: inputs and outputs, op
// histogram, unsupported ops, the fusion groups after the graph pipeline (drawn with --dot/--svg)
// and the memory plan, without compiling kernels.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <iostream>
#include <map>
#include <memory>
#include <optional>

#include "cli/cli_util.h"
#include "cli/commands.h"
#include "cli/graph_dot.h"
#include "frontend/onnx_importer.h"
#include "passes/fuse_ops.h"
#include "passes/pipeline.h"

namespace tessel::cli {

namespace {

struct InspectArgs {
  std::string model, input_shapes, dot, svg;
};

void print_values(const std::vector<std::pair<std::string, graph::TensorType>>& values,
                  const char* what) {
  std::cout << what << ":\n";
  for (const auto& [name, type] : values)
    std::cout << fmt::format("  {:<24} {}\n", name, type.str());
}

std::vector<std::pair<std::string, graph::TensorType>> typed(
    const graph::Graph& g, const std::vector<graph::ValueId>& values) {
  std::vector<std::pair<std::string, graph::TensorType>> out;
  for (graph::ValueId v : values) out.emplace_back(g.value(v).name, g.value(v).type);
  return out;
}

// A model with unsupported ops does not import: what its file declares is shown instead.
void run_inspect(const InspectArgs& a) {
  frontend::ImportOptions opt;
  if (!a.input_shapes.empty()) opt.input_shapes = parse_input_shapes(a.input_shapes);
  frontend::ModelOverview overview = frontend::overview_onnx(a.model, opt);
  std::optional<graph::Graph> imported;
  if (overview.unsupported.empty()) imported = frontend::import_onnx(a.model, opt);

  int nodes = 0;
  for (const auto& [op, count] : overview.op_counts) nodes += count;
  std::cout << fmt::format("model {} (ai.onnx opset {}): {} nodes\n", a.model, overview.opset,
                           nodes);
  print_values(imported ? typed(*imported, imported->inputs) : overview.inputs, "inputs");
  print_values(imported ? typed(*imported, imported->outputs) : overview.outputs, "outputs");
  std::cout << "ops:\n";
  for (const auto& [op, count] : overview.op_counts)
    std::cout << fmt::format("  {:<24} {}\n", op, count);
  if (!imported) {
    std::cout << "unsupported ops:\n" << frontend::format_unsupported_ops(overview.unsupported);
    return;
  }
  std::cout << "unsupported ops: none\n";
  graph::Graph& g = *imported;
  frontend::require_static_inputs(g);
  passes::GraphPipelineResult result = passes::run_graph_pipeline(g);
  std::cout << fmt::format("fusion groups ({}):\n{}", result.groups.size(),
                           passes::to_string(g, result.groups));
  if (!a.dot.empty() || !a.svg.empty()) {
    std::string dot = fused_graph_dot(g, result.groups, a.model);
    if (!a.dot.empty()) write_text_file(a.dot, "the DOT file", dot);
    if (!a.svg.empty()) render_svg_with_graphviz(dot, a.svg);
  }
  std::cout << passes::plan_kernel_memory(g, result).summary() << "\n";
}

}  // namespace

void add_inspect_command(CLI::App& app) {
  auto args = std::make_shared<InspectArgs>();
  CLI::App* cmd =
      app.add_subcommand("inspect", "Describe an ONNX model: I/O, ops, fusion groups, memory plan");
  cmd->add_option("model", args->model, "the ONNX model file")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--input-shapes", args->input_shapes,
                  "input shapes, e.g. \"data:[1,3,224,224]\"");
  cmd->add_option("--dot", args->dot,
                  "write the fused graph as Graphviz DOT: a cluster per fusion group, colored by "
                  "pattern, tensor types on the edges");
  cmd->add_option("--svg", args->svg, "draw the fused graph as SVG with Graphviz's dot");
  cmd->callback([args] { run_inspect(*args); });
}

}  // namespace tessel::cli
