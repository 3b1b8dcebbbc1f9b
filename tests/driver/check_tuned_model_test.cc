// The model check of tessel tune: the build with records against the untuned build, in the model,
// and the vetoes that make compile pass over configs that lose there.
#include "driver/check_tuned_model.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "autotune/records.h"
#include "autotune/task.h"
#include "autotune/tune.h"
#include "tests/common/expect_error.h"

namespace tessel {
namespace {

using testing::expect_error;

const std::string kModel = std::string(TESSEL_MODELS_DIR) + "/resnet_mini.onnx";

class TempRecords {
 public:
  explicit TempRecords(const std::string& name)
      : path_((std::filesystem::temp_directory_path() /
               fmt::format("tessel-check-{}-{}.json", getpid(), name))
                  .string()) {}
  ~TempRecords() { std::filesystem::remove(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Records that make compile apply a measured, non-fallback config to resnet_mini's first conv: a
// few real trials, rewritten so that one config clearly beats the fallback.
autotune::TuningRecord write_records_with_a_tuned_conv(const std::string& path) {
  GraphPlan plan = plan_graph(kModel);
  std::vector<autotune::Task> tasks = autotune::extract_tasks(plan.graph, plan.groups);
  TempRecords measured("measured");
  autotune::TuneOptions opt;
  opt.tuner = "random";
  opt.trials = 4;
  opt.measure.number = 1;
  opt.measure.repeat = 1;
  opt.measure.min_repeat_ms = 0;
  opt.remeasure_rounds = 0;
  opt.records_path = measured.path();
  autotune::tune_tasks({{&plan.graph, &plan.groups}}, {tasks.at(0)},
                       Target::parse(CompileOptions().target), opt);
  std::vector<autotune::TuningRecord> records = autotune::load_records(measured.path(), nullptr);
  auto fallback =
      std::find_if(records.begin(), records.end(), [](const auto& r) { return r.fallback; });
  auto other = std::find_if(records.begin(), records.end(), [](const auto& r) {
    return !r.fallback && r.error == autotune::MeasureError::kNone;
  });
  EXPECT_NE(fallback, records.end());
  EXPECT_NE(other, records.end());
  fallback->costs = {1.0};
  other->costs = {1e-6};
  autotune::RecordWriter writer(path);
  writer.write(*fallback);
  writer.write(*other);
  return *other;
}

// The model check of resnet_mini with `records`, in `rounds` short rounds.
ModelCheck check_with(const std::string& records, int rounds) {
  CompileOptions opt;
  opt.tuning_records = records;
  ModelCheckOptions mopt;
  mopt.rounds = rounds;
  mopt.min_batch_ms = 1;
  return check_tuned_model(kModel, opt, mopt);
}

TEST(CheckTunedModel, TimesTheKernelsTheRecordsChangeAndVetoesTheSlowerOnes) {
  TempRecords records("records");
  autotune::TuningRecord tuned = write_records_with_a_tuned_conv(records.path());
  ModelCheck check = check_with(records.path(), 3);
  EXPECT_EQ(check.rounds, 3);
  EXPECT_GE(check.runs_per_round, 1);
  EXPECT_LT(check.max_output_diff, 1e-4);
  EXPECT_GT(check.untuned_ms, 0);
  EXPECT_GT(check.tuned_ms, 0);
  EXPECT_GT(check.speedup, 0);
  // Only the first conv has a record that changes it.
  ASSERT_EQ(check.workloads.size(), 1u);
  const WorkloadCheck& k = check.workloads[0];
  EXPECT_EQ(k.workload, tuned.workload);
  EXPECT_EQ(nlohmann::json::parse(k.config), nlohmann::json::parse(tuned.config));
  // The first conv is packed or not as pack_conv_weights' rule decides for the host.
  std::string kernel =
      tuned.workload.starts_with("ConvNCHWc|") ? "fused_convnchwc_relu_0" : "fused_conv_relu_0";
  EXPECT_EQ(k.untuned_kernels, std::vector<std::string>{kernel});
  EXPECT_EQ(k.tuned_kernels, k.untuned_kernels);
  EXPECT_GT(k.untuned_ms, 0);
  EXPECT_GT(k.tuned_ms, 0);
  EXPECT_GT(k.speedup, 0);
  EXPECT_EQ(k.untuned_workload, tuned.workload);  // the rule's layout, which the records kept
  ASSERT_EQ(k.round_speedups.size(), 3u);
  EXPECT_DOUBLE_EQ(k.speedup, autotune::median_cost(k.round_speedups));

  // A workload faster in the model keeps its config; a slower one gets a veto record.
  ModelCheck faster = check, slower = check;
  faster.workloads[0].speedup = 1.2;
  slower.workloads[0].speedup = 0.9;
  EXPECT_EQ(veto_slower_workloads(faster, records.path()), 0);
  EXPECT_EQ(autotune::load_records(records.path(), nullptr).size(), 2u);
  EXPECT_EQ(veto_slower_workloads(slower, records.path()), 1);
  std::vector<autotune::TuningRecord> saved = autotune::load_records(records.path(), nullptr);
  ASSERT_EQ(saved.size(), 3u);
  // A verdict of its own kind, with the check behind it.
  ASSERT_TRUE(saved[2].is_verdict(autotune::VerdictKind::kVeto));
  EXPECT_EQ(saved[2].config, tuned.config);
  EXPECT_TRUE(saved[2].costs.empty());
  EXPECT_DOUBLE_EQ(saved[2].verdict->tuned_ms, k.tuned_ms);
  EXPECT_DOUBLE_EQ(saved[2].verdict->untuned_ms, k.untuned_ms);
  EXPECT_DOUBLE_EQ(saved[2].verdict->speedup, 0.9);
  EXPECT_EQ(saved[2].verdict->rounds, 3);
  EXPECT_EQ(saved[2].verdict->kernels, k.tuned_kernels);
  EXPECT_TRUE(autotune::Database(saved).best(check.target, tuned.workload)->fallback);
  // The checked config is vetoed now: a second veto of it means the file changed, and nothing is
  // written.
  expect_error([&] { veto_slower_workloads(slower, records.path()); },
               {records.path(), "changed during the model check", tuned.workload});
  EXPECT_EQ(autotune::load_records(records.path(), nullptr).size(), 3u);

  // With the veto, the records leave every kernel as untuned: no workload to judge.
  EXPECT_TRUE(check_with(records.path(), 3).workloads.empty());
}

// A faster record that compile passes over (an older template's config) does not hide the
// checked config: its veto is written.
TEST(CheckTunedModel, ARecordCompilePassesOverDoesNotHideTheCheckedConfig) {
  TempRecords records("passed_over");
  autotune::TuningRecord tuned = write_records_with_a_tuned_conv(records.path());
  autotune::TuningRecord stale = tuned;
  stale.config = R"({"tile_row":[1,8],"tiles":[2]})";
  stale.config_index = tuned.config_index + 1;
  stale.costs = {1e-7};
  autotune::RecordWriter(records.path()).write(stale);
  ModelCheck check = check_with(records.path(), 1);
  ASSERT_EQ(check.workloads.size(), 1u);
  EXPECT_EQ(nlohmann::json::parse(check.workloads[0].config), nlohmann::json::parse(tuned.config));
  check.workloads[0].speedup = 0.9;
  EXPECT_EQ(veto_slower_workloads(check, records.path()), 1);
  std::vector<autotune::TuningRecord> saved = autotune::load_records(records.path(), nullptr);
  ASSERT_EQ(saved.size(), 4u);
  EXPECT_TRUE(saved[3].is_verdict(autotune::VerdictKind::kVeto));
  EXPECT_EQ(saved[3].config_index, tuned.config_index);
}

// When the build the passes settled on runs slower end to end than the untuned one, every
// workload, the faster ones too, gets its untuned kernel back (cli/tune_command.cc).
TEST(CheckTunedModel, EveryWorkloadIsPinnedWhenTheBuildIsSlowerEndToEnd) {
  TempRecords records("every");
  autotune::TuningRecord tuned = write_records_with_a_tuned_conv(records.path());
  ModelCheck check = check_with(records.path(), 1);
  ASSERT_EQ(check.workloads.size(), 1u);
  check.workloads[0].speedup = 1.2;
  const std::string& judged = check.workloads[0].judged_as();
  EXPECT_EQ(veto_slower_workloads(check, records.path(), {judged}), 0);  // faster: kept
  EXPECT_EQ(veto_slower_workloads(check, records.path(), {judged}, true), 1);
  std::vector<autotune::TuningRecord> saved = autotune::load_records(records.path(), nullptr);
  ASSERT_TRUE(saved.back().is_verdict(autotune::VerdictKind::kPin));
  EXPECT_DOUBLE_EQ(saved.back().verdict->speedup, 1.2);
  EXPECT_TRUE(autotune::Database(saved).pinned(check.target, tuned.workload));
  EXPECT_TRUE(check_with(records.path(), 1).workloads.empty());
}

TEST(CheckTunedModel, ANoiseLevelGainIsNotKeptAndAPinGivesTheUntunedKernelBack) {
  TempRecords records("pin");
  autotune::TuningRecord tuned = write_records_with_a_tuned_conv(records.path());
  ModelCheck check = check_with(records.path(), 1);
  ASSERT_EQ(check.workloads.size(), 1u);
  check.workloads[0].speedup = 1 + kMinGainInModel / 2;  // faster, but within the noise
  EXPECT_FALSE(check.workloads[0].tuned_faster());
  EXPECT_EQ(veto_slower_workloads(check, records.path(), {tuned.workload}), 1);
  std::vector<autotune::TuningRecord> saved = autotune::load_records(records.path(), nullptr);
  ASSERT_EQ(saved.size(), 3u);  // one layout: one pin
  EXPECT_TRUE(saved[2].is_verdict(autotune::VerdictKind::kPin));
  EXPECT_TRUE(saved[2].fallback);
  autotune::Database db(saved);
  EXPECT_TRUE(db.pinned(check.target, tuned.workload));
  EXPECT_TRUE(db.best(check.target, tuned.workload)->fallback);
  EXPECT_TRUE(check_with(records.path(), 1).workloads.empty());

  // Without a measurement of the fallback, the pin names the untuned kernel's config, and still
  // rules out the config measured before it.
  TempRecords no_fallback("no-fallback");
  autotune::RecordWriter(no_fallback.path()).write(saved[1]);
  check = check_with(no_fallback.path(), 1);
  ASSERT_EQ(check.workloads.size(), 1u);
  check.workloads[0].speedup = 0.9;
  EXPECT_EQ(veto_slower_workloads(check, no_fallback.path(), {tuned.workload}), 1);
  saved = autotune::load_records(no_fallback.path(), nullptr);
  ASSERT_EQ(saved.size(), 2u);
  EXPECT_TRUE(saved[1].is_verdict(autotune::VerdictKind::kPin));
  EXPECT_TRUE(saved[1].fallback);
  EXPECT_EQ(nlohmann::json::parse(saved[1].config),
            nlohmann::json::parse(check.workloads[0].untuned_config));
  EXPECT_EQ(saved[1].config_index, check.workloads[0].untuned_config_index);
  EXPECT_FALSE(autotune::Database(saved).best(check.target, tuned.workload));
  EXPECT_TRUE(check_with(no_fallback.path(), 1).workloads.empty());
}

// A check with one workload per (workload, untuned workload, config) and its rounds' speed-ups.
ModelCheck check_of(
    const std::vector<std::tuple<std::string, std::string, std::string, std::vector<double>>>& ws) {
  ModelCheck c;
  for (const auto& [workload, untuned, config, rounds] : ws) {
    WorkloadCheck w;
    w.workload = workload;
    w.untuned_workload = untuned;
    w.config = config;
    w.round_speedups = rounds;
    w.speedup = autotune::median_cost(rounds);
    c.workloads.push_back(w);
  }
  return c;
}

TEST(ModelCheckPasses, PoolsRoundsOfAConfigAndPinsAConvVetoedTwice) {
  ModelCheckPasses passes(3);
  // Pass 1: A's config is kept; the conv of B (tuned in the packed layout) is vetoed.
  ModelCheck c = check_of({{"A", "A", "a1", {1.10, 1.10}}, {"Bp", "B", "b1", {1.0, 1.0}}});
  EXPECT_TRUE(passes.judge(c).empty());
  EXPECT_TRUE(c.workloads[0].tuned_faster());
  EXPECT_FALSE(c.workloads[1].tuned_faster());
  EXPECT_FALSE(passes.last_pass());
  // Pass 2: A's same config, slower now, is judged on all 5 rounds; B's next best, in the direct
  // layout, is its conv's second: to be pinned.
  c = check_of({{"A", "A", "a1", {0.95, 0.95, 0.95}}, {"B", "B", "b2", {0.99}}});
  EXPECT_EQ(passes.judge(c), std::set<std::string>{"B"});
  EXPECT_EQ(c.workloads[0].round_speedups.size(), 5u);
  EXPECT_DOUBLE_EQ(c.workloads[0].speedup, 0.95);
  EXPECT_FALSE(c.workloads[0].tuned_faster());
  EXPECT_EQ(c.workloads[1].round_speedups.size(), 1u);  // another config: its own rounds
  // Pass 3, the last: every workload is to be pinned if vetoed.
  c = check_of({{"C", "C", "c1", {1.5}}});
  EXPECT_EQ(passes.judge(c), std::set<std::string>{"C"});
  EXPECT_TRUE(passes.last_pass());
  EXPECT_EQ(passes.pass(), 3);
}

TEST(CheckTunedModel, BadArguments) {
  expect_error([] { check_tuned_model(kModel, CompileOptions()); }, {"no tuning records"});
  CompileOptions opt;
  opt.tuning_records = "/nonexistent/records.json";
  ModelCheckOptions none;
  none.rounds = 0;
  expect_error([&] { check_tuned_model(kModel, opt, none); }, {"rounds must be at least 1"});
  expect_error([&] { check_tuned_model(kModel, opt); }, {"/nonexistent/records.json"});
}

}  // namespace
}  // namespace tessel
