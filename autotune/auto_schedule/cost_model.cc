#include "autotune/auto_schedule/cost_model.h"

#if TESSEL_WITH_XGBOOST
#include "autotune/auto_schedule/xgb_cost_model.h"
#endif

namespace tessel::autotune {

std::unique_ptr<CostModel> make_cost_model(uint64_t seed) {
#if TESSEL_WITH_XGBOOST
  return std::make_unique<XGBCostModel>(seed);
#else
  return std::make_unique<RandomCostModel>(seed);
#endif
}

double pairwise_accuracy(const std::vector<double>& scores, const std::vector<double>& costs) {
  size_t pairs = 0, right = 0;
  for (size_t i = 0; i < costs.size(); ++i) {
    for (size_t j = i + 1; j < costs.size(); ++j) {
      if (costs[i] == costs[j]) continue;
      ++pairs;
      bool i_faster = costs[i] < costs[j];
      right += (scores[i] > scores[j]) == i_faster && scores[i] != scores[j] ? 1 : 0;
    }
  }
  return pairs == 0 ? 0.5 : static_cast<double>(right) / static_cast<double>(pairs);
}

}  // namespace tessel::autotune
