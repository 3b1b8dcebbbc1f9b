#include "autotune/auto_schedule/sketch.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace tessel::autotune {
namespace {

// The stage that reads `p` point for point once the inlined stages between them are gone: its
// elementwise or unpacking consumer, followed through inlined elementwise ones; kNoStage when
// there is none, or when it already holds another tile.
size_t fusible_consumer(const ComputeDAG& dag, const std::vector<StagePlan>& plans, size_t p) {
  const StageFacts& f = dag.stages()[p];
  size_t c = f.elementwise_consumer != kNoStage ? f.elementwise_consumer : f.unpacking_consumer;
  while (c != kNoStage && plans[c].rule == SketchRule::kInline)
    c = dag.stages()[c].elementwise_consumer;
  return c != kNoStage && plans[c].rule == SketchRule::kRoot ? c : kNoStage;
}

// Expands the sketches of stages [0, s] (stage s next) from `plans`, whose later stages are set.
void expand(const ComputeDAG& dag, std::vector<StagePlan> plans, size_t s,
            std::vector<Sketch>& out) {
  if (s == kNoStage) {
    out.push_back({std::move(plans), nullptr});
    return;
  }
  const StageFacts& f = dag.stages()[s];
  auto go = [&](StagePlan plan) {
    std::vector<StagePlan> next = plans;
    next[s] = plan;
    if (plan.rule == SketchRule::kTileFused) next[plan.into] = {SketchRule::kConsumer};
    expand(dag, std::move(next), s - 1, out);
  };
  if (f.placeholder) return go({SketchRule::kRoot});
  // A padded input: inlined (its bounds checks in the reduction's inner loop), or computed once
  // (at root, or at a loop of the output: compute_location.h).
  if (f.guarded_window) {
    go({SketchRule::kInline});
    return go({SketchRule::kRoot});
  }
  // An expensive stage that several stages read would be computed once per reader, a transform
  // that a stage re-reads once per read.
  if (!f.reduction && !f.output && !(f.expensive && f.consumers.size() > 1) && !f.reread_transform)
    return go({SketchRule::kInline});
  if (f.data_reuse) {
    // te computes no output inside another stage.
    size_t c = f.output ? kNoStage : fusible_consumer(dag, plans, s);
    if (c != kNoStage) {
      for (int level : {1, 2}) go({SketchRule::kTileFused, c, level});
      return;
    }
    for (int level : {1, 2}) go({SketchRule::kCacheWrite, kNoStage, level});
    return go({SketchRule::kTile});
  }
  if (f.rfactor_pays) go({SketchRule::kRfactor});
  go({SketchRule::kRoot});
}

}  // namespace

const char* sketch_rule_name(SketchRule r) {
  switch (r) {
    case SketchRule::kRoot:
      return "root";
    case SketchRule::kInline:
      return "inline";
    case SketchRule::kTile:
      return "tile";
    case SketchRule::kTileFused:
      return "tile+fuse";
    case SketchRule::kCacheWrite:
      return "cache_write";
    case SketchRule::kRfactor:
      return "rfactor";
    case SketchRule::kConsumer:
      return "consumer";
  }
  return "?";
}

std::string Sketch::str(const ComputeDAG& dag) const {
  if (schedule_template) {
    const topi::ConfigSpace& space = schedule_template->space();
    topi::ConfigEntity fallback = space.fallback();
    std::vector<std::string> knobs;
    for (size_t k = 0; k < fallback.num_knobs(); ++k) knobs.push_back(fallback.knob_name(k));
    return fmt::format("  the op's schedule template: {} configs of knobs {}\n", space.size(),
                       fmt::join(knobs, ", "));
  }
  std::string out;
  for (size_t i = 0; i < plans.size(); ++i) {
    const StageFacts& f = dag.stages()[i];
    if (f.placeholder) continue;
    const StagePlan& p = plans[i];
    std::string what;
    switch (p.rule) {
      case SketchRule::kRoot:
        what = "at root";
        break;
      case SketchRule::kInline:
        what = "inlined";
        break;
      case SketchRule::kTile:
        what = "tiled SSRSRS at root";
        break;
      case SketchRule::kTileFused:
        what = fmt::format("tiled SSRSRS, computed at tile level {} of {}", p.level,
                           dag.stages()[p.into].name);
        break;
      case SketchRule::kCacheWrite:
        what = fmt::format("cache write: {}.local tiled SSRSRS, computed at tile level {} of {}",
                           f.name, p.level, f.name);
        break;
      case SketchRule::kRfactor:
        what = "rfactor into vector partials";
        break;
      case SketchRule::kConsumer:
        what = "tiled to hold a producer's tile, at root";
        break;
    }
    out += fmt::format("  {}: {}\n", f.name, what);
  }
  return out;
}

std::vector<Sketch> generate_sketches(const ComputeDAG& dag) {
  std::vector<Sketch> out;
  const size_t n = dag.stages().size();
  expand(dag, std::vector<StagePlan>(n), n - 1, out);
  return out;
}

}  // namespace tessel::autotune
