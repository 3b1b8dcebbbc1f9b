// Strategies per target (TVM's op strategy, as plain tables): for each target kind and op family
// (graph::OpFamily, from the anchor op's OpDef), the schedule of a fused group, its tuning template
// and its fallback config. Schedules read the target's CpuModel (vector lanes, register budget,
// caches) rather than one ISA's constants, so CPUs that differ only in those numbers share a
// table; adding a target's schedules is one table (docs/topi.md).
#pragma once

#include <array>
#include <optional>
#include <vector>

#include "codegen/cpu_model.h"
#include "ir/op_table.h"
#include "te/schedule.h"
#include "topi/config_space.h"

namespace tessel::topi {

// What a schedule needs to know about a group's anchor op beyond its te tensors; decoded from the
// graph node by passes/lower_to_te.
struct AnchorOp {
  graph::OpFamily family = graph::OpFamily::kOpaque;
  int64_t groups = 1;          // kConv: the output channels fall into this many groups
  bool matrix_vector = false;  // kDense: an operand is a vector, so the output has no row axis
  // kDense: the right operand is one matrix for every output row (no batch dims of its own), so
  // the leading output axes are all rows of one GEMM and the tile takes its rows from the longest.
  bool shared_rhs = false;
  int64_t column_stride = 1;  // Conv: the window's stride along the output's last axis
};

// Schedules every stage of `s`, a fused group's computes (not yet scheduled) whose outputs are
// `outputs`. `config` is a point of the strategy's space (its fallback when null); strategies
// without a space ignore it.
using ScheduleFn = void (*)(te::Schedule& s, const std::vector<te::Tensor>& outputs,
                            const AnchorOp& anchor, const CpuModel& cpu,
                            const ConfigEntity* config);
// The knobs of the template for this group; none when the group does not have the shape the
// template expects (its schedule then applies the default policy).
using SpaceFn = std::optional<ConfigSpace> (*)(const te::Schedule& s, const AnchorOp& anchor,
                                               const CpuModel& cpu);
// Sets the fallback of `space` (a SpaceFn's result for the same group): what an untuned compile
// uses.
using FallbackFn = void (*)(ConfigSpace& space, const te::Schedule& s, const AnchorOp& anchor,
                            const CpuModel& cpu);

struct Strategy {
  ScheduleFn schedule = nullptr;
  SpaceFn space = nullptr;        // nullptr: the schedule has no knobs
  FallbackFn fallback = nullptr;  // set exactly when `space` is
};

// One row per op family, in graph::OpFamily order (checked at compile time).
struct FamilyStrategy {
  graph::OpFamily family;
  Strategy strategy;
};
using StrategyTable = std::array<FamilyStrategy, graph::kNumOpFamilies>;

// The kinds of target that strategies are chosen for. The CPU kinds follow the CpuModel's ISA;
// CUDA and OpenCL are declared for the GPU work and have no schedules yet.
enum class TargetKind { kX86Avx2 = 0, kX86Avx512, kAArch64Neon, kGenericCpu, kCuda, kOpenCL };
// "x86 AVX2", "x86 AVX-512", "AArch64 NEON", "generic CPU", "CUDA" or "OpenCL".
const char* target_kind_name(TargetKind kind);
TargetKind target_kind(const CpuModel& cpu);

// The strategy of `family` on `kind`. Throws tessel::Error naming both for a kind whose schedules
// are not implemented yet.
const Strategy& strategy_for(TargetKind kind, graph::OpFamily family);

}  // namespace tessel::topi
