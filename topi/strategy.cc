#include "topi/strategy.h"

#include <fmt/format.h>

#include "ir/error.h"
#include "topi/schedule_nn.h"

namespace tessel::topi {

namespace {

using graph::OpFamily;

constexpr Strategy kDefault{schedule_default};
constexpr Strategy kTiled{schedule_tiled, tiled_space, set_tiled_fallback};
constexpr Strategy kStatistics{schedule_statistics};
constexpr Strategy kWinograd{schedule_winograd};

// The CPU schedules (topi/schedule_nn.h). x86 AVX2 and AVX-512, AArch64 NEON and other CPUs share
// them: what differs between those targets (vector lanes, register budget) is CpuModel data that
// the schedules read.
constexpr StrategyTable kCpuStrategies = {{
    {OpFamily::kInjective, kDefault},
    {OpFamily::kReduction, kDefault},
    {OpFamily::kConv, kTiled},
    {OpFamily::kConvNCHWc, kTiled},
    {OpFamily::kConvWinograd, kWinograd},
    {OpFamily::kDense, kTiled},
    {OpFamily::kPool, kTiled},
    {OpFamily::kSoftmaxLike, kStatistics},
    {OpFamily::kOpaque, kDefault},
}};

// Each target kind's table, in TargetKind order; nullptr: no schedules yet.
struct TargetStrategies {
  TargetKind kind;
  const char* name;
  const StrategyTable* table;
};
constexpr TargetStrategies kTargets[] = {
    {TargetKind::kX86Avx2, "x86 AVX2", &kCpuStrategies},
    {TargetKind::kX86Avx512, "x86 AVX-512", &kCpuStrategies},
    {TargetKind::kAArch64Neon, "AArch64 NEON", &kCpuStrategies},
    {TargetKind::kGenericCpu, "generic CPU", &kCpuStrategies},
    {TargetKind::kCuda, "CUDA", nullptr},
    {TargetKind::kOpenCL, "OpenCL", nullptr},
};

// Rows in enum order, so that lookups index them: a table without a row for some family does not
// compile. (That each row has a schedule, and a fallback exactly when it has a space, is
// tests/topi/strategy_test.cc's: function addresses are not constants under the sanitizers.)
constexpr bool in_family_order(const StrategyTable& table) {
  for (int f = 0; f < graph::kNumOpFamilies; ++f) {
    if (static_cast<int>(table[f].family) != f) return false;
  }
  return true;
}
static_assert(in_family_order(kCpuStrategies));

constexpr bool in_kind_order() {
  for (size_t k = 0; k < std::size(kTargets); ++k) {
    if (static_cast<size_t>(kTargets[k].kind) != k) return false;
  }
  return std::size(kTargets) == static_cast<size_t>(TargetKind::kOpenCL) + 1;
}
static_assert(in_kind_order());

}  // namespace

const char* target_kind_name(TargetKind kind) { return kTargets[static_cast<int>(kind)].name; }

TargetKind target_kind(const CpuModel& cpu) {
  switch (cpu.isa) {
    case IsaFamily::kX86Avx2:
      return TargetKind::kX86Avx2;
    case IsaFamily::kX86Avx512:
      return TargetKind::kX86Avx512;
    case IsaFamily::kAArch64Neon:
      return TargetKind::kAArch64Neon;
    case IsaFamily::kGeneric:
      return TargetKind::kGenericCpu;
  }
  TESSEL_UNREACHABLE("ISA family");
}

const Strategy& strategy_for(TargetKind kind, graph::OpFamily family) {
  const TargetStrategies& target = kTargets[static_cast<int>(kind)];
  if (!target.table) {
    throw Error(fmt::format("{} schedules are not implemented yet (op family {})", target.name,
                            graph::op_family_name(family)));
  }
  return (*target.table)[static_cast<int>(family)].strategy;
}

}  // namespace tessel::topi
