// What guides the auto-scheduler's evolutionary search: a model that scores programs without
// measuring them, higher for faster, learning from each measured batch. One model serves every
// task of a run.
#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "autotune/auto_schedule/program.h"

namespace tessel::autotune {

// The programs of one task, and what they are programs of.
struct ProgramBatch {
  const ComputeDAG* dag = nullptr;
  const std::vector<Sketch>* sketches = nullptr;
  std::string workload;
  std::vector<Program> programs;
};

class CostModel {
 public:
  virtual ~CostModel() = default;
  // One score per program, higher for faster; comparable within a batch.
  virtual std::vector<double> predict(const ProgramBatch& batch) = 0;
  // Learns measured costs (seconds; infinity for a failure), one per program of `batch`.
  virtual void update(const ProgramBatch& batch, const std::vector<double>& costs) = 0;
  virtual std::string name() const = 0;
};

// Random scores: the search without a model (Ansor's "random" policy, and its fallback when no
// XGBoost is built in).
class RandomCostModel : public CostModel {
 public:
  explicit RandomCostModel(uint64_t seed) : rng_(seed) {}
  std::vector<double> predict(const ProgramBatch& batch) override {
    std::vector<double> out;
    std::uniform_real_distribution<double> u(0, 1);
    for (size_t i = 0; i < batch.programs.size(); ++i) out.push_back(u(rng_));
    return out;
  }
  void update(const ProgramBatch&, const std::vector<double>&) override {}
  std::string name() const override { return "random"; }

 private:
  std::mt19937_64 rng_;
};

// The run's model: XGBoost over program features (xgb_cost_model.h) in a build with XGBoost,
// else random scores.
std::unique_ptr<CostModel> make_cost_model(uint64_t seed);

// The pairwise ranking accuracy of `scores` against `costs`: of the pairs whose costs differ,
// the share whose scores order them the same way (higher score, lower cost). 0.5 is chance.
double pairwise_accuracy(const std::vector<double>& scores, const std::vector<double>& costs);

}  // namespace tessel::autotune
