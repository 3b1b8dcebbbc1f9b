#include "autotune/xgb_tuner.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <set>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "autotune/xgb_booster.h"
#include "ir/error.h"

namespace tessel::autotune {

using topi::ConfigEntity;
using topi::ConfigSpace;

XGBTuner::XGBTuner(const ConfigSpace& space, uint64_t seed, Options options)
    : Tuner(space, seed),
      opt_(std::move(options)),
      knob_sizes_(space.knob_sizes()),
      num_features_(config_features(space.get(0)).size()) {}

XGBTuner::~XGBTuner() = default;

void XGBTuner::append_features(uint64_t index, std::vector<float>& out) const {
  for (double f : config_features(space_.get(index))) out.push_back(static_cast<float>(f));
}

void XGBTuner::update(const std::vector<ConfigEntity>& configs, const std::vector<double>& costs) {
  Tuner::update(configs, costs);
  for (size_t i = 0; i < configs.size(); ++i) {
    append_features(configs[i].index(), x_);
    costs_.push_back(costs[i]);
    indices_.push_back(configs[i].index());
    if (std::isfinite(costs[i])) ++num_success_;
  }
  if (num_success_ >= opt_.min_train || !transfer_y_.empty()) train();
}

void XGBTuner::add_transfer(const std::vector<std::vector<double>>& features,
                            const std::vector<double>& scores) {
  if (features.size() != scores.size()) {
    throw Error(fmt::format("transfer data: {} feature rows but {} scores", features.size(),
                            scores.size()));
  }
  for (size_t i = 0; i < features.size(); ++i) {
    if (features[i].size() != num_features_) {
      throw Error(fmt::format("transfer data row {} has {} features; this config space has {}", i,
                              features[i].size(), num_features_));
    }
    for (double f : features[i]) transfer_x_.push_back(static_cast<float>(f));
    transfer_y_.push_back(static_cast<float>(scores[i]));
  }
  if (!transfer_y_.empty()) train();
}

void XGBTuner::train() {
  std::vector<float> x, labels;
  std::vector<unsigned> groups;
  // Own rows only once there are enough successes to say something about this workload.
  if (num_success_ >= opt_.min_train) {
    x = x_;
    for (double c : costs_)
      labels.push_back(std::isfinite(c) ? static_cast<float>(best_cost() / c) : 0.0f);
    groups.push_back(static_cast<unsigned>(costs_.size()));
  }
  if (!transfer_y_.empty()) {
    x.insert(x.end(), transfer_x_.begin(), transfer_x_.end());
    labels.insert(labels.end(), transfer_y_.begin(), transfer_y_.end());
    groups.push_back(static_cast<unsigned>(transfer_y_.size()));
  }
  if (labels.empty()) return;
  model_ = std::make_unique<XGBBooster>(x, num_features_, labels, groups, opt_.booster, rng_());
}

std::vector<uint64_t> XGBTuner::choices_of(uint64_t index) const {
  std::vector<uint64_t> c(knob_sizes_.size());
  for (size_t k = 0; k < c.size(); ++k) {
    c[k] = index % knob_sizes_[k];
    index /= knob_sizes_[k];
  }
  return c;
}

std::vector<uint64_t> XGBTuner::anneal(size_t count) {
  const size_t chains = static_cast<size_t>(std::max(opt_.chains, 1));
  std::vector<size_t> movable;  // knobs with a choice to change
  for (size_t k = 0; k < knob_sizes_.size(); ++k) {
    if (knob_sizes_[k] > 1) movable.push_back(k);
  }
  if (movable.empty()) return {};

  // Chains revisit points (more than half of all steps), so each distinct point is featurized
  // and predicted once; the new points of a step go through one DMatrix.
  std::unordered_map<uint64_t, float> predicted;
  auto score = [&](const std::vector<uint64_t>& points) {
    std::vector<uint64_t> fresh;
    std::vector<float> x;
    for (uint64_t p : points) {
      if (!predicted.try_emplace(p, 0.0f).second) continue;
      fresh.push_back(p);
      append_features(p, x);
    }
    if (!fresh.empty()) {
      std::vector<float> y = model_->predict(x);
      for (size_t i = 0; i < fresh.size(); ++i) predicted[fresh[i]] = y[i];
    }
    std::vector<float> out;
    for (uint64_t p : points) out.push_back(predicted.at(p));
    return out;
  };

  // Chains start at the best measured configs (the model's knowledge is densest around them)
  // and at random points.
  std::vector<size_t> order(indices_.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return costs_[a] < costs_[b]; });
  std::vector<uint64_t> points;
  for (size_t i = 0;
       i < order.size() && points.size() < chains / 4 && std::isfinite(costs_[order[i]]); ++i) {
    points.push_back(indices_[order[i]]);
  }
  std::uniform_int_distribution<uint64_t> any(0, space_.size() - 1);
  while (points.size() < chains) points.push_back(any(rng_));
  std::vector<float> scores = score(points);

  // The best `count` unvisited points seen, as (score, index), and their indices.
  std::set<std::pair<float, uint64_t>> top;
  std::unordered_set<uint64_t> in_top;
  auto consider = [&](uint64_t index, float s) {
    if (visited(index) || in_top.count(index)) return false;
    if (top.size() == count) {
      if (s <= top.begin()->first) return false;
      in_top.erase(top.begin()->second);
      top.erase(top.begin());
    }
    top.emplace(s, index);
    in_top.insert(index);
    return true;
  };
  for (size_t c = 0; c < chains; ++c) consider(points[c], scores[c]);

  std::uniform_int_distribution<size_t> pick_knob(0, movable.size() - 1);
  std::uniform_real_distribution<double> unit(0, 1);
  int last_change = 0;
  for (int step = 0; step < opt_.steps && step - last_change < opt_.early_stop; ++step) {
    double temperature = 1.0 - static_cast<double>(step) / opt_.steps;
    std::vector<uint64_t> next(chains);
    for (size_t c = 0; c < chains; ++c) {
      std::vector<uint64_t> choices = choices_of(points[c]);
      size_t k = movable[pick_knob(rng_)];
      // A different choice of knob k, uniformly.
      uint64_t v = std::uniform_int_distribution<uint64_t>(0, knob_sizes_[k] - 2)(rng_);
      choices[k] = v >= choices[k] ? v + 1 : v;
      next[c] = space_.index_of(choices);
    }
    std::vector<float> next_scores = score(next);
    for (size_t c = 0; c < chains; ++c) {
      if (consider(next[c], next_scores[c])) last_change = step;
      double gain = next_scores[c] - scores[c];
      if (gain >= 0 || unit(rng_) < std::exp(gain / std::max(temperature, 1e-5))) {
        points[c] = next[c];
        scores[c] = next_scores[c];
      }
    }
  }
  std::vector<uint64_t> out;
  for (auto it = top.rbegin(); it != top.rend(); ++it) out.push_back(it->second);
  return out;
}

std::vector<uint64_t> XGBTuner::diversify(const std::vector<uint64_t>& candidates, size_t n) const {
  std::vector<std::vector<uint64_t>> choices;
  for (uint64_t i : candidates) choices.push_back(choices_of(i));
  const double num_knobs = static_cast<double>(std::max<size_t>(knob_sizes_.size(), 1));
  std::vector<size_t> shared(candidates.size(), 0);  // most choices shared with one picked config
  std::vector<bool> taken(candidates.size(), false);
  std::vector<uint64_t> out;
  while (out.size() < std::min(n, candidates.size())) {
    size_t best = 0;
    double best_gain = -std::numeric_limits<double>::infinity();
    for (size_t i = 0; i < candidates.size(); ++i) {
      if (taken[i]) continue;
      double rank_score = 1.0 - static_cast<double>(i) / candidates.size();
      double gain = rank_score - opt_.diversity * shared[i] / num_knobs;
      if (gain > best_gain) {
        best_gain = gain;
        best = i;
      }
    }
    taken[best] = true;
    out.push_back(candidates[best]);
    for (size_t i = 0; i < candidates.size(); ++i) {
      size_t same = 0;
      for (size_t k = 0; k < choices[i].size(); ++k) same += choices[i][k] == choices[best][k];
      shared[i] = std::max(shared[i], same);
    }
  }
  return out;
}

std::vector<ConfigEntity> XGBTuner::next_batch(int n) {
  std::vector<uint64_t> picks;
  if (model_ && n > 0)
    picks = diversify(anneal(2 * static_cast<size_t>(n)), static_cast<size_t>(n));
  std::uniform_real_distribution<double> unit(0, 1);
  std::vector<ConfigEntity> out;
  size_t next_pick = 0;
  while (static_cast<int>(out.size()) < n && has_next()) {
    // A random config from epsilon-greedy, or where the model ran out of candidates; a pick can
    // have been drawn at random before its turn.
    while (next_pick < picks.size() && visited(picks[next_pick])) ++next_pick;
    bool random = next_pick == picks.size() || unit(rng_) < opt_.epsilon;
    uint64_t i = random ? random_unvisited() : picks[next_pick++];
    visit(i);
    out.push_back(space_.get(i));
  }
  return out;
}

}  // namespace tessel::autotune
