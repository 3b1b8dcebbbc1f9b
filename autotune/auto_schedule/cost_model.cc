#include "autotune/auto_schedule/cost_model.h"

namespace tessel::autotune {

std::unique_ptr<CostModel> make_cost_model(uint64_t seed) {
  return std::make_unique<RandomCostModel>(seed);
}

}  // namespace tessel::autotune
