// The tuning loop: records as it goes, survives crashing and hanging candidates, resumes without
// re-measuring, stops early; and on a real model, every config of the conv and matmul templates
// computes the right answer (each candidate is checked against the reference executor).
#include "autotune/tune.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <map>
#include <set>
#include <thread>
#include <utility>

#include "codegen/target.h"
#include "passes/pipeline.h"
#include "runtime/module.h"
#include "tests/common/expect_error.h"
#include "tests/passes/graph_builder.h"

namespace tessel::autotune {
namespace {

using passes::testing::Builder;
using passes::testing::ints;
using passes::testing::random_tensor;
using tessel::testing::expect_error;

const char* kTarget = "llvm -mcpu=test";

class TempFile {
 public:
  explicit TempFile(const std::string& name)
      : path_((std::filesystem::temp_directory_path() / fmt::format("tessel-{}-{}", getpid(), name))
                  .string()) {
    std::filesystem::remove(path_);
  }
  ~TempFile() { std::filesystem::remove(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// A space of 8 x 8 x 2 = 128 configs whose synthetic cost is lowest at tile [-, 8], [-, 4], knob 1.
topi::ConfigSpace synthetic_space() {
  topi::ConfigSpace space;
  topi::SplitPolicy p;
  p.policy = "power2";
  space.define_split("tile_x", 128, p);
  space.define_split("tile_y", 128, p);
  space.define_knob("k", {0, 1});
  return space;
}

double synthetic_cost(const topi::ConfigEntity& c) {
  double x = std::log2(static_cast<double>(c.split("tile_x")[1])) - 3;
  double y = std::log2(static_cast<double>(c.split("tile_y")[1])) - 2;
  return 1e-3 * (1 + x * x + y * y + (c.knob("k") == 1 ? 0 : 0.5));
}

MeasureResult success(double cost) {
  MeasureResult r;
  r.costs_s = {cost, cost};
  r.number = 1;
  return r;
}

Task synthetic_task() {
  Task t;
  t.op = "Conv";
  t.workload = "Conv|synthetic";
  t.weight = 1;
  t.flops = 1e6;
  t.group = 0;
  return t;
}

TuneOptions options(const std::string& records, const std::string& tuner, int trials) {
  TuneOptions opt;
  opt.tuner = tuner;
  opt.trials = trials;
  opt.batch_size = 8;
  opt.records_path = records;
  opt.remeasure_rounds =
      0;  // the tests below count records; re-measurement and controls have their own tests
  opt.control_every = 0;
  return opt;
}

TEST(TuneTask, CrashingAndHangingCandidatesAreRecordedAndTuningGoesOn) {
  TempFile records("crash.json");
  topi::ConfigSpace space = synthetic_space();
  topi::ConfigEntity fallback = space.fallback();
  std::set<uint64_t> bad;
  int calls = 0;
  // The 3rd and 4th configs measured crash and hang inside the isolated child; the rest succeed.
  ConfigMeasurer measurer = [&](const topi::ConfigEntity& c, const topi::ConfigEntity*) {
    ++calls;
    MeasureOptions mopt;
    mopt.timeout_s = 1;
    if (calls == 3 || calls == 4) {
      bad.insert(c.index());
      bool crash = calls == 3;
      return measure(
          [crash]() -> runtime::Module {
            if (crash) std::raise(SIGSEGV);
            std::this_thread::sleep_for(std::chrono::hours(1));
            return {};
          },
          "f", {}, {}, mopt);
    }
    return success(synthetic_cost(c));
  };
  TaskResult r = tune_task(synthetic_task(), space, measurer, kTarget,
                           options(records.path(), "random", 20), 0);
  EXPECT_EQ(r.trials, 20);
  EXPECT_EQ(r.errors, 2);
  EXPECT_EQ(r.stop_reason, "trials");
  std::vector<TuningRecord> saved = load_records(records.path(), nullptr);
  ASSERT_EQ(saved.size(), 20u);
  EXPECT_EQ(saved[0].config_index, fallback.index());  // the untuned baseline comes first
  std::set<MeasureError> errors;
  for (const TuningRecord& rec : saved) {
    if (bad.count(rec.config_index)) {
      errors.insert(rec.error);
    } else {
      EXPECT_EQ(rec.error, MeasureError::kNone);
    }
  }
  EXPECT_EQ(errors, (std::set<MeasureError>{MeasureError::kRuntimeError, MeasureError::kTimeout}));
  EXPECT_TRUE(std::isfinite(r.best_cost_s));
  EXPECT_LE(r.best_cost_s, r.fallback_cost_s);
}

TEST(TuneTask, ResumeMeasuresOnlyNewConfigs) {
  TempFile records("resume.json");
  topi::ConfigSpace space = synthetic_space();
  std::vector<uint64_t> measured;
  ConfigMeasurer measurer = [&](const topi::ConfigEntity& c, const topi::ConfigEntity*) {
    measured.push_back(c.index());
    return success(synthetic_cost(c));
  };
  TaskResult first = tune_task(synthetic_task(), space, measurer, kTarget,
                               options(records.path(), default_tuner_name(), 24), 0);
  EXPECT_EQ(first.trials, 24);

  // A killed run's file: resuming with a larger budget measures only the difference.
  TuneOptions again = options(records.path(), default_tuner_name(), 40);
  again.resume = load_records(records.path(), nullptr);
  measured.clear();
  TaskResult second = tune_task(synthetic_task(), space, measurer, kTarget, again, 0);
  EXPECT_EQ(second.resumed, 24);
  EXPECT_EQ(second.trials, 16);
  EXPECT_EQ(measured.size(), 16u);
  EXPECT_DOUBLE_EQ(second.fallback_cost_s, first.fallback_cost_s);  // resumed, not re-measured
  EXPECT_LE(second.best_cost_s, first.best_cost_s);
  std::vector<TuningRecord> saved = load_records(records.path(), nullptr);
  ASSERT_EQ(saved.size(), 40u);
  std::set<uint64_t> distinct;
  for (const TuningRecord& rec : saved) distinct.insert(rec.config_index);
  EXPECT_EQ(distinct.size(), 40u) << "a config was measured twice";
}

std::string file_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// A resumed run whose trials are done measures nothing: before, it re-measured the best configs
// and the fallback again, appending their records on every resume.
TEST(TuneTask, AResumedFinishedRunAppendsNothing) {
  TempFile records("finished.json");
  topi::ConfigSpace space = synthetic_space();
  int calls = 0;
  ConfigMeasurer measurer = [&](const topi::ConfigEntity& c, const topi::ConfigEntity*) {
    ++calls;
    return success(synthetic_cost(c));
  };
  TuneOptions opt = options(records.path(), default_tuner_name(), 24);
  opt.remeasure_rounds = 2;  // the defaults: re-measurements and controls
  opt.control_every = 16;
  TaskResult first = tune_task(synthetic_task(), space, measurer, kTarget, opt, 0);
  std::string finished = file_text(records.path());
  for (int resume = 0; resume < 2; ++resume) {
    calls = 0;
    opt.resume = load_records(records.path(), nullptr);
    TaskResult again = tune_task(synthetic_task(), space, measurer, kTarget, opt, 0);
    EXPECT_EQ(calls, 0);
    EXPECT_EQ(again.trials, 0);
    EXPECT_EQ(again.best_config, first.best_config);
    EXPECT_DOUBLE_EQ(again.best_cost_s, first.best_cost_s);
    EXPECT_EQ(file_text(records.path()), finished) << "resume " << resume;
  }
}

// A records file with a zero cost made a resumed XGBoost run fail inside XGBoost ("Label contains
// NaN"): the line is skipped when the file is read, and the run goes on.
TEST(TuneTask, AResumedRunSurvivesAZeroCostRecord) {
  TempFile records("zero_cost.json");
  topi::ConfigSpace space = synthetic_space();
  ConfigMeasurer measurer = [&](const topi::ConfigEntity& c, const topi::ConfigEntity*) {
    return success(synthetic_cost(c));
  };
  tune_task(synthetic_task(), space, measurer, kTarget, options(records.path(), "grid", 16), 0);
  std::vector<TuningRecord> saved = load_records(records.path(), nullptr);
  TuningRecord zero = saved.back();
  zero.config = space.get(100).to_json();
  zero.config_index = 100;
  std::string line = record_to_line(zero);
  std::string costs = line.substr(line.find("\"costs\":"));
  line.replace(line.find("\"costs\":"), costs.find(']') + 1, "\"costs\":[0]");
  {
    std::ofstream(records.path(), std::ios::app) << line << "\n";
  }
  TuneOptions again = options(records.path(), default_tuner_name(), 32);
  std::vector<std::string> warnings;
  again.resume = load_records(records.path(), &warnings);
  TaskResult r = tune_task(synthetic_task(), space, measurer, kTarget, again, 0);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find(":17: skipped a corrupt record: cost 0"), std::string::npos)
      << warnings[0];
  EXPECT_EQ(r.resumed, 16);
  EXPECT_EQ(r.trials, 16);
  EXPECT_TRUE(std::isfinite(r.best_cost_s));
}

// A record whose config_index is not its config's index in the space (out of range here) is not
// a record of this space: its config is not counted as measured, and its verdict vetoes nothing.
TEST(TuneTask, ARecordWhoseIndexIsNotItsConfigsIsOfAnotherSpace) {
  TempFile records("bad_index.json");
  topi::ConfigSpace space = synthetic_space();
  std::vector<uint64_t> measured;
  ConfigMeasurer measurer = [&](const topi::ConfigEntity& c, const topi::ConfigEntity*) {
    measured.push_back(c.index());
    return success(synthetic_cost(c));
  };
  tune_task(synthetic_task(), space, measurer, kTarget, options(records.path(), "grid", 8), 0);
  std::vector<TuningRecord> saved = load_records(records.path(), nullptr);
  ASSERT_EQ(saved.size(), 8u);
  auto bad =
      std::find_if(saved.begin(), saved.end(), [](const TuningRecord& r) { return !r.fallback; });
  ASSERT_NE(bad, saved.end());
  uint64_t config = bad->config_index;
  bad->config_index = space.size() + 5;
  TempFile edited("bad_index_edited.json");
  {
    RecordWriter w(edited.path());
    for (const TuningRecord& r : saved) w.write(r);
  }
  TuneOptions again = options(edited.path(), "grid", 8);
  again.resume = load_records(edited.path(), nullptr);
  measured.clear();
  TaskResult r = tune_task(synthetic_task(), space, measurer, kTarget, again, 0);
  EXPECT_EQ(r.resumed, 7);
  EXPECT_EQ(measured, std::vector<uint64_t>{config});
}

// synthetic_space() with a constraint that refuses `config`: one added since it was measured, as
// the conv template's on serial configs.
topi::ConfigSpace space_refusing(const std::string& config) {
  topi::ConfigSpace space = synthetic_space();
  space.set_constraint([config](const topi::ConfigEntity& c) -> std::string {
    return c.to_json() == config ? "refused since" : "";
  });
  return space;
}

// Tunes the synthetic task over 24 grid trials into `records`, appends a verdict of the model
// check (`kind`) on the config of the record `pick` chooses, resumes with 24 trials again (in a
// space that refuses the config `refused`, when given), and returns both runs' results.
std::pair<TaskResult, TaskResult> tune_around_a_verdict(
    const std::string& records, VerdictKind kind,
    const std::function<bool(const TuningRecord&, const TaskResult&)>& pick,
    const std::function<std::string(const TaskResult&)>& refused = {}) {
  topi::ConfigSpace space = synthetic_space();
  ConfigMeasurer measurer = [&](const topi::ConfigEntity& c, const topi::ConfigEntity*) {
    return success(synthetic_cost(c));
  };
  TaskResult first =
      tune_task(synthetic_task(), space, measurer, kTarget, options(records, "grid", 24), 0);
  std::vector<TuningRecord> saved = load_records(records, nullptr);
  auto at = std::find_if(saved.begin(), saved.end(),
                         [&](const TuningRecord& r) { return pick(r, first); });
  EXPECT_NE(at, saved.end());
  if (at == saved.end()) return {first, first};
  RecordWriter(records).write(verdict_record(*at, {.kind = kind}));
  TuneOptions again = options(records, "grid", 24);
  again.resume = load_records(records, nullptr);
  if (refused) space = space_refusing(refused(first));
  return {first, tune_task(synthetic_task(), space, measurer, kTarget, again, 0)};
}

// A config that the template refuses now is not resumed: a resumed run neither counts it as
// measured nor ends with it, as compile would not apply it.
TEST(TuneTask, AResumedRunPassesOverAConfigTheTemplateNowRefuses) {
  TempFile records("refused.json");
  ConfigMeasurer measurer = [&](const topi::ConfigEntity& c, const topi::ConfigEntity*) {
    return success(synthetic_cost(c));
  };
  TaskResult first = tune_task(synthetic_task(), synthetic_space(), measurer, kTarget,
                               options(records.path(), "grid", 24), 0);
  ASSERT_NE(first.best_config, synthetic_space().fallback().to_json());
  TuneOptions again = options(records.path(), "grid", 24);
  again.resume = load_records(records.path(), nullptr);
  TaskResult second =
      tune_task(synthetic_task(), space_refusing(first.best_config), measurer, kTarget, again, 0);
  EXPECT_EQ(second.resumed, 23);
  EXPECT_EQ(second.trials, 1);   // a config of the grid that the first run had not reached
  EXPECT_EQ(second.invalid, 1);  // the refused config, proposed again: no trial
  EXPECT_NE(second.best_config, first.best_config);
  EXPECT_GE(second.best_cost_s, first.best_cost_s);
}

// A pin written on a config that the template refuses now still rules out every config measured
// before it: a resumed run keeps the pinned fallback.
TEST(TuneTask, APinOnAConfigTheTemplateNowRefusesStillHolds) {
  TempFile records("refused_pin.json");
  auto best = [](const TaskResult& first) { return first.best_config; };
  auto [first, second] = tune_around_a_verdict(
      records.path(), VerdictKind::kPin,
      [](const TuningRecord& r, const TaskResult& first) { return r.config == first.best_config; },
      best);
  EXPECT_FALSE(first.pinned);
  EXPECT_TRUE(second.pinned);
  EXPECT_EQ(second.best_config, synthetic_space().fallback().to_json());
}

// A config vetoed by the model check (tessel tune --model-check-rounds) stays measured, so a
// resumed run does not measure it again, but it is never the result.
TEST(TuneTask, AResumedRunPassesOverAVetoedConfig) {
  TempFile records("veto.json");
  auto [first, second] = tune_around_a_verdict(
      records.path(), VerdictKind::kVeto,
      [](const TuningRecord& r, const TaskResult& first) { return r.config == first.best_config; });
  EXPECT_EQ(second.trials, 0);
  EXPECT_EQ(second.resumed, 24);
  EXPECT_NE(second.best_config, first.best_config);
  EXPECT_GE(second.best_cost_s, first.best_cost_s);
  EXPECT_DOUBLE_EQ(second.fallback_cost_s, first.fallback_cost_s);
  Database db(load_records(records.path(), nullptr));
  EXPECT_EQ(db.best(kTarget, synthetic_task().workload)->config, second.best_config);
}

// A pin (the model check gave the workload its untuned kernel back) rules out every config measured
// before it: a resumed run ends with the fallback unless it finds a new config that beats it.
TEST(TuneTask, AResumedRunKeepsAPinnedFallback) {
  TempFile records("pin.json");
  auto [first, second] =
      tune_around_a_verdict(records.path(), VerdictKind::kPin,
                            [](const TuningRecord& r, const TaskResult&) { return r.fallback; });
  std::string fallback = synthetic_space().fallback().to_json();
  EXPECT_NE(first.best_config, fallback);
  EXPECT_FALSE(first.pinned);
  EXPECT_EQ(second.trials, 0);
  EXPECT_EQ(second.best_config, fallback);
  EXPECT_TRUE(second.pinned);
  EXPECT_DOUBLE_EQ(second.best_cost_s, second.fallback_cost_s);
  Database db(load_records(records.path(), nullptr));
  EXPECT_EQ(db.best(kTarget, synthetic_task().workload)->config, second.best_config);

  // A run that goes on measures new configs; one that clearly beats the fallback is the result.
  std::set<uint64_t> before = db.configs_measured(kTarget, synthetic_task().workload);
  ConfigMeasurer new_ones_win = [&](const topi::ConfigEntity& c, const topi::ConfigEntity*) {
    return success(before.count(c.index()) ? synthetic_cost(c) : 1e-6);
  };
  TuneOptions more = options(records.path(), "grid", 32);
  more.resume = load_records(records.path(), nullptr);
  TaskResult third = tune_task(synthetic_task(), synthetic_space(), new_ones_win, kTarget, more, 0);
  EXPECT_EQ(third.trials, 8);
  EXPECT_FALSE(third.pinned);
  EXPECT_DOUBLE_EQ(third.best_cost_s, 1e-6);
  EXPECT_EQ(Database(load_records(records.path(), nullptr))
                .best(kTarget, synthetic_task().workload)
                ->config,
            third.best_config);
}

// The fallback's first measurement caught a slow phase of the machine: the controls between
// batches outvote it, so the baseline (and the speed-up) is what the fallback really costs.
TEST(TuneTask, TheFallbackIsMeasuredAgainAsAControl) {
  TempFile records("control.json");
  topi::ConfigSpace space = synthetic_space();
  uint64_t fallback = space.fallback().index();
  int fallback_runs = 0;
  ConfigMeasurer measurer = [&](const topi::ConfigEntity& c, const topi::ConfigEntity*) {
    if (c.index() != fallback) return success(synthetic_cost(c));
    return success(synthetic_cost(c) * (++fallback_runs == 1 ? 10 : 1));
  };
  TuneOptions opt = options(records.path(), "grid", 40);
  opt.control_every = 8;
  TaskResult r = tune_task(synthetic_task(), space, measurer, kTarget, opt, 0);
  EXPECT_EQ(r.trials, 40);  // controls are not trials
  EXPECT_EQ(fallback_runs,
            1 + 4);  // first, then after each full 8 trials (batches of 8, 8, 8, 8, 7)
  EXPECT_DOUBLE_EQ(r.fallback_cost_s, synthetic_cost(space.fallback()));
  std::vector<TuningRecord> saved = load_records(records.path(), nullptr);
  EXPECT_EQ(saved.size(), 44u);
  EXPECT_EQ(std::count_if(saved.begin(), saved.end(),
                          [](const TuningRecord& rec) { return rec.fallback; }),
            5);
  opt.control_every = -1;
  expect_error([&] { tune_task(synthetic_task(), space, measurer, kTarget, opt, 0); },
               {"control_every"});
}

TEST(TuneTask, TheBestCandidatesAndTheFallbackAreMeasuredAgain) {
  TempFile records("remeasure.json");
  topi::ConfigSpace space = synthetic_space();
  // One config is lucky on its first measurement only: re-measured, it loses its place.
  uint64_t lucky = space.get(5).index();
  std::map<uint64_t, int> times;
  ConfigMeasurer measurer = [&](const topi::ConfigEntity& c, const topi::ConfigEntity*) {
    int n = ++times[c.index()];
    return success(c.index() == lucky && n == 1 ? 1e-6 : synthetic_cost(c));
  };
  TuneOptions opt = options(records.path(), "grid", 12);
  opt.remeasure_top = 2;
  opt.remeasure_rounds = 3;
  TaskResult r = tune_task(synthetic_task(), space, measurer, kTarget, opt, 0);
  EXPECT_EQ(r.trials, 12);
  EXPECT_EQ(times[lucky], 4);                     // a finalist: measured 1 + 3 times
  EXPECT_EQ(times[space.fallback().index()], 4);  // the baseline too
  EXPECT_NE(r.best_config, space.get(5).to_json());
  EXPECT_GT(r.best_cost_s, 1e-6);
  std::vector<TuningRecord> saved = load_records(records.path(), nullptr);
  EXPECT_EQ(saved.size(), 12u + 3u * 3u);  // 2 finalists and the fallback, 3 rounds
  std::optional<TuningRecord> best = Database(saved).best(kTarget, synthetic_task().workload);
  ASSERT_TRUE(best);
  EXPECT_EQ(best->config, r.best_config);  // what compile applies is what tuning reported
}

// A config a little faster than the fallback is noise: the task ends on the fallback, which its
// records say is what compile applies; a clearly faster one wins.
TEST(TuneTask, TheFallbackStaysUnlessAConfigClearlyBeatsIt) {
  topi::ConfigSpace space = synthetic_space();
  uint64_t fallback = space.fallback().index(), other = space.get(7).index();
  ASSERT_NE(fallback, other);
  for (double gain : {0.02, 0.2}) {
    SCOPED_TRACE(gain);
    TempFile records(fmt::format("gain{}.json", gain));
    ConfigMeasurer measurer = [&](const topi::ConfigEntity& c, const topi::ConfigEntity*) {
      return success(c.index() == fallback ? 1e-3 : c.index() == other ? 1e-3 * (1 - gain) : 2e-3);
    };
    TaskResult r = tune_task(synthetic_task(), space, measurer, kTarget,
                             options(records.path(), "grid", 12), 0);
    std::string want = (gain > kMinGainOverDefault ? space.get(7) : space.fallback()).to_json();
    EXPECT_EQ(r.best_config, want);
    std::vector<TuningRecord> saved = load_records(records.path(), nullptr);
    for (const TuningRecord& rec : saved)
      EXPECT_EQ(rec.fallback, rec.config_index == fallback) << rec.config;
    EXPECT_EQ(Database(saved).best(kTarget, synthetic_task().workload)->config, want);
  }
}

TEST(TuneTask, ConfigsTheTemplateRejectsAreSkippedUnmeasured) {
  TempFile records("invalid.json");
  topi::ConfigSpace space = synthetic_space();
  space.set_constraint([](const topi::ConfigEntity& c) -> std::string {
    return c.split("tile_x")[1] * c.split("tile_y")[1] > 64 ? "tile too large" : "";
  });
  int measured = 0;
  ConfigMeasurer measurer = [&](const topi::ConfigEntity& c, const topi::ConfigEntity*) {
    ++measured;
    EXPECT_EQ(space.invalid_reason(c), "") << c.to_json();
    return success(synthetic_cost(c));
  };
  TaskResult r = tune_task(synthetic_task(), space, measurer, kTarget,
                           options(records.path(), "random", 30), 0);
  EXPECT_EQ(r.trials, 30);
  EXPECT_EQ(measured, 30);
  EXPECT_GT(r.invalid, 0);
  EXPECT_EQ(load_records(records.path(), nullptr).size(), 30u);
}

// Once the fallback is measured, every other config is timed in turns with it and costed in its
// time: here the fallback's one measurement caught a slow phase (10x), the configs run at normal
// speed next to it (one of the fallback's times a hiccup), and the speed-ups come out right. The
// fallback is the time base: no controls and no re-measurement of it.
TEST(TuneTask, ConfigsAreTimedInTurnsWithTheFallback) {
  TempFile records("paired.json");
  topi::ConfigSpace space = synthetic_space();
  topi::ConfigEntity fallback = space.fallback();
  double base = synthetic_cost(fallback);
  int fallback_runs = 0;
  ConfigMeasurer measurer = [&](const topi::ConfigEntity& c, const topi::ConfigEntity* baseline) {
    if (c.index() == fallback.index()) {
      EXPECT_EQ(baseline, nullptr);
      ++fallback_runs;
      return success(10 * base);
    }
    EXPECT_NE(baseline, nullptr);
    if (baseline) {
      EXPECT_EQ(baseline->index(), fallback.index());
    }
    MeasureResult m = success(synthetic_cost(c));
    m.baseline_costs_s = {base, 2 * base};
    return m;
  };
  TuneOptions opt = options(records.path(), "grid", 40);
  opt.control_every = 8;
  opt.remeasure_rounds = 2;
  TaskResult r = tune_task(synthetic_task(), space, measurer, kTarget, opt, 0);
  EXPECT_EQ(fallback_runs, 1);
  EXPECT_DOUBLE_EQ(r.fallback_cost_s, 10 * base);
  ASSERT_TRUE(std::isfinite(r.best_cost_s));
  topi::ConfigEntity best = topi::ConfigEntity::from_json(space, r.best_config);
  EXPECT_DOUBLE_EQ(r.fallback_cost_s / r.best_cost_s, base / synthetic_cost(best));
  std::vector<TuningRecord> saved = load_records(records.path(), nullptr);
  EXPECT_EQ(saved.size(), 40u + 3 * 2);  // the trials, then the best 3 twice (not the fallback)
  for (const TuningRecord& rec : saved) {
    if (rec.fallback) {
      EXPECT_TRUE(rec.fallback_costs.empty());
      continue;
    }
    topi::ConfigEntity c = topi::ConfigEntity::from_json(space, rec.config);
    EXPECT_EQ(rec.fallback_costs, (std::vector<double>{base, 2 * base}));
    for (double cost : rec.costs) EXPECT_DOUBLE_EQ(cost, 10 * synthetic_cost(c));
  }
}

TEST(TuneTask, StopsEarlyAndWhenTheSpaceRunsOut) {
  TempFile records("early.json");
  topi::ConfigSpace space = synthetic_space();
  // Every config costs the same: nothing beats the fallback, so early stopping ends the task.
  ConfigMeasurer flat = [](const topi::ConfigEntity&, const topi::ConfigEntity*) {
    return success(1e-3);
  };
  TuneOptions opt = options(records.path(), "grid", 100);
  opt.early_stopping = 10;
  TaskResult r = tune_task(synthetic_task(), space, flat, kTarget, opt, 0);
  EXPECT_EQ(r.stop_reason, "early stopping");
  EXPECT_EQ(r.trials, 11);

  topi::ConfigSpace small;
  small.define_knob("k", {1, 2, 3});
  TaskResult all =
      tune_task(synthetic_task(), small, flat, kTarget, options(records.path(), "random", 100), 0);
  EXPECT_EQ(all.trials, 3);
  EXPECT_EQ(all.stop_reason, "space exhausted");
}

TEST(TuneTask, RejectsBadOptions) {
  topi::ConfigSpace space = synthetic_space();
  ConfigMeasurer m = [](const topi::ConfigEntity& c, const topi::ConfigEntity*) {
    return success(synthetic_cost(c));
  };
  TuneOptions opt = options("/tmp/unused.json", "annealing", 10);
  expect_error([&] { tune_task(synthetic_task(), space, m, kTarget, opt, 0); },
               {"annealing", "random", "ga"});
  opt = options("", "random", 10);
  expect_error([&] { tune_task(synthetic_task(), space, m, kTarget, opt, 0); }, {"records"});
  opt = options("/tmp/unused.json", "random", 0);
  expect_error([&] { tune_task(synthetic_task(), space, m, kTarget, opt, 0); }, {"trials"});
  opt = options("/tmp/unused.json", "random", 10);
  opt.time_budget_s = std::numeric_limits<double>::quiet_NaN();
  expect_error([&] { tune_task(synthetic_task(), space, m, kTarget, opt, 0); }, {"time budget"});
  opt.time_budget_s = std::numeric_limits<double>::infinity();
  expect_error([&] { tune_task(synthetic_task(), space, m, kTarget, opt, 0); }, {"time budget"});
  opt = options("/nonexistent-dir/records.json", "random", 5);
  expect_error([&] { tune_task(synthetic_task(), space, m, kTarget, opt, 0); },
               {"/nonexistent-dir/records.json"});
}

// Conv(3x3, 8 -> 12 channels, 9x10) + Relu, a packed conv (3x3, 32 -> 32 channels, stride 2 over
// 13 columns: 7 wide, with a bias) + Add, and a MatMul [12, 90] x [90, 20]: shapes with tails for
// every tile knob.
graph::Graph small_model() {
  Builder b;
  graph::ValueId x = b.input("x", {1, 8, 9, 10});
  graph::ValueId w = b.constant("w", random_tensor({10, 8, 3, 3}, 1));  // too few to pad: direct
  graph::ValueId conv =
      b.op("Relu",
           {b.op("Conv", {x, w}, {{"kernel_shape", ints({3, 3})}, {"pads", ints({1, 1, 1, 1})}})});
  graph::ValueId x2 = b.input("x2", {1, 32, 5, 13});
  graph::ValueId w2 = b.constant("w2", random_tensor({32, 32, 3, 3}, 3));
  graph::ValueId packed = b.op("Conv", {x2, w2, b.constant("bias2", random_tensor({32}, 4))},
                               {{"pads", ints({1, 1, 1, 1})}, {"strides", ints({1, 2})}});
  packed = b.op("Add", {packed, b.input("r2", {1, 32, 5, 7})});
  graph::ValueId y = b.input("y", {12, 90});
  graph::ValueId mm = b.op("MatMul", {y, b.constant("fc", random_tensor({90, 20}, 2))});
  return b.finish({conv, packed, mm});
}

// Random configs of the real templates, built and run in isolated children and compared with the
// reference executor: a template config that computes a wrong answer would be an error here. The
// packed conv is tuned in its other layout too (direct), measured in the other plan's graph.
TEST(TuneTasks, EveryTemplateConfigTriedIsCorrect) {
  TempFile records("model.json");
  graph::Graph g = small_model(), other = small_model();
  passes::GraphPipelineResult plan = passes::run_graph_pipeline(g);
  passes::GraphPipelineOptions invert;
  invert.conv_layout = [](const graph::Graph&, const graph::Node&, bool rule) { return !rule; };
  passes::GraphPipelineResult other_plan = passes::run_graph_pipeline(other, invert);
  std::vector<Task> tasks = extract_tasks_both_layouts(g, plan.groups, other, other_plan.groups);
  ASSERT_EQ(tasks.size(), 4u);
  EXPECT_EQ(tasks[1].op, "ConvNCHWc");
  EXPECT_EQ(tasks[3].op, "Conv");
  EXPECT_EQ(tasks[3].layout_of, tasks[1].workload);
  TuneOptions opt = options(records.path(), "random", 24);
  opt.measure.number = 1;
  opt.measure.repeat = 1;
  int calls = 0;
  std::vector<TaskResult> results =
      tune_tasks({{&g, &plan.groups}, {&other, &other_plan.groups}}, tasks,
                 Target::parse("llvm -mcpu=native"), opt, [&](const TuneProgress& p) {
                   ++calls;
                   EXPECT_EQ(p.num_tasks, 4);
                   EXPECT_LE(p.trials_done, p.trials_total);
                 });
  ASSERT_EQ(results.size(), 4u);
  for (const TaskResult& r : results) {
    EXPECT_EQ(r.trials, 24) << r.task.workload;
    EXPECT_EQ(r.errors, 0) << r.task.workload;
    EXPECT_LE(r.best_cost_s, r.fallback_cost_s);
  }
  EXPECT_EQ(calls, 4 * 24 + 4);  // one per trial, and one as each task ends
  for (const TuningRecord& rec : load_records(records.path(), nullptr)) {
    EXPECT_EQ(rec.error, MeasureError::kNone) << rec.config << ": " << rec.error_msg;
  }
}

}  // namespace
}  // namespace tessel::autotune
