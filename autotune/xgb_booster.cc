#include "autotune/xgb_booster.h"

#include <fmt/format.h>
#include <xgboost/c_api.h>

#include <limits>
#include <utility>

#include "ir/error.h"

namespace tessel::autotune {
namespace {

void xgb_check(int rc, const char* call) {
  if (rc != 0) throw Error(fmt::format("xgboost: {} failed: {}", call, XGBGetLastError()));
}

struct DMatrixFree {
  void operator()(void* h) const { XGDMatrixFree(h); }
};
using DMatrix = std::unique_ptr<void, DMatrixFree>;

// A dense matrix of `x.size() / num_features` rows; NaN marks a missing value, which never occurs.
DMatrix make_dmatrix(const std::vector<float>& x, size_t num_features) {
  DMatrixHandle h = nullptr;
  xgb_check(XGDMatrixCreateFromMat(x.data(), x.size() / num_features, num_features,
                                   std::numeric_limits<float>::quiet_NaN(), &h),
            "XGDMatrixCreateFromMat");
  return DMatrix(h);
}

}  // namespace

struct XGBBooster::Handle {
  struct Free {
    void operator()(void* h) const { XGBoosterFree(h); }
  };
  std::unique_ptr<void, Free> booster;
};

XGBBooster::XGBBooster(const std::vector<float>& x, size_t num_features,
                       const std::vector<float>& labels, const std::vector<unsigned>& groups,
                       const BoosterOptions& opt, uint64_t seed)
    : num_features_(num_features), handle_(std::make_unique<Handle>()) {
  DMatrix train = make_dmatrix(x, num_features);
  xgb_check(XGDMatrixSetFloatInfo(train.get(), "label", labels.data(), labels.size()),
            "XGDMatrixSetFloatInfo");
  if (opt.objective.starts_with("rank:")) {
    xgb_check(XGDMatrixSetUIntInfo(train.get(), "group", groups.data(), groups.size()),
              "XGDMatrixSetUIntInfo");
  }
  DMatrixHandle dmats[] = {train.get()};
  BoosterHandle h = nullptr;
  xgb_check(XGBoosterCreate(dmats, 1, &h), "XGBoosterCreate");
  handle_->booster.reset(h);
  const std::pair<const char*, std::string> params[] = {
      {"objective", opt.objective},
      {"max_depth", std::to_string(opt.max_depth)},
      {"eta", fmt::format("{}", opt.eta)},
      {"min_child_weight", "1"},
      {"gamma", "0.0001"},
      {"tree_method", "exact"},
      {"nthread", "1"},
      {"seed", std::to_string(seed % std::numeric_limits<int32_t>::max())},
      {"verbosity", "0"},
  };
  for (const auto& [key, value] : params) {
    xgb_check(XGBoosterSetParam(h, key, value.c_str()), "XGBoosterSetParam");
  }
  for (int round = 0; round < opt.rounds; ++round) {
    xgb_check(XGBoosterUpdateOneIter(h, round, train.get()), "XGBoosterUpdateOneIter");
  }
}

XGBBooster::~XGBBooster() = default;

std::vector<float> XGBBooster::predict(const std::vector<float>& x) const {
  DMatrix m = make_dmatrix(x, num_features_);
  bst_ulong len = 0;
  const float* out = nullptr;
  xgb_check(XGBoosterPredict(handle_->booster.get(), m.get(), 0, 0, 0, &len, &out),
            "XGBoosterPredict");
  return std::vector<float>(out, out + len);
}

}  // namespace tessel::autotune
