// The model-guided tuner (AutoTVM's XGBTuner): gradient-boosted trees (XGBoost) learn to rank
// configs from their features (config_features), simulated annealing searches the space for the
// configs the model likes best, and a diversity filter spreads each batch over the space.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "autotune/tuner.h"
#include "autotune/xgb_booster.h"

namespace tessel::autotune {

class XGBTuner : public Tuner {
 public:
  struct Options {
    // rank:pairwise: the order of configs is all the search needs.
    BoosterOptions booster;
    // Successful measurements before the model is trained on them (fewer only fit noise); until
    // then proposals are random, or guided by the transfer data alone when there is some.
    size_t min_train = 8;
    // Simulated annealing: parallel chains, steps (temperature falls linearly from 1 to 0), and
    // the number of steps without a new top candidate after which it stops early.
    int chains = 128;
    int steps = 500;
    int early_stop = 50;
    // How strongly the diversity filter penalizes a candidate for the knob choices it shares with
    // the closest config already picked (0: pick by predicted score alone).
    double diversity = 0.5;
    // The share of every batch that is random, so a wrong model cannot trap the search.
    double epsilon = 0.05;
  };

  XGBTuner(const topi::ConfigSpace& space, uint64_t seed) : XGBTuner(space, seed, Options{}) {}
  XGBTuner(const topi::ConfigSpace& space, uint64_t seed, Options options);
  ~XGBTuner() override;

  std::vector<topi::ConfigEntity> next_batch(int n) override;
  void update(const std::vector<topi::ConfigEntity>& configs,
              const std::vector<double>& costs) override;
  // `features` must have the length of config_features for this space; an Error otherwise.
  void add_transfer(const std::vector<std::vector<double>>& features,
                    const std::vector<double>& scores) override;

 private:
  // ConfigSpace::get(index).choices() without building the entity (annealing makes many).
  std::vector<uint64_t> choices_of(uint64_t index) const;
  void append_features(uint64_t index, std::vector<float>& out) const;
  void train();
  // Up to `count` unvisited configs with the best predicted scores, best first.
  std::vector<uint64_t> anneal(size_t count);
  // Picks `n` of `candidates` (best first), trading predicted rank for distinct knob choices.
  std::vector<uint64_t> diversify(const std::vector<uint64_t>& candidates, size_t n) const;

  Options opt_;
  std::vector<uint64_t> knob_sizes_;
  size_t num_features_;
  std::unique_ptr<XGBBooster> model_;  // null until trained
  // Measured configs: row-major features, mean costs (+inf for failures), indices.
  std::vector<float> x_;
  std::vector<double> costs_;
  std::vector<uint64_t> indices_;
  size_t num_success_ = 0;
  std::vector<float> transfer_x_;
  std::vector<float> transfer_y_;
};

}  // namespace tessel::autotune
