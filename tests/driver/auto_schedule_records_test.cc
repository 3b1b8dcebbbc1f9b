// Auto-scheduler records at compile time: a group takes its task's best program when it beats the
// group's untuned kernel, on every group of the task (the steps name stages by position, not by
// the graph's names); a program that no longer replays is a warning, never a wrong kernel.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "../passes/graph_builder.h"
#include "autotune/auto_schedule/search.h"
#include "autotune/auto_schedule/search_task.h"
#include "autotune/records.h"
#include "autotune/task.h"
#include "driver/compile.h"
#include "passes/pipeline.h"
#include "reference/reference.h"
#include "tests/driver/reference_check.h"

namespace tessel {
namespace {
using passes::testing::Builder;
using passes::testing::random_tensor;

// Two MatMul + Relu groups of one computation (other weights, other node names), then a Softmax.
graph::Graph model() {
  Builder b;
  graph::ValueId x = b.input("x", {1, 8, 32});
  graph::ValueId h = b.op("MatMul", {x, b.constant("w0", random_tensor({32, 32}, 1))}, {}, "first");
  h = b.op("Relu", {h});
  h = b.op("MatMul", {h, b.constant("w1", random_tensor({32, 32}, 2))}, {}, "second");
  h = b.op("Relu", {h});
  h = b.op("Softmax", {h}, {{"axis", int64_t{-1}}});
  return b.finish({h});
}

struct Fixture {
  graph::Graph g = model();
  std::vector<passes::FusedGroup> groups = passes::run_graph_pipeline(g).groups;
  std::vector<autotune::Task> tasks = autotune::extract_auto_tasks(g, groups);
  std::string target = Target::parse(CompileOptions{}.target).str();

  // A measurement of the task's fallback (steps empty) or of a program's steps.
  autotune::TuningRecord record(const autotune::Task& task, const std::string& steps,
                                double cost) const {
    autotune::TuningRecord r;
    r.target = target;
    r.workload = task.workload;
    r.auto_schedule = true;
    r.fallback = steps.empty();
    r.steps = steps;
    r.config_index = steps.empty() ? 0 : autotune::steps_key(steps);
    r.config = steps.empty() ? "{}" : fmt::format(R"({{"program":"{:016x}"}})", r.config_index);
    r.costs = {cost, cost};
    return r;
  }

  // The model compiled with `records` as its tuning records.
  CompiledModel compile_with(const std::vector<autotune::TuningRecord>& records) const {
    CompileOptions opt;
    opt.tuning_records =
        (std::filesystem::temp_directory_path() / fmt::format("tessel-auto-{}.json", getpid()))
            .string();
    {
      std::ofstream out(opt.tuning_records);
      for (const auto& r : records) out << autotune::record_to_line(r) << "\n";
    }
    CompiledModel m = compile_graph(g, opt);
    std::filesystem::remove(opt.tuning_records);
    return m;
  }

  // The steps of a random program of `task`, of its first sketch or of its template sketch.
  std::string program_steps(const autotune::Task& task, uint64_t seed,
                            bool template_sketch = false) const {
    autotune::TaskComputation c =
        autotune::task_computation(g, groups.at(static_cast<size_t>(task.group)), task.group,
                                   CpuModel::of(Target::parse(target)));
    std::vector<autotune::Sketch> sketches = autotune::task_sketches(c);
    size_t k = template_sketch ? sketches.size() - 1 : 0;
    if (template_sketch && !sketches[k].schedule_template) {
      ADD_FAILURE() << task.workload << " has no template sketch";
      return "";
    }
    std::mt19937_64 rng(seed);
    autotune::Program p = autotune::sample_program(c.dag, sketches, k, rng);
    return autotune::apply(c.dag, sketches[k], p).trace().str();
  }
};

void expect_matches_reference(const graph::Graph& g, CompiledModel& m) {
  testing::expect_matches_reference(g, m, "x", {1, 8, 32}, 1e-5);
}

TEST(AutoScheduleRecordsTest, TheBestProgramAppliesToEveryGroupOfItsTask) {
  Fixture f;
  ASSERT_EQ(f.tasks.size(), 2u);
  const autotune::Task& matmul = f.tasks[0];
  ASSERT_EQ(matmul.weight, 2);
  std::string steps = f.program_steps(matmul, 1);
  CompiledModel m = f.compile_with({f.record(matmul, "", 1e-3), f.record(matmul, steps, 1e-4)});
  const TuningSummary& t = m.tuning();
  EXPECT_TRUE(t.warnings.empty()) << t.warnings.at(0);
  EXPECT_EQ(t.auto_scheduled, 2);
  int following = 0;
  for (const TuningSummary::Kernel& k : t.kernels)
    following += k.tuned && k.workload == matmul.workload ? 1 : 0;
  EXPECT_EQ(following, 2);
  expect_matches_reference(f.g, m);
}

TEST(AutoScheduleRecordsTest, ATemplateSketchsProgramAppliesToEveryGroupOfItsTask) {
  Fixture f;
  const autotune::Task& matmul = f.tasks[0];
  std::string steps = f.program_steps(matmul, 3, true);
  CompiledModel m = f.compile_with({f.record(matmul, "", 1e-3), f.record(matmul, steps, 1e-4)});
  const TuningSummary& t = m.tuning();
  EXPECT_TRUE(t.warnings.empty()) << t.warnings.at(0);
  EXPECT_EQ(t.auto_scheduled, 2);
  expect_matches_reference(f.g, m);
}

// The template's record is of the anchor's kernel timed against its own untuned kernel, the
// program's of the whole group: compile compares their speed-ups, not their seconds.
TEST(AutoScheduleRecordsTest, TheTunersCompareBySpeedUpOverTheirOwnUntunedKernels) {
  Fixture f;
  const autotune::Task& matmul = f.tasks[0];
  const graph::Node& master = f.g.nodes.at(f.groups.at(static_cast<size_t>(matmul.group)).master);
  ASSERT_TRUE(master.def().tuned) << master.describe();
  auto templated = [&](double cost, bool fallback) {
    autotune::TuningRecord r;
    r.target = f.target;
    r.workload = autotune::workload_key(f.g, master);
    r.fallback = fallback;
    r.config = fallback ? "{}" : R"({"tile_x":[4]})";
    r.config_index = fallback ? 0 : 7;
    r.costs = {cost, cost};
    return r;
  };
  // The template 1.11x faster than untuned, the program 10x, in 10x the template's seconds.
  CompiledModel m =
      f.compile_with({templated(1e-5, true), templated(0.9e-5, false), f.record(matmul, "", 1e-3),
                      f.record(matmul, f.program_steps(matmul, 1), 1e-4)});
  EXPECT_EQ(m.tuning().auto_scheduled, 2);
  expect_matches_reference(f.g, m);
}

// A template record of a config that the template does not take (an older template's) would
// not be applied, so it does not stand against the program either.
TEST(AutoScheduleRecordsTest, AProgramIsComparedWithTheBestRecordTheTemplateTakes) {
  Fixture f;
  const autotune::Task& matmul = f.tasks[0];
  const graph::Node& master = f.g.nodes.at(f.groups.at(static_cast<size_t>(matmul.group)).master);
  autotune::TuningRecord untuned, stale;
  untuned.target = stale.target = f.target;
  untuned.workload = stale.workload = autotune::workload_key(f.g, master);
  untuned.fallback = true;
  untuned.config = "{}";
  untuned.costs = {1e-5, 1e-5};
  stale.config = R"({"tile_x":[4]})";  // not a knob of the matmul template
  stale.config_index = 7;
  stale.costs = {1e-7, 1e-7};  // 100x faster than untuned
  // The program 10x faster than its untuned kernel.
  CompiledModel m = f.compile_with({untuned, stale, f.record(matmul, "", 1e-3),
                                    f.record(matmul, f.program_steps(matmul, 1), 1e-4)});
  EXPECT_EQ(m.tuning().auto_scheduled, 2);
  expect_matches_reference(f.g, m);
}

TEST(AutoScheduleRecordsTest, AProgramNoFasterThanTheFallbackIsNotApplied) {
  Fixture f;
  const autotune::Task& matmul = f.tasks[0];
  CompiledModel m = f.compile_with(
      {f.record(matmul, "", 1e-4), f.record(matmul, f.program_steps(matmul, 2), 0.97e-4)});
  EXPECT_EQ(m.tuning().auto_scheduled, 0);  // 3% is within kMinGainOverDefault
  expect_matches_reference(f.g, m);
}

TEST(AutoScheduleRecordsTest, StepsThatDoNotReplayAreAWarning) {
  Fixture f;
  const autotune::Task& matmul = f.tasks[0];
  CompiledModel m = f.compile_with(
      {f.record(matmul, "", 1e-3), f.record(matmul, "split n7 [0:i] [2] []\n", 1e-4)});
  const TuningSummary& t = m.tuning();
  EXPECT_EQ(t.auto_scheduled, 0);
  ASSERT_EQ(t.warnings.size(), 2u);  // once per group of the task
  EXPECT_NE(t.warnings[0].find("the auto-scheduler's best record of its group does not replay"),
            std::string::npos)
      << t.warnings[0];
  EXPECT_NE(t.warnings[0].find("schedule has no stage named 'n7'"), std::string::npos)
      << t.warnings[0];
  expect_matches_reference(f.g, m);
}

// Steps that replay onto the computes but do not lower (the MatMul computed at a loop of the Relu
// that a later step splits): a warning as well, where compile stopped with the error before.
TEST(AutoScheduleRecordsTest, StepsThatDoNotLowerAreAWarning) {
  Fixture f;
  const autotune::Task& matmul = f.tasks[0];
  CompiledModel m = f.compile_with(
      {f.record(matmul, "", 1e-3),
       f.record(matmul, "compute_at n0 [0:i0] [] [n1]\nsplit n1 [0:i0] [1] []\n", 1e-4)});
  const TuningSummary& t = m.tuning();
  EXPECT_EQ(t.auto_scheduled, 0);
  ASSERT_EQ(t.warnings.size(), 2u);
  EXPECT_NE(t.warnings[0].find("does not replay"), std::string::npos) << t.warnings[0];
  EXPECT_NE(t.warnings[0].find("no longer a leaf"), std::string::npos) << t.warnings[0];
  expect_matches_reference(f.g, m);
}

}  // namespace
}  // namespace tessel
