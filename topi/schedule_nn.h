// The CPU schedules of fused groups that topi/strategy.cc's tables pick, by the family of the
// group's anchor op (its master node). Each reads the target's CpuModel: vector lanes and the
// register file size the tiles.
// Default (injective, reductions, opaque ops; topi/schedule_default.cc): intermediate injective
// stages inlined into their readers; injective outputs fused, vectorized and parallel; each
// reduction stage parallel and, where the reads walk an axis contiguously, vectorized along it.
// Tiled (convolutions, pools, matmuls): the one reduction is computed in a register tile (output
// channels or rows unrolled x a vector of output columns) at the tile loop of the group's output,
// so the elementwise epilogue (bias, activation, residual add) runs on the tile while it is hot;
// its padded/transposed inputs are computed at root (a grouped conv's or a pool's per row of
// tiles, inside the parallel loop); the outer loops run in parallel. The register
// tile is a template with knobs (AutoTVM style): rows, columns and output-height blocking, the
// order of the reduction loops, unrolling the innermost one, and parallelism. The fallback config
// is the hand-written policy, which is what an untuned compile uses.
// Statistics (softmax and normalizations, topi/schedule_statistics.cc): over trailing axes, one
// parallel loop over rows computing each row's statistics (vector partial results through
// rfactor) and output; otherwise statistics at root and the output injective.
#pragma once

#include <optional>
#include <vector>

#include "topi/strategy.h"

namespace tessel::topi {

// ScheduleFns (topi/strategy.h). schedule_tiled applies the default policy to a group that does
// not have the tiled template's shape (one reduction of static shape).
void schedule_default(te::Schedule& s, const std::vector<te::Tensor>& outputs,
                      const AnchorOp& anchor, const CpuModel& cpu, const ConfigEntity* config);
void schedule_tiled(te::Schedule& s, const std::vector<te::Tensor>& outputs, const AnchorOp& anchor,
                    const CpuModel& cpu, const ConfigEntity* config);
// ConvWinograd (topi/schedule_winograd.cc): transforms and GEMMs at root, the output transform
// and epilogue per output tile; no knobs.
void schedule_winograd(te::Schedule& s, const std::vector<te::Tensor>& outputs,
                       const AnchorOp& anchor, const CpuModel& cpu, const ConfigEntity* config);
void schedule_statistics(te::Schedule& s, const std::vector<te::Tensor>& outputs,
                         const AnchorOp& anchor, const CpuModel& cpu, const ConfigEntity* config);

// The tiled template's SpaceFn and FallbackFn.
std::optional<ConfigSpace> tiled_space(const te::Schedule& s, const AnchorOp& anchor,
                                       const CpuModel& cpu);
void set_tiled_fallback(ConfigSpace& space, const te::Schedule& s, const AnchorOp& anchor,
                        const CpuModel& cpu);

}  // namespace tessel::topi
