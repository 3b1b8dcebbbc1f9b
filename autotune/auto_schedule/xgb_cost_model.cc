#include "autotune/auto_schedule/xgb_cost_model.h"

#include <cmath>
#include <limits>

#include "autotune/auto_schedule/features.h"

namespace tessel::autotune {

XGBCostModel::XGBCostModel(uint64_t seed, Options opt) : opt_(std::move(opt)), rng_(seed) {}

XGBCostModel::~XGBCostModel() = default;

std::vector<double> XGBCostModel::predict(const ProgramBatch& batch) {
  std::vector<double> out;
  if (!model_) {
    std::uniform_real_distribution<double> u(0, 1);
    for (size_t i = 0; i < batch.programs.size(); ++i) out.push_back(u(rng_));
    return out;
  }
  std::vector<float> x;
  for (const Program& p : batch.programs) {
    std::vector<float> f = program_features(*batch.dag, (*batch.sketches)[p.sketch], p);
    x.insert(x.end(), f.begin(), f.end());
  }
  for (float y : model_->predict(x)) out.push_back(y);
  return out;
}

void XGBCostModel::update(const ProgramBatch& batch, const std::vector<double>& costs) {
  for (size_t i = 0; i < batch.programs.size() && i < costs.size(); ++i) {
    const Program& p = batch.programs[i];
    std::vector<float> f = program_features(*batch.dag, (*batch.sketches)[p.sketch], p);
    x_.insert(x_.end(), f.begin(), f.end());
    costs_.push_back(costs[i]);
    tasks_.push_back(batch.workload);
    successes_ += std::isfinite(costs[i]) ? 1 : 0;
  }
  if (successes_ >= opt_.min_train) train();
}

void XGBCostModel::train() {
  // Rows grouped by task: the ranking objective orders programs within a task only.
  std::map<std::string, std::vector<size_t>> rows;
  std::map<std::string, double> best;
  for (size_t i = 0; i < costs_.size(); ++i) {
    rows[tasks_[i]].push_back(i);
    auto [it, fresh] = best.try_emplace(tasks_[i], costs_[i]);
    if (!fresh) it->second = std::min(it->second, costs_[i]);
  }
  std::vector<float> x, labels;
  std::vector<unsigned> groups;
  for (const auto& [task, of_task] : rows) {
    for (size_t i : of_task) {
      x.insert(x.end(), x_.begin() + static_cast<std::ptrdiff_t>(i * kNumFeatures),
               x_.begin() + static_cast<std::ptrdiff_t>((i + 1) * kNumFeatures));
      labels.push_back(std::isfinite(costs_[i]) ? static_cast<float>(best[task] / costs_[i])
                                                : 0.0f);
    }
    groups.push_back(static_cast<unsigned>(of_task.size()));
  }
  model_ = std::make_unique<XGBBooster>(x, kNumFeatures, labels, groups, opt_.booster, rng_());
}

}  // namespace tessel::autotune
