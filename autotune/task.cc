#include "autotune/task.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>
#include <set>
#include <variant>

#include "ir/op_table.h"
#include "ir/ops/conv_packing.h"
#include "passes/graph_util.h"
#include "passes/pack_conv_weights.h"

namespace tessel::autotune {

namespace {

// Attribute values that shape a workload; tensors and subgraphs never occur on tunable ops.
std::string attr_text(const graph::Attr& a) {
  if (const auto* i = std::get_if<int64_t>(&a)) return std::to_string(*i);
  if (const auto* d = std::get_if<double>(&a)) return fmt::format("{}", *d);
  if (const auto* s = std::get_if<std::string>(&a)) return *s;
  if (const auto* is = std::get_if<std::vector<int64_t>>(&a))
    return fmt::format("[{}]", fmt::join(*is, ", "));
  if (const auto* ds = std::get_if<std::vector<double>>(&a))
    return fmt::format("[{}]", fmt::join(*ds, ", "));
  if (const auto* ss = std::get_if<std::vector<std::string>>(&a))
    return fmt::format("[{}]", fmt::join(*ss, ", "));
  return "?";
}

}  // namespace

namespace {

std::string workload_key(std::string_view op, const std::vector<std::string>& input_types,
                         const std::map<std::string, graph::Attr>& attrs) {
  std::string key(op);
  for (const std::string& t : input_types) key += "|" + t;
  std::vector<std::string> parts;
  for (const auto& [name, value] : attrs)
    parts.push_back(name + "=" + attr_text(value));  // map: sorted
  return parts.empty() ? key : key + "|" + fmt::format("{}", fmt::join(parts, ";"));
}

std::vector<std::string> input_types(const graph::Graph& g, const graph::Node& node) {
  std::vector<std::string> types;
  for (graph::ValueId v : node.inputs)
    types.push_back(v == graph::kNoValue ? std::string("-") : g.value(v).type.str());
  return types;
}

}  // namespace

std::string workload_key(const graph::Graph& g, const graph::Node& node) {
  return workload_key(graph::op_kind_name(node.op), input_types(g, node), node.attrs);
}

namespace {

// The keys of a ConvNCHWc whose input is `x` (NCHW), with input types `types` (x's first; its
// bias's unpadded) and attributes `attrs` without block attributes, in each activation layout of
// `b` channels a block: all NCHW first. Blocked, a padded last block's bias is padded too
// (passes/alter_op_layout).
std::vector<std::string> layout_keys(const graph::TensorType& x, std::vector<std::string> types,
                                     const std::map<std::string, graph::Attr>& attrs, int64_t b) {
  bool input = x.is_static() && x.shape.size() >= 3 && x.shape[1] % b == 0;
  std::string bias = types.size() > 2 && types[2] != "-" ? types[2] : "";
  if (auto o = attrs.find("output_channels"); o != attrs.end() && !bias.empty())
    bias = graph::TensorType{
        x.dtype,
        {graph::ops::padded_channels(std::get<int64_t>(o->second), b)},
        {}}.str();
  std::vector<std::string> keys;
  for (bool in : {false, true}) {
    for (bool out : {false, true}) {
      if (in && !input) continue;
      std::map<std::string, graph::Attr> a = attrs;
      graph::TensorType xt = x;
      if (in) {
        xt.shape = graph::ops::blocked_channels_shape(x.shape, b);
        a["input_block"] = graph::Attr(b);
      }
      if (out) a["output_block"] = graph::Attr(b);
      types.at(0) = xt.str();
      std::vector<std::string> t = types;
      if (out && !bias.empty()) t[2] = bias;
      keys.push_back(workload_key(graph::op_kind_name(graph::OpKind::ConvNCHWc), t, a));
    }
  }
  return keys;
}

}  // namespace

std::vector<std::string> packed_workload_keys(const graph::Graph& g, const graph::Node& conv,
                                              const CpuModel& cpu) {
  // What pack_conv_weights changes: the op, the weights' type, and the attributes.
  int64_t block = passes::conv_channel_block(cpu);
  std::vector<std::string> types = input_types(g, conv);
  types.at(1) = passes::packed_weight_type(g, conv, block).str();
  return layout_keys(g.value(conv.inputs[0]).type, types, passes::packed_attrs(g, conv, block),
                     block);
}

std::string packed_workload_key(const graph::Graph& g, const graph::Node& conv,
                                const CpuModel& cpu) {
  return packed_workload_keys(g, conv, cpu).front();
}

std::vector<std::string> layout_workload_keys(const graph::Graph& g, const graph::Node& nchwc) {
  graph::TensorType x = g.value(nchwc.inputs[0]).type;
  if (graph::ops::input_block(nchwc)) x.shape = graph::ops::unblocked_channels_shape(x.shape);
  std::map<std::string, graph::Attr> attrs = nchwc.attrs;
  std::vector<std::string> types = input_types(g, nchwc);
  // A padded conv writing blocks reads a padded bias: its NCHW forms read the unpadded one.
  if (graph::ops::output_block(nchwc) && nchwc.has_attr("output_channels") && types.size() > 2 &&
      types[2] != "-")
    types[2] = graph::TensorType{x.dtype, {nchwc.attr_int("output_channels", 0)}, {}}.str();
  attrs.erase("input_block");
  attrs.erase("output_block");
  return layout_keys(x, types, attrs, g.value(nchwc.inputs[1]).type.shape.back());
}

std::vector<Task> extract_tasks(const graph::Graph& g,
                                const std::vector<passes::FusedGroup>& groups, int graph) {
  std::vector<Task> tasks;
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < groups.size(); ++i) {
    const passes::FusedGroup& group = groups[i];
    const graph::Node& anchor = g.nodes.at(static_cast<size_t>(group.master));
    if (!anchor.def().tuned) continue;
    std::string key = workload_key(g, anchor);
    auto [it, fresh] = index.emplace(key, tasks.size());
    if (fresh)
      tasks.push_back({std::string(graph::op_kind_name(anchor.op)), key, 0,
                       passes::node_flops(g, anchor), static_cast<int>(i), graph, ""});
    ++tasks[it->second].weight;
  }
  return tasks;
}

std::vector<Task> extract_tasks_both_layouts(const graph::Graph& g,
                                             const std::vector<passes::FusedGroup>& groups,
                                             const graph::Graph& other,
                                             const std::vector<passes::FusedGroup>& other_groups) {
  std::vector<Task> tasks = extract_tasks(g, groups, 0);
  std::set<std::string> known;
  for (const Task& t : tasks) known.insert(t.workload);
  for (Task& t : extract_tasks(other, other_groups, 1)) {
    if (known.count(t.workload)) continue;
    // The pass rewrites nodes in place, so the anchor has the same id in both plans.
    graph::NodeId anchor = other_groups.at(static_cast<size_t>(t.group)).master;
    t.layout_of = workload_key(g, g.nodes.at(static_cast<size_t>(anchor)));
    tasks.push_back(std::move(t));
  }
  return tasks;
}

}  // namespace tessel::autotune
