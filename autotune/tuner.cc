#include "autotune/tuner.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "ir/error.h"
#if TESSEL_WITH_XGBOOST
#include "autotune/xgb_tuner.h"
#endif

namespace tessel::autotune {

using topi::ConfigEntity;
using topi::ConfigSpace;

// ---- Tuner ----

Tuner::Tuner(const ConfigSpace& space, uint64_t seed)
    : space_(space), rng_(seed), best_cost_(std::numeric_limits<double>::infinity()) {}

void Tuner::update(const std::vector<ConfigEntity>& configs, const std::vector<double>& costs) {
  if (configs.size() != costs.size()) {
    throw Error(fmt::format("tuner update: {} configs but {} costs", configs.size(), costs.size()));
  }
  for (size_t i = 0; i < configs.size(); ++i) {
    visit(configs[i].index());
    if (costs[i] < best_cost_) {
      best_cost_ = costs[i];
      best_index_ = configs[i].index();
    }
  }
}

void Tuner::add_transfer(const std::vector<std::vector<double>>& features,
                         const std::vector<double>& scores) {}

uint64_t Tuner::random_unvisited() {
  const uint64_t size = space_.size();
  TESSEL_ICHECK(visited_.size() < size) << "every config of the space is visited";
  std::uniform_int_distribution<uint64_t> any(0, size - 1);
  // Rejection sampling is uniform and O(1) while most of the space is unvisited; after this many
  // misses more than about half of it is visited, so size < 2 * visited and a scan is cheap.
  constexpr int kTries = 64;
  for (int t = 0; t < kTries; ++t) {
    uint64_t i = any(rng_);
    if (!visited(i)) return i;
  }
  uint64_t k = std::uniform_int_distribution<uint64_t>(0, size - visited_.size() - 1)(rng_);
  for (uint64_t i = 0;; ++i) {
    if (visited(i)) continue;
    if (k-- == 0) return i;
  }
}

namespace {

class RandomTuner : public Tuner {
 public:
  using Tuner::Tuner;
  std::vector<ConfigEntity> next_batch(int n) override {
    std::vector<ConfigEntity> out;
    while (static_cast<int>(out.size()) < n && has_next()) {
      uint64_t i = random_unvisited();
      visit(i);
      out.push_back(space_.get(i));
    }
    return out;
  }
};

class GridTuner : public Tuner {
 public:
  using Tuner::Tuner;
  std::vector<ConfigEntity> next_batch(int n) override {
    std::vector<ConfigEntity> out;
    for (; static_cast<int>(out.size()) < n && next_ < space_.size(); ++next_) {
      if (visited(next_)) continue;
      visit(next_);
      out.push_back(space_.get(next_));
    }
    return out;
  }

 private:
  uint64_t next_ = 0;
};

// A genetic search in the style of AutoTVM's GATuner. The population is the best measured configs;
// a child crosses an elite with a population member picked by fitness, then mutates each knob
// choice with a small probability.
class GATuner : public Tuner {
 public:
  GATuner(const ConfigSpace& space, uint64_t seed)
      : Tuner(space, seed), knob_sizes_(space.knob_sizes()) {}

  std::vector<ConfigEntity> next_batch(int n) override {
    std::vector<ConfigEntity> out;
    std::vector<const Member*> population = select_population();
    while (static_cast<int>(out.size()) < n && has_next()) {
      uint64_t i = population.size() < 2 ? random_unvisited() : breed(population);
      visit(i);
      out.push_back(space_.get(i));
    }
    return out;
  }

  void update(const std::vector<ConfigEntity>& configs, const std::vector<double>& costs) override {
    Tuner::update(configs, costs);
    for (size_t i = 0; i < configs.size(); ++i) {
      if (std::isfinite(costs[i])) measured_.push_back({configs[i].choices(), costs[i]});
    }
  }

 private:
  static constexpr size_t kPopulation = 32;
  static constexpr size_t kElite = 8;
  static constexpr double kMutationProb = 0.1;
  // Children tried per proposal before falling back to a random config: a converged population
  // mostly breeds configs it has already visited.
  static constexpr int kBreedTries = 16;

  struct Member {
    std::vector<uint64_t> choices;
    double cost;
  };

  // The kPopulation cheapest measured configs, cheapest first.
  std::vector<const Member*> select_population() const {
    std::vector<const Member*> all;
    for (const Member& m : measured_) all.push_back(&m);
    size_t keep = std::min(kPopulation, all.size());
    std::partial_sort(all.begin(), all.begin() + keep, all.end(),
                      [](const Member* a, const Member* b) { return a->cost < b->cost; });
    all.resize(keep);
    return all;
  }

  uint64_t breed(const std::vector<const Member*>& population) {
    // Relative speed, sharpened: the population's costs are often within 2x of each other, and
    // plain proportional selection then barely prefers the best.
    std::vector<double> fitness;
    for (const Member* m : population)
      fitness.push_back(std::pow(population.front()->cost / m->cost, 4));
    std::discrete_distribution<size_t> by_fitness(fitness.begin(), fitness.end());
    std::uniform_int_distribution<size_t> elite(0, std::min(kElite, population.size()) - 1);
    std::uniform_real_distribution<double> unit(0, 1);
    for (int t = 0; t < kBreedTries; ++t) {
      const Member& a = *population[elite(rng_)];
      const Member& b = *population[by_fitness(rng_)];
      std::vector<uint64_t> child(knob_sizes_.size());
      for (size_t k = 0; k < child.size(); ++k) {
        child[k] = unit(rng_) < 0.5 ? a.choices[k] : b.choices[k];
        if (unit(rng_) < kMutationProb)
          child[k] = std::uniform_int_distribution<uint64_t>(0, knob_sizes_[k] - 1)(rng_);
      }
      uint64_t i = space_.index_of(child);
      if (!visited(i)) return i;
    }
    return random_unvisited();
  }

  std::vector<uint64_t> knob_sizes_;
  std::vector<Member> measured_;
};

double log2_of(int64_t v) { return std::log2(static_cast<double>(std::max<int64_t>(v, 1))); }

}  // namespace

// ---- factory and features ----

bool xgb_tuner_available() { return TESSEL_WITH_XGBOOST; }

const std::vector<std::string>& tuner_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out{"random", "grid", "ga"};
    if (xgb_tuner_available()) out.push_back("xgb");
    return out;
  }();
  return names;
}

const std::string& default_tuner_name() {
  static const std::string name = xgb_tuner_available() ? "xgb" : "ga";
  return name;
}

void check_tuner_name(const std::string& name) {
  const std::vector<std::string>& names = tuner_names();
  if (std::find(names.begin(), names.end(), name) != names.end()) return;
  if (name == "xgb") {
    throw Error(
        fmt::format("the xgb tuner is not in this build: Tessel was built without XGBoost "
                    "(TESSEL_WITH_XGBOOST=OFF); choose one of {}",
                    fmt::join(names, ", ")));
  }
  throw Error(fmt::format("unknown tuner '{}' (valid tuners: {})", name, fmt::join(names, ", ")));
}

std::unique_ptr<Tuner> make_tuner(const std::string& name, const ConfigSpace& space,
                                  uint64_t seed) {
  check_tuner_name(name);
  if (name == "random") return std::make_unique<RandomTuner>(space, seed);
  if (name == "grid") return std::make_unique<GridTuner>(space, seed);
  if (name == "ga") return std::make_unique<GATuner>(space, seed);
#if TESSEL_WITH_XGBOOST
  if (name == "xgb") return std::make_unique<XGBTuner>(space, seed);
#endif
  TESSEL_UNREACHABLE("tuner '" + name + "' is listed but not made");
}

std::vector<double> config_features(const ConfigEntity& config) {
  std::vector<double> out = config.features();
  double total_volume = 0;  // log2 of the product of every split's tile volume
  for (size_t k = 0; k < config.num_knobs(); ++k) {
    if (config.knob_kind(k) != topi::KnobKind::kSplit) continue;
    const std::vector<int64_t>& factors = config.knob_value(k);
    int64_t volume = 1;
    for (size_t f = 0; f < factors.size(); ++f) {
      out.push_back(log2_of(factors[f]));
      if (f > 0) volume *= factors[f];
    }
    out.push_back(log2_of(volume));
    total_volume += log2_of(volume);
    int64_t innermost = factors.back();
    for (int64_t m : {4, 8, 16}) out.push_back(innermost % m == 0 ? 1.0 : 0.0);
  }
  out.push_back(total_volume);
  return out;
}

}  // namespace tessel::autotune
