// The auto-scheduler's learned cost model (Ansor's XGBModel): XGBoost over program features
// (features.h), trained after every measured batch on all measurements of the run, with each
// program's throughput normalized by its task's best (best cost / cost; 0 for a failure) as the
// label, so that one model serves every task. The objective ranks programs within each task
// (rank:pairwise): on held-back random matmul programs it ordered 0.78-0.85 of the clearly
// ordered pairs right where Ansor's regression on the same labels (reg:squarederror) got 0.59
// (docs/auto-scheduler.md). Until it has min_train successes it scores
// at random. Built only with TESSEL_WITH_XGBOOST.
#pragma once

#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "autotune/auto_schedule/cost_model.h"
#include "autotune/xgb_booster.h"

namespace tessel::autotune {

class XGBCostModel : public CostModel {
 public:
  struct Options {
    BoosterOptions booster = {"rank:pairwise", 64, 6, 0.3};
    size_t min_train = 16;
  };
  explicit XGBCostModel(uint64_t seed) : XGBCostModel(seed, Options{}) {}
  XGBCostModel(uint64_t seed, Options opt);
  ~XGBCostModel() override;

  std::vector<double> predict(const ProgramBatch& batch) override;
  void update(const ProgramBatch& batch, const std::vector<double>& costs) override;
  std::string name() const override { return "xgb"; }

 private:
  void train();

  Options opt_;
  std::mt19937_64 rng_;
  std::vector<float> x_;            // one row of kNumFeatures per measured program
  std::vector<double> costs_;       // its cost (+inf for a failure)
  std::vector<std::string> tasks_;  // its workload
  size_t successes_ = 0;
  std::unique_ptr<XGBBooster> model_;  // null until trained
};

}  // namespace tessel::autotune
