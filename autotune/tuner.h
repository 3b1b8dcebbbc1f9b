// Search strategies over a template's ConfigSpace (AutoTVM's tuners): random, grid, genetic (GA)
// and, in a build with XGBoost, XGBoost-guided (autotune/xgb_tuner.h). A tuner proposes batches of
// configs it has not proposed before and learns from their measured costs; the tuning loop
// (autotune/tune.h) measures them.
#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <unordered_set>
#include <vector>

#include "topi/config_space.h"

namespace tessel::autotune {

class Tuner {
 public:
  // `space` must outlive the tuner. `seed` makes every proposal sequence reproducible.
  Tuner(const topi::ConfigSpace& space, uint64_t seed);
  virtual ~Tuner() = default;
  Tuner(const Tuner&) = delete;
  Tuner& operator=(const Tuner&) = delete;

  // Up to `n` configs that were never proposed nor passed to update(); fewer (maybe none) when
  // the space runs out.
  virtual std::vector<topi::ConfigEntity> next_batch(int n) = 0;
  // Measured results: mean seconds per config, +infinity for a config whose measurement failed.
  // Also used to replay the records of an interrupted run (resume): those configs count as visited.
  virtual void update(const std::vector<topi::ConfigEntity>& configs,
                      const std::vector<double>& costs);
  // Results for configs of a similar workload with the same space layout (same knobs, so features
  // line up), as `score` = best cost of that workload / cost (1 is its best, 0 an error). Only
  // model-based tuners use them, to guide their first batches; the default ignores them.
  virtual void add_transfer(const std::vector<std::vector<double>>& features,
                            const std::vector<double>& scores);

  // True while some config of the space has not been visited.
  bool has_next() const { return visited_.size() < space_.size(); }
  // The lowest cost seen by update() (infinity before any success) and its config index.
  double best_cost() const { return best_cost_; }
  uint64_t best_index() const { return best_index_; }

 protected:
  bool visited(uint64_t index) const { return visited_.count(index) != 0; }
  void visit(uint64_t index) { visited_.insert(index); }
  // A uniformly random index of the space that is not visited yet (the space must have one).
  uint64_t random_unvisited();

  const topi::ConfigSpace& space_;
  std::mt19937_64 rng_;

 private:
  std::unordered_set<uint64_t> visited_;
  double best_cost_;
  uint64_t best_index_ = 0;
};

// A tuner of tuner_names(); check_tuner_name's Error for any other name.
std::unique_ptr<Tuner> make_tuner(const std::string& name, const topi::ConfigSpace& space,
                                  uint64_t seed);
// The tuners of this build: "random", "grid", "ga", and "xgb" where Tessel was built with XGBoost
// (the CMake option TESSEL_WITH_XGBOOST, on where libxgboost is found).
const std::vector<std::string>& tuner_names();
bool xgb_tuner_available();
// The tuner used where none is named: "xgb", or "ga" in a build without XGBoost.
const std::string& default_tuner_name();
// An Error unless `name` is one of tuner_names(): for "xgb" in a build without XGBoost, one that
// says so; for another name, one that lists the tuners.
void check_tuner_name(const std::string& name);

// Features of a config for cost models: the knob values (ConfigEntity::features) followed by
// loop-structure features derived from them: for each split, the log2 of every factor and of the
// product of its inner factors (the tile volume), and whether the innermost factor is a multiple
// of 4, 8 and 16 (vector-friendly); last the log2 of the product of all tile volumes (the
// footprint of the innermost tile, which trees cannot sum up from the per-split features).
std::vector<double> config_features(const topi::ConfigEntity& config);

}  // namespace tessel::autotune
