// The auto-scheduler's tasks: every fused group of a model that computes something, one task per
// distinct group workload (not only Conv, MatMul and Gemm, as the template tuner's), and the
// compute DAG of a task.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "autotune/auto_schedule/compute_dag.h"
#include "autotune/auto_schedule/sketch.h"
#include "autotune/task.h"
#include "passes/lower_to_te.h"

namespace tessel::autotune {

// A stable key of a group's computation: "auto|" then each node's workload_key (op, input types,
// attributes) with where its inputs come from (group input k, or output o of the group's node j;
// with its values for an integer constant of at most 64 elements) and its output types, and which
// values leave the group. Equal groups give equal keys in every model and run.
std::string group_workload_key(const graph::Graph& g, const passes::FusedGroup& group);

// Tasks in order of first occurrence (Task::op is the group's anchor op, Task::flops that of its
// compute DAG); groups that compute nothing are skipped. Requires a typed graph and its groups.
std::vector<Task> extract_auto_tasks(const graph::Graph& g,
                                     const std::vector<passes::FusedGroup>& groups, int graph = 0);

// A task's group lowered to unscheduled computes, its stages named by position (a program's
// steps replay on any group of the task), their DAG, and the group's schedule template when its
// op has one (which refers to `g` and `group`: valid while they are).
struct TaskComputation {
  passes::LoweredGroup group;
  ComputeDAG dag;
  std::shared_ptr<const ScheduleTemplate> schedule_template;
};
TaskComputation task_computation(const graph::Graph& g, const passes::FusedGroup& group, int index,
                                 const CpuModel& cpu);

// The task's sketches: the rules' (generate_sketches), then the template sketch when it has one.
std::vector<Sketch> task_sketches(const TaskComputation& c);

}  // namespace tessel::autotune
