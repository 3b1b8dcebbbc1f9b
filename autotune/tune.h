// The tuning loop (AutoTVM's tuner.tune over extracted tasks): for each task, measure the
// fallback config, then batches that a tuner proposes, each candidate built and run in isolation
// (autotune/measure.h) and checked against the reference executor; every result is appended to
// the records file as it arrives. Tuning resumes from the configs that file already holds and
// learns from prior records of similar workloads.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "autotune/measure.h"
#include "autotune/records.h"
#include "autotune/task.h"
#include "autotune/tuner.h"
#include "codegen/target.h"
#include "ir/graph.h"
#include "passes/fuse_ops.h"
#include "topi/config_space.h"

namespace tessel::autotune {

struct TuneOptions {
  std::string tuner = default_tuner_name();  // one of tuner_names()
  int trials = 200;                          // measured configs per task, the fallback included
  int early_stopping = 0;    // > 0: end a task after this many trials without a better config
  double time_budget_s = 0;  // > 0: for all tasks; each task gets an equal share of what is left
  // Configs proposed at a time. Model-based tuners learn after each batch, and candidates are
  // measured one at a time anyway: with 8 rather than 16, XGBoost's best after 48 trials of a
  // ResNet-50 conv rose from 183 to 192 GFLOP/s (bench/tune_bench tuners, 3 seeds).
  int batch_size = 8;
  // After the trials, the best `remeasure_top` configs and the fallback (unless it is the time
  // base of configs timed in turns with it) are measured `remeasure_rounds` more times, in turns;
  // the result and the records pool every measurement.
  int remeasure_top = 3;
  int remeasure_rounds = 2;
  // The fallback is measured again after every `control_every` trials (0: never), as a control:
  // the machine's speed drifts (a shared VM has slow phases lasting seconds), and the fallback's
  // cost, the baseline every config must beat, should not rest on the phase that its first
  // measurement caught. These measurements are not trials. Once configs are timed in turns with
  // the fallback (ConfigMeasurer's baseline), its cost is their time base and stays as it is:
  // no controls then.
  int control_every = 16;
  uint64_t seed = 0;
  MeasureOptions measure;
  std::string records_path;  // every measured config is appended here
  // Records of earlier runs: what records_path held before (a resumed run) and other files. The
  // configs they hold for a task's workload are not measured again; those of similar workloads
  // guide the XGBoost tuner (transfer).
  std::vector<TuningRecord> resume;
  std::vector<TuningRecord> prior;
};

// What the progress line shows after each measured config.
struct TuneProgress {
  int task = 0, num_tasks = 0;  // 0-based task position in this run, and the run's number of tasks
  const Task* info = nullptr;
  int trials_done = 0, trials_total = 0;
  double current_gflops = 0;  // the config just measured; 0 when it failed
  double best_gflops = 0;
  double elapsed_s = 0;   // since the task started
  bool finished = false;  // the task's last call
};

struct TaskResult {
  Task task;
  // Median costs over every measurement of the config, re-measurements and resumed records
  // included.
  double fallback_cost_s = 0;  // the untuned kernel; +infinity if it failed
  double best_cost_s = 0;      // the best config
  std::string best_config;     // its JSON
  bool pinned = false;         // the fallback, because the model check pinned it (Database::pinned)
  int trials = 0;              // configs measured in this run (re-measurements not counted)
  int errors = 0;              // of those, how many failed
  int invalid = 0;             // proposals the template's constraint rejected, skipped unmeasured
  int resumed = 0;             // distinct configs taken from earlier records instead of measured
  int slow_phases = 0;         // measurements in a slow phase of the machine (BaselineHistory)
  std::string stop_reason;     // "trials", "space exhausted", "early stopping", "time budget"
};

// Measures one config of a task's space (for a model's task, in an isolated child: measure.h).
// With a `baseline` config (the fallback, once its cost is known), the config's kernel is timed
// in turns with the baseline's (measure's baseline), whose times come back in baseline_costs_s; a
// measurer that cannot do so returns none, and the config is costed alone.
using ConfigMeasurer = std::function<MeasureResult(const topi::ConfigEntity& config,
                                                   const topi::ConfigEntity* baseline)>;

// The loop for one task: measures the fallback (unless resumed), then the tuner's batches until
// opt.trials configs are measured (resumed ones included), the space runs out, opt.early_stopping
// trials bring nothing better, or `time_budget_s` (> 0) is spent. Every result is appended to
// opt.records_path as it comes; progress.task and num_tasks are left 0.
TaskResult tune_task(const Task& task, const topi::ConfigSpace& space,
                     const ConfigMeasurer& measure, const std::string& target,
                     const TuneOptions& opt, double time_budget_s,
                     const std::function<void(const TuneProgress&)>& on_progress = {});

// A plan of the model that tasks were extracted from (Task::graph indexes a list of them).
struct TaskGraph {
  const graph::Graph* graph;
  const std::vector<passes::FusedGroup>* groups;
};

// Tunes `tasks` (from extract_tasks on `graphs`) for `target`. Throws tessel::Error for invalid
// options, an unknown tuner or an unwritable records file; a candidate's failure is a record,
// never an exception. The fallback config is always measured (or resumed), even when the trial
// budget is smaller, so that every task has its untuned baseline.
std::vector<TaskResult> tune_tasks(
    const std::vector<TaskGraph>& graphs, const std::vector<Task>& tasks, const Target& target,
    const TuneOptions& opt, const std::function<void(const TuneProgress&)>& on_progress = {});
// The same for tasks of one plan.
inline std::vector<TaskResult> tune_tasks(
    const graph::Graph& g, const std::vector<passes::FusedGroup>& groups,
    const std::vector<Task>& tasks, const Target& target, const TuneOptions& opt,
    const std::function<void(const TuneProgress&)>& on_progress = {}) {
  return tune_tasks({{&g, &groups}}, tasks, target, opt, on_progress);
}

}  // namespace tessel::autotune
