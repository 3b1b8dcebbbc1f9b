// Gradient-boosted trees through libxgboost's C API, trained once on a dense matrix; shared by
// the template tuner's XGBTuner and the auto-scheduler's cost model. Keeps xgboost's headers out
// of Tessel's interface. Built only with TESSEL_WITH_XGBOOST.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tessel::autotune {

struct BoosterOptions {
  // "rank:pairwise" learns the order of rows within each group; "reg:squarederror" fits the
  // labels themselves.
  std::string objective = "rank:pairwise";
  int rounds = 64;
  int max_depth = 4;
  double eta = 0.3;
};

class XGBBooster {
 public:
  // Trains on the rows of `x` (row-major, `num_features` each) with `labels`; `groups` are the
  // sizes of the runs of rows ranked against each other (a ranking objective only). One thread
  // and `seed` keep it reproducible. Throws tessel::Error when xgboost fails.
  XGBBooster(const std::vector<float>& x, size_t num_features, const std::vector<float>& labels,
             const std::vector<unsigned>& groups, const BoosterOptions& opt, uint64_t seed);
  ~XGBBooster();
  XGBBooster(const XGBBooster&) = delete;
  XGBBooster& operator=(const XGBBooster&) = delete;

  // One score per row of `x`; higher is better.
  std::vector<float> predict(const std::vector<float>& x) const;

 private:
  struct Handle;
  size_t num_features_;
  std::unique_ptr<Handle> handle_;
};

}  // namespace tessel::autotune
