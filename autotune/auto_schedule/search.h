// The auto-scheduler's search over a model's tasks (Ansor's SketchPolicy and task scheduler): per
// round of a task, an evolutionary search guided by the cost model proposes programs, a batch of
// them is measured (built, checked against the reference executor and timed in isolation, as the
// template tuner's candidates are) and appended to the records file, and the model learns from it.
// The task scheduler (task_scheduler.h) decides which task gets the next round.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "autotune/auto_schedule/cost_model.h"
#include "autotune/measure.h"
#include "autotune/records.h"
#include "autotune/task.h"
#include "autotune/tune.h"
#include "codegen/target.h"

namespace tessel::autotune {

// Ansor's defaults (TVM's SketchPolicy) and ours, for a 2-core machine where one measurement,
// build included, takes about 0.2 s: a round of 64 would hold one task for over 10 s, and the
// cost model scores about 2,000 programs a second, so the population is smaller too
// (docs/auto-scheduler.md).
struct AutoScheduleOptions {
  int trials = 1000;            // measured programs in all, over every task (tvmc's --trials)
  double time_budget_s = 0;     // > 0: for the whole run
  int early_stopping = 0;       // > 0: a task ends after this many trials without a better program
  int population = 256;         // Ansor 2048
  int generations = 4;          // Ansor 4
  int per_round = 16;           // measured programs per round; Ansor 64
  double mutation_prob = 0.85;  // Ansor 0.85
  double eps_greedy = 0.05;     // share of a round's batch picked at random; Ansor 0.05
  // Tile size, parallel, unroll, vectorize, compute location. Ansor: tile size 0.90, parallel
  // 0.01, unroll 0.04, compute location 0.05; vectorization, a choice of its own here, takes 0.02
  // of the tile sizes' share.
  std::vector<double> mutation_weights = {0.88, 0.01, 0.04, 0.02, 0.05};
  uint64_t seed = 0;
  // After the search, each task's best `remeasure_top` programs (when the best is chosen over the
  // fallback, at least 5% faster) are measured `remeasure_rounds` more times, in turns, and
  // pooled with their first costs, as the template tuner's finalists are: the program kept then
  // rests on more than the luckiest of many measurements. A time budget leaves room for it.
  int remeasure_top = 3;
  int remeasure_rounds = 2;
  MeasureOptions measure;
  std::string records_path;  // every measurement is appended here
  // Records of an earlier run of the same file: programs they hold are not measured again, and
  // a task's fallback is taken from them.
  std::vector<TuningRecord> resume;
};

struct AutoScheduleProgress {
  int task = 0, num_tasks = 0;  // the task just searched (position in the run)
  const Task* info = nullptr;
  int round = 0;  // its rounds so far
  int trials_done = 0, trials_total = 0;
  double best_cost_s = 0;    // the task's best so far (its fallback when nothing beats it)
  double est_latency_s = 0;  // sum over tasks of weight x best cost
  double elapsed_s = 0;      // since the run started
};

struct AutoScheduleResult {
  Task task;
  int sketches = 0;
  double fallback_cost_s = 0;  // the compiler's own schedule; +infinity if it failed
  double best_cost_s = 0;      // the best program's (or the fallback's) pooled median cost
  std::string best_steps;      // its te trace; empty when the fallback stays best
  int rounds = 0, trials = 0, errors = 0;
  int invalid = 0;      // programs whose schedule threw: a bug of a rule, reported
  int resumed = 0;      // distinct programs taken from earlier records
  int slow_phases = 0;  // measurements in a slow phase of the machine (BaselineHistory)
  // Seconds spent proposing programs (evolution and cost model) and measuring them.
  double search_s = 0, measure_s = 0;
  std::string first_invalid;  // the first such error's message
  // "trials", "time budget", "early stopping", or, with nothing new to measure for
  // 3 rounds, "no new programs" ("invalid programs" when the last one's were)
  std::string stop_reason;
};

// Searches `tasks` (extract_auto_tasks on `graphs`) for `target`. Throws tessel::Error for invalid
// options or an unwritable records file; a candidate's failure is a record, never an exception.
std::vector<AutoScheduleResult> auto_schedule_tasks(
    const std::vector<TaskGraph>& graphs, const std::vector<Task>& tasks, const Target& target,
    const AutoScheduleOptions& opt, CostModel& model,
    const std::function<void(const AutoScheduleProgress&)>& on_progress = {});

// A stable 64-bit key of a program's steps (FNV-1a): its records' config_index.
uint64_t steps_key(const std::string& steps);

}  // namespace tessel::autotune
