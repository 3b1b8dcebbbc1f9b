#include "autotune/auto_schedule/search_task.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <optional>

#include "autotune/records.h"
#include "ir/error.h"

namespace tessel::autotune {
namespace {

constexpr int64_t kMaxSteeringElements = 64;

// The group's computes and their DAG, without the template.
TaskComputation unscheduled_computation(const graph::Graph& g, const passes::FusedGroup& group,
                                        int index, const CpuModel& cpu) {
  passes::LoweredGroup lg = passes::compute_group(g, group, index, passes::StageNames::kByPosition);
  std::vector<te::Tensor> outputs(lg.args.end() - static_cast<std::ptrdiff_t>(group.outputs.size()),
                                  lg.args.end());
  ComputeDAG dag(outputs, lg.args, cpu);
  return {std::move(lg), std::move(dag), nullptr};
}

}  // namespace

std::string group_workload_key(const graph::Graph& g, const passes::FusedGroup& group) {
  auto source = [&](graph::ValueId v) -> std::string {
    if (v == graph::kNoValue) return "-";
    auto in = std::find(group.inputs.begin(), group.inputs.end(), v);
    if (in != group.inputs.end()) return fmt::format("in{}", in - group.inputs.begin());
    for (size_t j = 0; j < group.nodes.size(); ++j) {
      const std::vector<graph::ValueId>& outs = g.nodes[group.nodes[j]].outputs;
      auto o = std::find(outs.begin(), outs.end(), v);
      if (o != outs.end()) return fmt::format("n{}.{}", j, o - outs.begin());
    }
    return "?";
  };
  // Small integer constants steer shapes and offsets (Reshape's shape, Slice's starts, Pad's
  // pads): their values are part of the computation.
  auto steering = [&](graph::ValueId v) -> std::string {
    if (v == graph::kNoValue || !g.value(v).constant) return "";
    const graph::TensorData& t = *g.value(v).constant;
    if (!t.dtype().is_int() || t.numel() > kMaxSteeringElements) return "";
    std::vector<int64_t> values;
    for (int64_t i = 0; i < t.numel(); ++i) values.push_back(t.get_int(i));
    return fmt::format("=[{}]", fmt::join(values, ","));
  };
  std::vector<std::string> parts;
  for (graph::NodeId n : group.nodes) {
    const graph::Node& node = g.nodes[n];
    std::vector<std::string> from, to;
    for (graph::ValueId v : node.inputs) from.push_back(source(v) + steering(v));
    for (graph::ValueId v : node.outputs)
      to.push_back(v == graph::kNoValue ? std::string("-") : g.value(v).type.str());
    parts.push_back(
        fmt::format("{}({})->{}", workload_key(g, node), fmt::join(from, ","), fmt::join(to, ",")));
  }
  std::vector<std::string> outs;
  for (graph::ValueId v : group.outputs) outs.push_back(source(v));
  return fmt::format("{}{}|out={}", kAutoWorkloadPrefix, fmt::join(parts, " ; "),
                     fmt::join(outs, ","));
}

TaskComputation task_computation(const graph::Graph& g, const passes::FusedGroup& group, int index,
                                 const CpuModel& cpu) {
  TaskComputation c = unscheduled_computation(g, group, index, cpu);
  std::optional<topi::ConfigSpace> space;
  try {
    space = passes::lower_to_te(g, group, index, cpu, {}, passes::StageNames::kByPosition).space;
  } catch (const Error&) {
    // The rules' sketches still apply; the fallback's measurement reports the error.
  }
  if (space && space->size() > 1) {
    c.schedule_template = std::make_shared<ScheduleTemplate>(
        std::move(*space), [&g, &group, index, cpu](const topi::ConfigEntity& config) {
          auto pick = [&config](const topi::ConfigSpace&) { return config; };
          return passes::lower_to_te(g, group, index, cpu, pick, passes::StageNames::kByPosition)
              .schedule.trace();
        });
  }
  return c;
}

std::vector<Sketch> task_sketches(const TaskComputation& c) {
  std::vector<Sketch> out = generate_sketches(c.dag);
  if (c.schedule_template) {
    Sketch t;
    t.plans.resize(c.dag.stages().size());
    t.schedule_template = c.schedule_template;
    out.push_back(std::move(t));
  }
  return out;
}

std::vector<Task> extract_auto_tasks(const graph::Graph& g,
                                     const std::vector<passes::FusedGroup>& groups, int graph) {
  std::vector<Task> tasks;
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < groups.size(); ++i) {
    if (passes::computes_nothing(g, groups[i])) continue;
    std::string key = group_workload_key(g, groups[i]);
    auto [it, fresh] = index.emplace(key, tasks.size());
    if (fresh) {
      double flops =
          unscheduled_computation(g, groups[i], static_cast<int>(i), CpuModel{}).dag.flops();
      tasks.push_back({std::string(graph::op_kind_name(g.nodes[groups[i].master].op)), key, 0,
                       flops, static_cast<int>(i), graph, ""});
    }
    ++tasks[it->second].weight;
  }
  return tasks;
}

}  // namespace tessel::autotune
