// The auto-scheduler's search on a model's tasks: invalid options are errors that name what is
// wrong, a run records the fallback and its trials, and a resumed run measures nothing twice.
#include "autotune/auto_schedule/search.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <set>

#include "autotune/auto_schedule/search_task.h"
#include "driver/compile.h"
#include "tests/common/expect_error.h"

namespace tessel::autotune {
namespace {

using tessel::testing::expect_error;

class SearchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    records_ = (std::filesystem::temp_directory_path() /
                ("tessel-search-" + std::to_string(getpid()) + ".json"))
                   .string();
    std::filesystem::remove(records_);
    plan_ = plan_graph(std::string(TESSEL_MODELS_DIR) + "/transformer_block.onnx");
    all_ = extract_auto_tasks(plan_.graph, plan_.groups);
  }
  void TearDown() override { std::filesystem::remove(records_); }

  std::vector<AutoScheduleResult> run(const AutoScheduleOptions& opt,
                                      const std::vector<Task>& tasks) {
    RandomCostModel model(1);
    return auto_schedule_tasks({{&plan_.graph, &plan_.groups}}, tasks, target_, opt, model);
  }
  AutoScheduleOptions fast(int trials) const {
    AutoScheduleOptions opt;
    opt.trials = trials;
    opt.per_round = 4;
    opt.population = 16;
    opt.measure.number = opt.measure.repeat = 1;
    opt.records_path = records_;
    return opt;
  }

  // The block's first MatMul task (the attention product), alone.
  std::vector<Task> attention_matmul() const {
    for (const Task& t : all_) {
      if (t.op == "MatMul") return {t};
    }
    return {};
  }

  std::string records_;
  GraphPlan plan_;
  std::vector<Task> all_;
  Target target_ = Target::parse("llvm -mcpu=native");
};

TEST_F(SearchTest, InvalidOptionsAreErrors) {
  AutoScheduleOptions opt = fast(4);
  opt.trials = 0;
  expect_error([&] { run(opt, all_); }, {"auto-schedule: trials must be at least 1, got 0"});
  opt = fast(4);
  opt.mutation_weights = {1, 0, 0};
  expect_error([&] { run(opt, all_); }, {"mutation weights must be 5 finite numbers"});
  opt = fast(4);
  opt.eps_greedy = 1.5;
  expect_error([&] { run(opt, all_); }, {"a probability must be in [0, 1], got 1.5"});
  opt = fast(4);
  opt.remeasure_top = -1;
  expect_error([&] { run(opt, all_); }, {"remeasure_top (-1) and remeasure_rounds (2)"});
  opt = fast(4);
  opt.records_path.clear();
  expect_error([&] { run(opt, all_); }, {"a records file is needed"});
  EXPECT_FALSE(std::filesystem::exists(records_));
}

TEST_F(SearchTest, ARunRecordsItsTrialsAndAResumeMeasuresNothingTwice) {
  // The attention matmul (a reduction with data reuse) and a softmax.
  std::vector<Task> tasks;
  for (const Task& t : all_) {
    if (t.op == "MatMul" && tasks.empty()) tasks.push_back(t);
    if (t.op == "Softmax") tasks.push_back(t);
  }
  ASSERT_EQ(tasks.size(), 2u);
  std::vector<AutoScheduleResult> first = run(fast(8), tasks);
  ASSERT_EQ(first.size(), 2u);
  int trials = 0;
  for (const AutoScheduleResult& r : first) {
    trials += r.trials;
    EXPECT_EQ(r.invalid, 0) << r.first_invalid;
    EXPECT_TRUE(std::isfinite(r.fallback_cost_s));
    EXPECT_LE(r.best_cost_s, r.fallback_cost_s);
  }
  EXPECT_EQ(trials, 8);
  std::vector<std::string> warnings;
  std::vector<TuningRecord> records = load_records(records_, &warnings);
  EXPECT_TRUE(warnings.empty());
  std::set<uint64_t> programs;
  for (const TuningRecord& r : records) {
    EXPECT_TRUE(r.auto_schedule);
    EXPECT_NE(r.error, MeasureError::kWrongAnswer) << r.error_msg;
    if (!r.fallback) programs.insert(r.config_index);
    // Programs are timed in turns with the fallback, which is timed alone.
    size_t paired = r.fallback || r.error != MeasureError::kNone ? 0 : r.costs.size();
    EXPECT_EQ(r.fallback_costs.size(), paired);
  }

  AutoScheduleOptions again = fast(8);
  again.resume = records;
  std::vector<AutoScheduleResult> second = run(again, tasks);
  std::vector<TuningRecord> after = load_records(records_, nullptr);
  size_t new_programs = 0;
  for (size_t i = records.size(); i < after.size(); ++i) {
    if (!after[i].fallback && programs.insert(after[i].config_index).second) ++new_programs;
  }
  EXPECT_EQ(second[0].resumed + second[1].resumed,
            static_cast<int>(programs.size() - new_programs));
  // --trials counts this run's measurements (as TVM's auto-scheduler counts a resumed run's);
  // every one is a program not measured before. The other new lines re-measure each task's
  // finalists (its best 3, twice each), in turns with the fallback, which is measured again on
  // its own only where it could not be built as their baseline.
  EXPECT_EQ(second[0].trials + second[1].trials, 8);
  EXPECT_EQ(new_programs, 8u);
  EXPECT_LE(after.size() - records.size(),
            8u + 2u * static_cast<size_t>((again.remeasure_top + 1) * again.remeasure_rounds));
}

TEST_F(SearchTest, TheBestProgramsAreMeasuredAgainWhenOneBeatsTheFallback) {
  std::vector<Task> tasks = attention_matmul();
  ASSERT_EQ(tasks.size(), 1u);
  AutoScheduleOptions opt = fast(8);
  opt.remeasure_top = 2;
  opt.remeasure_rounds = 2;
  std::vector<AutoScheduleResult> result = run(opt, tasks);
  // Lines per program, failed measurements too; and the programs measured without error.
  std::map<uint64_t, int> lines;
  std::set<uint64_t> measured;
  for (const TuningRecord& r : load_records(records_, nullptr)) {
    if (r.fallback) continue;
    ++lines[r.config_index];
    if (r.error == MeasureError::kNone) measured.insert(r.config_index);
  }
  ASSERT_FALSE(lines.empty());
  int again = 0, once = 0;
  for (const auto& [config, n] : lines) {
    again += n == 1 + opt.remeasure_rounds ? 1 : 0;
    once += n == 1 ? 1 : 0;
  }
  EXPECT_EQ(again + once, static_cast<int>(lines.size()));  // no other count of lines
  // A program kept over the fallback was a finalist; the finalists are the best 2 measured ones,
  // each measured once in the search and twice after it, when a program was chosen before the
  // re-measurement (which may then have handed the task back to the fallback).
  if (!result[0].best_steps.empty()) {
    EXPECT_GT(again, 0);
  }
  if (again > 0) {
    EXPECT_EQ(again, std::min(2, static_cast<int>(measured.size())));
  }

  std::filesystem::remove(records_);
  opt.remeasure_top = 0;  // none
  run(opt, tasks);
  std::map<uint64_t, int> unmeasured_again;
  for (const TuningRecord& r : load_records(records_, nullptr)) {
    if (!r.fallback) {
      EXPECT_EQ(++unmeasured_again[r.config_index], 1);
    }
  }
}

TEST_F(SearchTest, ATimeBudgetLeavesRoomForTheFinalists) {
  std::vector<Task> tasks = attention_matmul();
  ASSERT_EQ(tasks.size(), 1u);
  AutoScheduleOptions opt = fast(1000);
  opt.time_budget_s = 4;
  auto start = std::chrono::steady_clock::now();
  std::vector<AutoScheduleResult> result = run(opt, tasks);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(result[0].stop_reason, "time budget");
  std::map<uint64_t, int> lines;
  for (const TuningRecord& r : load_records(records_, nullptr)) {
    if (!r.fallback) ++lines[r.config_index];
  }
  int again = 0;
  for (const auto& [config, n] : lines) again += n > 1 ? 1 : 0;
  // Kept over the fallback, its program was re-measured, and the run (the fallback's measurement
  // included) ended near the budget: a generous bound, for sanitizer builds.
  if (!result[0].best_steps.empty()) {
    EXPECT_GT(again, 0);
  }
  EXPECT_LT(seconds, 3 * opt.time_budget_s + 10);
}

}  // namespace
}  // namespace tessel::autotune
