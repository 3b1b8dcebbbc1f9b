// The auto-scheduler's task scheduler on synthetic histories: warm-up in order, then rounds go
// where weight times the expected gain is largest, and finished tasks get none.
#include "autotune/auto_schedule/task_scheduler.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace tessel::autotune {
namespace {

TEST(TaskSchedulerTest, WarmsUpEveryTaskInOrder) {
  std::vector<TaskHistory> tasks(3);
  tasks[0].best = {1e-3};
  EXPECT_EQ(next_task(tasks), 1);
  tasks[1].best = {1e-3};
  tasks[2].done = true;  // a task done before its warm-up is skipped
  EXPECT_NE(next_task(tasks), 2);
}

TEST(TaskSchedulerTest, WeightAndRecentGainsDecide) {
  // Two flat tasks of the same cost: the one that occurs ten times gets the round.
  std::vector<TaskHistory> tasks = {{1, {1e-3, 1e-3}, false}, {10, {1e-3, 1e-3}, false}};
  EXPECT_EQ(next_task(tasks), 1);
  // A task whose best keeps falling beats an equally weighted flat one of the same cost.
  tasks = {{1, {2e-3, 1.5e-3, 1e-3}, false}, {1, {1e-3, 1e-3, 1e-3}, false}};
  EXPECT_EQ(next_task(tasks), 0);
  EXPECT_GT(expected_gain(tasks[0]), expected_gain(tasks[1]));
  // The optimistic share shrinks with rounds: a task searched long gives way to a fresh one.
  TaskHistory old_task{1, std::vector<double>(40, 1e-3), false};
  TaskHistory fresh{1, {0.5e-3}, false};
  EXPECT_GT(expected_gain(fresh), expected_gain(old_task));
  // The expected gain of a flat task: (1 - alpha) x its cost / rounds, times its weight.
  EXPECT_DOUBLE_EQ(expected_gain({4, {2e-3, 2e-3}, false}), 4 * (1 - kGainAlpha) * 2e-3 / 2);
}

TEST(TaskSchedulerTest, DoneAndFailedTasksGetNoRound) {
  double inf = std::numeric_limits<double>::infinity();
  std::vector<TaskHistory> tasks = {{5, {1e-3}, true}, {1, {inf}, false}};
  EXPECT_EQ(expected_gain(tasks[1]), 0);
  EXPECT_EQ(next_task(tasks), 1);  // nothing better left
  tasks[1].done = true;
  EXPECT_EQ(next_task(tasks), -1);
}

}  // namespace
}  // namespace tessel::autotune
