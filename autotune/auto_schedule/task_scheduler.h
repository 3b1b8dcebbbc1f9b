// Which task the auto-scheduler searches next (Ansor's gradient-based task scheduler, section
// 6): after a warm-up round of each, the task whose next round promises the largest drop of the
// model's latency: its weight (occurrences in the model) times a blend of how fast its best cost
// fell over its last rounds and an optimistic share of its best cost, which shrinks as the task
// gets more rounds.
#pragma once

#include <vector>

namespace tessel::autotune {

struct TaskHistory {
  int weight = 1;
  // The task's best cost in seconds after each of its rounds (the first: after its warm-up).
  std::vector<double> best;
  bool done = false;  // stopped early, or out of programs: never chosen again
};

// Ansor's defaults: alpha weighs the observed gain against the optimistic one; the backward window
// is this many rounds.
constexpr double kGainAlpha = 0.2;
constexpr int kGainWindow = 3;

// The expected drop of the model's latency (seconds) from one more round of the task.
double expected_gain(const TaskHistory& h);

// The next task to search: the first without a round yet, else the one of largest expected_gain
// (the first of equals); -1 when every task is done.
int next_task(const std::vector<TaskHistory>& tasks);

}  // namespace tessel::autotune
