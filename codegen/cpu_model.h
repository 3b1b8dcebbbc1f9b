// What CPU schedules need to know about a target, as data: its SIMD family, vector width and
// register file, FMA, cache sizes and cores. CpuModel::of derives it from a Target (triple, -mcpu
// and features, as LLVM sees them), so schedules size their tiles from it instead of from one
// ISA's constants (topi/strategy.h picks the schedules per target kind).
#pragma once

#include <algorithm>
#include <cstdint>

#include "codegen/target.h"
#include "ir/dtype.h"

namespace tessel {

// The SIMD instruction sets that schedules distinguish; kGeneric is any other CPU (x86 without
// AVX2, 32-bit Arm, RISC-V, ...), scheduled from its numbers alone.
enum class IsaFamily { kX86Avx2, kX86Avx512, kAArch64Neon, kGeneric };
// "x86 AVX2", "x86 AVX-512", "AArch64 NEON" or "generic".
const char* isa_family_name(IsaFamily isa);

struct CpuModel {
  IsaFamily isa = IsaFamily::kGeneric;
  int vector_bits = 128;      // the widest native SIMD register (Target::vector_bits)
  int vector_registers = 16;  // architectural SIMD registers (LLVM's TargetTransformInfo)
  bool has_fma = false;       // fused multiply-add on vectors
  int64_t l1d_bytes = 0;      // L1 data cache of one core
  int64_t l2_bytes = 0;       // L2 cache of one core
  int l1d_ways = 0;           // the L1 data cache's associativity (0: unknown)
  // Independent FMA chains (accumulator vectors) that keep every FMA unit busy: the FMA latency
  // times the units; a register tile with fewer accumulators waits on its own results.
  int fma_chains = 8;
  int cores = 0;  // the target's -num-cores, else the host's when it is the target;
                  // 0: unknown (the runtime's thread pool decides)

  // Elements of `dtype` in one vector register (bools take a byte); at least 1.
  int lanes(DataType dtype) const {
    return std::max(1, vector_bits / (8 * dtype.element_of().bytes()));
  }

  // Accumulator vectors that a register tile may use: the register file less room for the
  // operands (shared by the conv/dense templates and the auto-scheduler's register tiles).
  int accumulator_registers() const { return std::max(1, vector_registers - 4); }
  // The most rows of a row-major operand, `row_bytes` apart, that a tile may stream at once
  // without them evicting each other from L1: rows that lie a multiple of one way's size apart
  // share a set, which holds `l1d_ways` lines. A [M, 1024] float matrix has every row in the same
  // set of Zen 4's 8-way 32 KiB L1, so a 12-row tile of it misses on every line it reloads
  // (docs/benchmarks.md, the matmul table). Unbounded when the cache is unknown.
  int64_t l1d_alias_free_rows(int64_t row_bytes) const;

  // The model of `target`. Caches come from the host's sysfs when `target` is the host CPU, else
  // from a table of known -mcpu names (a generic default for others).
  static CpuModel of(const Target& target);
};

}  // namespace tessel
