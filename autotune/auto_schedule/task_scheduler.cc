#include "autotune/auto_schedule/task_scheduler.h"

#include <algorithm>
#include <cmath>

namespace tessel::autotune {

double expected_gain(const TaskHistory& h) {
  if (h.best.empty()) return 0;
  size_t n = h.best.size();
  double now = h.best.back();
  if (!std::isfinite(now)) return 0;
  size_t w = std::min<size_t>(kGainWindow, n - 1);
  double backward = w == 0 || !std::isfinite(h.best[n - 1 - w])
                        ? 0
                        : (h.best[n - 1 - w] - now) / static_cast<double>(w);
  double optimistic = now / static_cast<double>(n);
  return h.weight * (kGainAlpha * backward + (1 - kGainAlpha) * optimistic);
}

int next_task(const std::vector<TaskHistory>& tasks) {
  int chosen = -1;
  double best_gain = -1;
  for (size_t i = 0; i < tasks.size(); ++i) {
    if (tasks[i].done) continue;
    if (tasks[i].best.empty()) return static_cast<int>(i);
    double g = expected_gain(tasks[i]);
    if (g > best_gain) {
      best_gain = g;
      chosen = static_cast<int>(i);
    }
  }
  return chosen;
}

}  // namespace tessel::autotune
