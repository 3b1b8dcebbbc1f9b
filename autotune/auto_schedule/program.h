// Programs of the auto-scheduler: a sketch (sketch.h) and the numbers that complete it. A program
// is a few small vectors, cheap to copy and to mutate; apply() turns it into te primitives on a
// fresh schedule of the task, whose trace (te/schedule.h) is the replayable list of steps that
// records keep. Ansor keeps one list of steps with the numbers inside and mutates the list; here
// the numbers sit apart from the structure, so a mutation edits a number and never has to find
// and patch the steps it affects (docs/auto-scheduler.md).
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "autotune/auto_schedule/sketch.h"

namespace tessel::autotune {

// Loop levels of a multi-level tile (SSRSRS): four of each spatial axis, two of each reduce axis.
constexpr int kSpatialLevels = 4;
constexpr int kReduceLevels = 2;
// The auto_unroll_max_step values the annotation picks from (Ansor's CPU set).
inline constexpr int64_t kUnrollSteps[] = {0, 16, 64, 512};

struct StageParams {
  // Tiled stages (kTile, kTileFused, kCacheWrite): per spatial axis the extents of its levels 1
  // to 3, then per reduce axis that of its level 1 (each divides what the inner levels leave of
  // the axis, so no tile has a ragged edge). kRfactor: one entry, {factor}.
  std::vector<std::vector<int64_t>> tiles;
  int parallel = 0;        // outer spatial loops fused and run in parallel, at least 1 where the
                           // stage has spatial loops at root (0: none)
  int64_t unroll = 0;      // auto_unroll_max_step on the stage's outermost loop (0: none)
  bool vectorize = false;  // its innermost spatial loop (a tile's last, a root stage's last axis)
  // A stage at root or factored: 0, or computed at a loop of the task's output
  // (compute_location.h); such a stage runs neither parallel nor with an unroll pragma.
  int compute_at = 0;
  // The task's output, injective at root, where a producer with its row axis (the one before the
  // last) is computed per row: that axis split into blocks of `rows` rows (2, 4 or 8, two blocks
  // or more; 0: none). Stages located per row are then computed per block, and a vectorized
  // factored statistic reduces each vector of every row in turn (compute_location.h).
  int64_t rows = 0;
  bool operator==(const StageParams&) const = default;
};

struct Program {
  size_t sketch = 0;
  std::vector<StageParams> stages;  // one per stage of the DAG (unused by the template sketch)
  uint64_t config = 0;              // the template sketch: the index of its config in the space
  bool operator==(const Program&) const = default;
  // The numbers, one stage per clause: "C: tiles [2,4,8] [1,1,16] [64]; parallel 1; unroll 64;
  // vectorize; rows 2"; a template sketch's program its config index.
  std::string str(const ComputeDAG& dag) const;
};

// The program's schedule: a fresh one of `dag` with the sketch's structure and the program's
// numbers. Throws te::ScheduleError (a bug of a rule, never expected) or tessel::Error when the
// program does not fit the sketch.
te::Schedule apply(const ComputeDAG& dag, const Sketch& sketch, const Program& program);

// A random completion of sketch `index` (Ansor's random annotation): tile extents drawn from the
// factorizations of each axis, the outer spatial loops parallel, inner loops vectorized, an unroll
// step picked, a compute location drawn for each stage that may take one, the output's rows in a
// block where a stage is located per row (none half the time); of the template sketch, a config
// (sample_template_config).
Program sample_program(const ComputeDAG& dag, const std::vector<Sketch>& sketches, size_t index,
                       std::mt19937_64& rng);

// What mutate() changed (Ansor's mutation kinds).
enum class Mutation { kTileSize, kParallel, kUnroll, kVectorize, kComputeAt };
const char* mutation_name(Mutation m);

// A copy of `p` with one number changed: a tile size moved between two levels of one axis (the
// axis' extent stays whole) or the output's rows in a block changed (a kTileSize mutation), the
// parallel depth, unroll step or compute location of one stage
// redrawn, or one stage's vectorization flipped; of the template sketch, one knob redrawn (a
// kTileSize mutation, whatever was drawn). The kind is drawn by `weights` (tile size,
// parallel, unroll, vectorize, compute location); `applied` (when not null) gets it. Returns `p`
// unchanged when it has nothing of the drawn kind to change.
Program mutate(const ComputeDAG& dag, const std::vector<Sketch>& sketches, const Program& p,
               const std::vector<double>& weights, std::mt19937_64& rng,
               Mutation* applied = nullptr);

}  // namespace tessel::autotune
