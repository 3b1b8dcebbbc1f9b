#include "autotune/task.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>
#include <variant>

#include "passes/graph_util.h"

namespace tessel::autotune {

namespace {

// Attribute values that shape a workload; tensors and subgraphs never occur on tunable ops.
std::string attr_text(const graph::Attr& a) {
  if (const auto* i = std::get_if<int64_t>(&a)) return std::to_string(*i);
  if (const auto* d = std::get_if<double>(&a)) return fmt::format("{}", *d);
  if (const auto* s = std::get_if<std::string>(&a)) return *s;
  if (const auto* is = std::get_if<std::vector<int64_t>>(&a)) return fmt::format("[{}]", fmt::join(*is, ", "));
  if (const auto* ds = std::get_if<std::vector<double>>(&a)) return fmt::format("[{}]", fmt::join(*ds, ", "));
  if (const auto* ss = std::get_if<std::vector<std::string>>(&a)) return fmt::format("[{}]", fmt::join(*ss, ", "));
  return "?";
}

}  // namespace

bool is_tunable(const std::string& op_type) {
  return op_type == "Conv" || op_type == "ConvNCHWc" || op_type == "MatMul" || op_type == "Gemm";
}

std::string workload_key(const graph::Graph& g, const graph::Node& node) {
  std::string key = node.op_type;
  for (graph::ValueId v : node.inputs) key += "|" + (v == graph::kNoValue ? std::string("-") : g.value(v).type.str());
  std::vector<std::string> attrs;
  for (const auto& [name, value] : node.attrs) attrs.push_back(name + "=" + attr_text(value));  // map: sorted
  return attrs.empty() ? key : key + "|" + fmt::format("{}", fmt::join(attrs, ";"));
}

std::vector<Task> extract_tasks(const graph::Graph& g, const std::vector<passes::FusedGroup>& groups) {
  std::vector<Task> tasks;
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < groups.size(); ++i) {
    const passes::FusedGroup& group = groups[i];
    const graph::Node& anchor = g.nodes.at(static_cast<size_t>(group.master));
    if (!is_tunable(anchor.op_type)) continue;
    std::string key = workload_key(g, anchor);
    auto [it, fresh] = index.emplace(key, tasks.size());
    if (fresh) tasks.push_back({anchor.op_type, key, 0, passes::node_flops(g, anchor), static_cast<int>(i)});
    ++tasks[it->second].weight;
  }
  return tasks;
}

}  // namespace tessel::autotune
