// Sketches (Ansor's sketch generation for CPU): the structures of a task's programs, derived by
// rules from its compute DAG, with every number (tile sizes, parallel depth, unroll steps) left
// open for the annotation (program.h). The rules, visiting the stages from the outputs back:
// - always inline: a compute without reduction that is not an output, unless it calls an
//   intrinsic (exp, ...) and several stages read it (Ansor never inlines those; inlined into one
//   reader, as a sigmoid into a swish, it costs nothing extra), or it is a transform that a
//   reader reads more than once per point (StageFacts::reread_transform: Winograd's tiles);
// - a padded input of a reduction (StageFacts::guarded_window) is inlined or left at root (two
//   sketches; Ansor always inlines it);
// - multi-level tiling: a reduction with data reuse is tiled SSRSRS (four levels of each
//   spatial axis, two of each reduce axis);
//   - with fusion: when an elementwise consumer reads the tile point for point (through inlined
//     stages), or an unpacking one through a blocked layout (ConvNCHWc's epilogue), the consumer
//     is tiled to match and the tile is computed inside it, at its first or at its second level
//     (two sketches);
//   - else with a cache write: the tile is computed into a local buffer that the stage copies
//     out, fused the same way (two sketches), besides the plain tiling (a third);
// - rfactor: a reduction without data reuse along a contiguous axis may reduce into vector
//   partials (two sketches: with and without);
// - every other stage stays at root.
// A group whose op has a schedule template has one more sketch, the template (template_sketch.h).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "autotune/auto_schedule/compute_dag.h"
#include "autotune/auto_schedule/template_sketch.h"

namespace tessel::autotune {

enum class SketchRule {
  kRoot,        // at root; the annotation fuses, parallelizes and vectorizes its loops
  kInline,      // inlined into its consumers
  kTile,        // multi-level tiled (SSRSRS) at root
  kTileFused,   // multi-level tiled, computed inside its elementwise consumer (`into`)
  kCacheWrite,  // its body multi-level tiled into a local stage computed inside it
  kRfactor,     // its innermost reduce axis factored into vector partials
  kConsumer,    // the consumer a tile is computed inside: tiled to match it, at root
};
// "root", "inline", "tile", "tile+fuse", "cache_write", "rfactor" or "consumer".
const char* sketch_rule_name(SketchRule r);

struct StagePlan {
  SketchRule rule = SketchRule::kRoot;
  size_t into = kNoStage;  // kTileFused: the consumer the tile is computed inside
  int level = 0;  // kTileFused, kCacheWrite: the consumer's tile level that holds it (1, 2)
  bool operator==(const StagePlan&) const = default;
};

struct Sketch {
  std::vector<StagePlan> plans;  // one per stage of the DAG (placeholders kRoot)
  // The template sketch: the group's schedule template, whose config a program picks (its plans
  // are unused, every stage kRoot).
  std::shared_ptr<const ScheduleTemplate> schedule_template;
  bool operator==(const Sketch&) const = default;
  // One line per compute stage: "  C: tile SSRSRS, cache write, at level 2 of C"; the template
  // sketch one line for its knobs.
  std::string str(const ComputeDAG& dag) const;
};

// Every sketch of `dag`, the first the most structured (fused tiles before plain ones); at least
// one.
std::vector<Sketch> generate_sketches(const ComputeDAG& dag);

}  // namespace tessel::autotune
