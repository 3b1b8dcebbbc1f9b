#include "autotune/tuner.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <limits>
#include <map>
#include <set>

#include "tests/common/expect_error.h"

namespace tessel::autotune {
namespace {

using topi::Annotation;
using topi::ConfigEntity;
using topi::ConfigSpace;
using topi::SplitPolicy;

constexpr double kInf = std::numeric_limits<double>::infinity();

// A matmul-like template: 28 * 36 * 4 * 4 = 16128 points.
ConfigSpace tile_space() {
  ConfigSpace s;
  s.define_split("tile_y", 64, {.num_outputs = 3});
  s.define_split("tile_x", 128, {.num_outputs = 3});
  s.define_knob("unroll_max", {0, 16, 64, 512});
  s.define_annotate("ann", 2, "try_unroll");
  return s;
}

// A synthetic cost with the structure of a real kernel: a register tile of 4 x 16 with a
// vector-width innermost x, a cache tile of 2^10 elements, unroll_max 64, and unrolling the
// inner axes only pays off for a small register tile. The last terms make the optimum unique.
double tile_cost(const ConfigEntity& c) {
  const std::vector<int64_t>& y = c.split("tile_y");
  const std::vector<int64_t>& x = c.split("tile_x");
  double reg = std::log2(static_cast<double>(y[2] * x[2]));
  double cache = std::log2(static_cast<double>(y[1] * y[2] * x[1] * x[2]));
  double penalty = std::abs(reg - 6) + 0.3 * std::abs(std::log2(static_cast<double>(y[2])) - 2) +
                   0.5 * std::abs(cache - 10);
  penalty += x[2] % 16 == 0 ? 0 : x[2] % 8 == 0 ? 0.7 : 2;
  penalty += 0.2 * std::abs(std::log2(c.knob("unroll_max") + 1.0) - 6);
  std::vector<Annotation> ann = c.annotate("ann");
  double unroll_gain = reg <= 6 ? 0.4 : -0.4;
  penalty -= unroll_gain * ((ann[0] == Annotation::kUnroll) + (ann[1] == Annotation::kUnroll));
  penalty +=
      0.05 * std::log2(static_cast<double>(y[1])) + 0.1 * std::log2(static_cast<double>(x[1]));
  return 1e-3 * std::exp(0.5 * penalty);
}

std::vector<double> costs_of(const std::vector<ConfigEntity>& batch) {
  std::vector<double> costs;
  for (const ConfigEntity& c : batch) costs.push_back(tile_cost(c));
  return costs;
}

// 6 * 3 = 18 points.
ConfigSpace tiny_space() {
  ConfigSpace s;
  s.define_split("t", 12);
  s.define_knob("k", {1, 2, 3});
  return s;
}

double tiny_cost(const ConfigEntity& c) {
  return static_cast<double>(c.split("t")[1] * c.knob("k"));
}

// Runs `trials` measurements in batches of 16; returns the best cost found.
double tune(Tuner& tuner, int trials) {
  for (int done = 0; done < trials && tuner.has_next();) {
    std::vector<ConfigEntity> batch = tuner.next_batch(std::min(16, trials - done));
    tuner.update(batch, costs_of(batch));
    done += static_cast<int>(batch.size());
  }
  return tuner.best_cost();
}

TEST(TunerTest, NeverProposesAVisitedConfigAndStopsWhenExhausted) {
  ConfigSpace space = tiny_space();
  for (const std::string& name : tuner_names()) {
    SCOPED_TRACE(name);
    std::unique_ptr<Tuner> tuner = make_tuner(name, space, 7);
    std::set<uint64_t> seen;
    int i = 0;
    while (tuner->has_next()) {
      std::vector<ConfigEntity> batch = tuner->next_batch(4);
      ASSERT_FALSE(batch.empty());
      for (const ConfigEntity& c : batch) EXPECT_TRUE(seen.insert(c.index()).second) << c.index();
      // Some failures, so the models also learn from errors.
      std::vector<double> costs;
      for (const ConfigEntity& c : batch) costs.push_back(++i % 5 == 0 ? kInf : tiny_cost(c));
      tuner->update(batch, costs);
    }
    EXPECT_EQ(seen.size(), space.size());
    EXPECT_TRUE(tuner->next_batch(4).empty());
  }
}

TEST(TunerTest, ReturnsFewerConfigsThanAskedWhenTheSpaceRunsOut) {
  ConfigSpace space = tiny_space();
  for (const std::string& name : tuner_names()) {
    SCOPED_TRACE(name);
    std::unique_ptr<Tuner> tuner = make_tuner(name, space, 3);
    EXPECT_EQ(tuner->next_batch(10).size(), 10u);
    EXPECT_EQ(tuner->next_batch(10).size(), 8u);
    EXPECT_FALSE(tuner->has_next());
  }
}

TEST(TunerTest, GridVisitsIndicesInOrder) {
  ConfigSpace space = tiny_space();
  std::unique_ptr<Tuner> tuner = make_tuner("grid", space, 0);
  tuner->update({space.get(2), space.get(5)}, {1.0, 2.0});  // resumed
  std::vector<uint64_t> got;
  for (const ConfigEntity& c : tuner->next_batch(6)) got.push_back(c.index());
  EXPECT_EQ(got, (std::vector<uint64_t>{0, 1, 3, 4, 6, 7}));
  EXPECT_EQ(tuner->next_batch(1).at(0).index(), 8u);
}

std::vector<uint64_t> proposals(const std::string& name, const ConfigSpace& space, uint64_t seed,
                                int batches) {
  std::unique_ptr<Tuner> tuner = make_tuner(name, space, seed);
  std::vector<uint64_t> out;
  for (int b = 0; b < batches; ++b) {
    std::vector<ConfigEntity> batch = tuner->next_batch(16);
    for (const ConfigEntity& c : batch) out.push_back(c.index());
    tuner->update(batch, costs_of(batch));
  }
  return out;
}

TEST(TunerTest, RandomAndGAAreReproducibleForASeed) {
  ConfigSpace space = tile_space();
  for (const std::string name : {"random", "ga"}) {
    SCOPED_TRACE(name);
    EXPECT_EQ(proposals(name, space, 42, 4), proposals(name, space, 42, 4));
    EXPECT_NE(proposals(name, space, 42, 4), proposals(name, space, 43, 4));
  }
}

TEST(TunerTest, ResumedConfigsAreNeverProposed) {
  ConfigSpace space = tiny_space();
  std::vector<ConfigEntity> resumed = {space.get(0), space.get(4), space.get(9), space.get(17)};
  for (const std::string& name : tuner_names()) {
    SCOPED_TRACE(name);
    std::unique_ptr<Tuner> tuner = make_tuner(name, space, 5);
    tuner->update(resumed, {2.0, 1.0, kInf, 3.0});
    EXPECT_EQ(tuner->best_cost(), 1.0);
    EXPECT_EQ(tuner->best_index(), 4u);
    std::set<uint64_t> seen;
    for (const ConfigEntity& c : tuner->next_batch(100)) seen.insert(c.index());
    EXPECT_EQ(seen.size(), space.size() - resumed.size());
    for (const ConfigEntity& c : resumed) EXPECT_EQ(seen.count(c.index()), 0u) << c.index();
  }
}

TEST(TunerTest, SamplesHugeSpacesWithoutEnumerating) {
  ConfigSpace space;  // 2 * 10^12 points
  for (int i = 0; i < 12; ++i)
    space.define_knob(fmt::format("k{}", i), {0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  space.define_knob("last", {0, 1});
  for (const std::string name : {"random", "ga"}) {
    SCOPED_TRACE(name);
    std::unique_ptr<Tuner> tuner = make_tuner(name, space, 1);
    std::set<uint64_t> seen;
    for (int b = 0; b < 8; ++b) {
      std::vector<ConfigEntity> batch = tuner->next_batch(64);
      ASSERT_EQ(batch.size(), 64u);
      std::vector<double> costs;
      for (const ConfigEntity& c : batch) {
        seen.insert(c.index());
        costs.push_back(1.0 + c.knob("k0") + c.knob("k5"));
      }
      tuner->update(batch, costs);
    }
    EXPECT_EQ(seen.size(), 8u * 64u);
  }
}

TEST(TunerTest, MakeTunerListsTheValidNames) {
  ConfigSpace space = tiny_space();
  std::vector<std::string> names{"random", "grid", "ga"};
  if (xgb_tuner_available()) names.push_back("xgb");
  EXPECT_EQ(tuner_names(), names);
  testing::expect_error([&] { make_tuner("annealing", space, 0); },
                        {"unknown tuner 'annealing'", fmt::format("{}", fmt::join(names, ", "))});
  for (const std::string& name : names) EXPECT_NE(make_tuner(name, space, 0), nullptr) << name;
}

// Without XGBoost (TESSEL_WITH_XGBOOST=OFF) the default is ga, and asking for xgb says why it is
// missing rather than calling it unknown.
TEST(TunerTest, TheDefaultTunerIsXgbWhereTheBuildHasIt) {
  ConfigSpace space = tiny_space();
  if (xgb_tuner_available()) {
    EXPECT_EQ(default_tuner_name(), "xgb");
    return;
  }
  EXPECT_EQ(default_tuner_name(), "ga");
  testing::expect_error([&] { make_tuner("xgb", space, 0); },
                        {"the xgb tuner is not in this build", "TESSEL_WITH_XGBOOST=OFF",
                         "choose one of random, grid, ga"});
}

TEST(TunerTest, ConfigFeaturesHaveAFixedLengthAndTheTileVolume) {
  ConfigSpace space = tile_space();
  const size_t length = config_features(space.get(0)).size();
  // Values (3 + 3 + 1 + 2), per split 3 log2 factors + volume + 3 vector flags, the footprint.
  EXPECT_EQ(length, 9u + 2 * 7 + 1);
  for (uint64_t i = 0; i < space.size(); i += 97) {
    ConfigEntity c = space.get(i);
    std::vector<double> f = config_features(c);
    ASSERT_EQ(f.size(), length);
    const std::vector<int64_t>& y = c.split("tile_y");
    const std::vector<int64_t>& x = c.split("tile_x");
    EXPECT_DOUBLE_EQ(f[9 + 3], std::log2(static_cast<double>(y[1] * y[2])));
    EXPECT_DOUBLE_EQ(f[16 + 3], std::log2(static_cast<double>(x[1] * x[2])));
    EXPECT_EQ(f[16 + 6], x[2] % 16 == 0 ? 1.0 : 0.0);
    EXPECT_DOUBLE_EQ(f.back(), std::log2(static_cast<double>(y[1] * y[2] * x[1] * x[2])));
  }
}

TEST(TunerTest, TheSyntheticCostHasAUniqueOptimum) {
  ConfigSpace space = tile_space();
  std::vector<double> costs;
  for (uint64_t i = 0; i < space.size(); ++i) costs.push_back(tile_cost(space.get(i)));
  std::sort(costs.begin(), costs.end());
  EXPECT_LT(costs[0] * 1.01, costs[1]);
}

TEST(TunerTest, GAAndXGBFindBetterConfigsThanRandom) {
  ConfigSpace space = tile_space();
  constexpr int kTrials = 96;
  constexpr int kSeeds = 6;
  double optimum = std::numeric_limits<double>::infinity();
  for (uint64_t i = 0; i < space.size(); ++i) optimum = std::min(optimum, tile_cost(space.get(i)));
  std::cout << fmt::format("optimum of {} configs: {:.4f} ms\n", space.size(), optimum * 1e3);
  std::map<std::string, double> mean;
  std::vector<std::string> tuners{"random", "ga"};
  if (xgb_tuner_available()) tuners.push_back("xgb");
  for (const std::string& name : tuners) {
    auto start = std::chrono::steady_clock::now();
    for (uint64_t seed = 1; seed <= kSeeds; ++seed) {
      std::unique_ptr<Tuner> tuner = make_tuner(name, space, seed);
      mean[name] += tune(*tuner, kTrials) / kSeeds;
    }
    std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
    std::cout << fmt::format(
        "{:>6}: mean best cost over {} seeds after {} trials {:.4f} ms ({:.2f} s)\n", name, kSeeds,
        kTrials, mean[name] * 1e3, took.count());
  }
  EXPECT_LT(mean["ga"], mean["random"]);
  if (xgb_tuner_available()) {
    EXPECT_LT(mean["xgb"], mean["random"]);
  }
}

TEST(XGBTunerTest, IsReproducibleForASeed) {
  if (!xgb_tuner_available()) GTEST_SKIP() << "built without XGBoost";
  ConfigSpace space = tile_space();
  EXPECT_EQ(proposals("xgb", space, 42, 3), proposals("xgb", space, 42, 3));
  EXPECT_NE(proposals("xgb", space, 42, 3), proposals("xgb", space, 43, 3));
}

TEST(XGBTunerTest, TransferDataGuidesTheFirstBatch) {
  if (!xgb_tuner_available()) GTEST_SKIP() << "built without XGBoost";
  ConfigSpace space = tile_space();
  // Scores of a similar workload: this cost function on 512 random configs.
  std::unique_ptr<Tuner> sampler = make_tuner("random", space, 99);
  std::vector<ConfigEntity> history = sampler->next_batch(512);
  std::vector<double> history_costs = costs_of(history);
  double history_best = *std::min_element(history_costs.begin(), history_costs.end());
  std::vector<std::vector<double>> features;
  std::vector<double> scores;
  for (size_t i = 0; i < history.size(); ++i) {
    features.push_back(config_features(history[i]));
    scores.push_back(history_best / history_costs[i]);
  }
  double random_mean = 0, xgb_mean = 0;
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    for (double c : costs_of(make_tuner("random", space, seed)->next_batch(16))) random_mean += c;
    std::unique_ptr<Tuner> xgb = make_tuner("xgb", space, seed);
    xgb->add_transfer(features, scores);
    for (double c : costs_of(xgb->next_batch(16))) xgb_mean += c;
  }
  std::cout << fmt::format("first batch mean cost: random {:.4f} ms, xgb with transfer {:.4f} ms\n",
                           random_mean / 48 * 1e3, xgb_mean / 48 * 1e3);
  EXPECT_LT(xgb_mean, 0.5 * random_mean);
}

TEST(XGBTunerTest, RejectsTransferDataOfAnotherLayout) {
  if (!xgb_tuner_available()) GTEST_SKIP() << "built without XGBoost";
  ConfigSpace space = tile_space();
  std::unique_ptr<Tuner> tuner = make_tuner("xgb", space, 0);
  testing::expect_error([&] { tuner->add_transfer({{1.0, 2.0}}, {1.0}); },
                        {"transfer data row 0 has 2 features", "has 24"});
  testing::expect_error([&] { tuner->add_transfer({}, {1.0}); }, {"0 feature rows but 1 scores"});
}

}  // namespace
}  // namespace tessel::autotune
