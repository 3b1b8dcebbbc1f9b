#include "autotune/auto_schedule/template_sketch.h"

#include <vector>

namespace tessel::autotune {
namespace {

// Draws before a sampler or a mutation gives up on the constraint.
constexpr int kDraws = 16;

// `choices` with knob `k` set to another of its `sizes[k]` values.
void redraw_knob(std::vector<uint64_t>& choices, const std::vector<uint64_t>& sizes,
                 std::mt19937_64& rng) {
  std::vector<size_t> knobs;
  for (size_t k = 0; k < sizes.size(); ++k) {
    if (sizes[k] > 1) knobs.push_back(k);
  }
  if (knobs.empty()) return;
  size_t k = knobs[std::uniform_int_distribution<size_t>(0, knobs.size() - 1)(rng)];
  uint64_t other = std::uniform_int_distribution<uint64_t>(0, sizes[k] - 2)(rng);
  choices[k] = other >= choices[k] ? other + 1 : other;
}

// A config worth measuring: the constraint accepts it, and it is not the fallback.
bool accepted(const ScheduleTemplate& t, uint64_t index) {
  return index != t.space().fallback().index() &&
         t.space().invalid_reason(t.space().get(index)).empty();
}

}  // namespace

te::Trace ScheduleTemplate::trace(uint64_t index) const {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = traces_.find(index);
    if (it != traces_.end()) return it->second;
  }
  te::Trace made = tracer_(space_.get(index));
  std::lock_guard<std::mutex> lock(mu_);
  return traces_.emplace(index, std::move(made)).first->second;
}

uint64_t sample_template_config(const ScheduleTemplate& t, std::mt19937_64& rng) {
  const std::vector<uint64_t> sizes = t.space().knob_sizes();
  const topi::ConfigEntity fallback = t.space().fallback();
  bool near_fallback = std::bernoulli_distribution(0.5)(rng);
  for (int i = 0; i < kDraws; ++i) {
    // Where the constraint rejects most of the space, the fallback's neighbours still pass.
    near_fallback |= i == kDraws / 2;
    uint64_t index;
    if (near_fallback) {
      std::vector<uint64_t> choices = fallback.choices();
      redraw_knob(choices, sizes, rng);
      index = t.space().index_of(choices);
    } else {
      index = std::uniform_int_distribution<uint64_t>(0, t.space().size() - 1)(rng);
    }
    if (accepted(t, index)) return index;
  }
  return fallback.index();
}

uint64_t mutate_template_config(const ScheduleTemplate& t, uint64_t index, std::mt19937_64& rng) {
  const std::vector<uint64_t> sizes = t.space().knob_sizes();
  for (int i = 0; i < kDraws; ++i) {
    std::vector<uint64_t> choices = t.space().get(index).choices();
    redraw_knob(choices, sizes, rng);
    uint64_t next = t.space().index_of(choices);
    if (accepted(t, next)) return next;
  }
  return index;
}

}  // namespace tessel::autotune
