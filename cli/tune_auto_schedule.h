// tessel tune --auto-schedule: the template-free tuner over every fused kernel of a model
// (autotune/auto_schedule/), with its task list, sketches, progress line and summary table.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "autotune/auto_schedule/search.h"
#include "autotune/task.h"
#include "driver/compile.h"

namespace tessel::cli {

struct AutoScheduleRun {
  std::string model, output, tasks = "all";
  bool show_sketches = false;
  autotune::AutoScheduleOptions search;  // trials 0: k(Budgeted)TrialsPerTask per task
  std::function<void()> model_check;     // after the search, when set
};
// The --trials a run without one gets, per task it tunes: without a time budget, and with one (so
// that the budget, early stopping or a task running out of new programs ends the run, not the
// trials; TVM's tutorials give a task about 800-1000).
constexpr int kTrialsPerTask = 64;
constexpr int kBudgetedTrialsPerTask = 1000;

void run_auto_schedule(AutoScheduleRun run, const CompileOptions& copt);

// Shared with the template tuner's command (tune_command.cc).
std::vector<size_t> parse_task_list(const std::string& text, size_t num_tasks);
void print_tasks(const std::vector<autotune::Task>& tasks);
// The summary's line on measurements in a slow phase of the machine (autotune::BaselineHistory),
// summed over the tasks; none when there were none.
void print_slow_phases(int measurements);

}  // namespace tessel::cli
