// The CPU model that schedules read, derived from targets as LLVM sees them: the published register
// files of AVX2, AVX-512 and NEON, -mattr taking features away, caches and cores.
#include "codegen/cpu_model.h"

#include <gtest/gtest.h>

#include <limits>
#include <thread>

namespace tessel {
namespace {

CpuModel model_of(const std::string& target) { return CpuModel::of(Target::parse(target)); }

// Caches come from a table of CPUs, unless the CPU is this machine's (then sysfs answers).
bool is_host_cpu(const std::string& cpu) { return Target::host().cpu == cpu; }

TEST(CpuModelTest, HaswellIsAvx2) {
  CpuModel m = model_of("llvm -mtriple=x86_64-linux-gnu -mcpu=haswell");
  EXPECT_EQ(m.isa, IsaFamily::kX86Avx2);
  EXPECT_STREQ(isa_family_name(m.isa), "x86 AVX2");
  EXPECT_EQ(m.vector_bits, 256);
  EXPECT_EQ(m.vector_registers, 16);
  EXPECT_EQ(m.accumulator_registers(), 12);
  EXPECT_EQ(m.fma_chains, 10);  // FMA latency 5 x 2 units
  EXPECT_TRUE(m.has_fma);
  EXPECT_EQ(m.lanes(DataType::f32()), 8);
  EXPECT_EQ(m.lanes(DataType::f64()), 4);
  EXPECT_EQ(m.lanes(DataType::i8()), 32);
  EXPECT_EQ(m.lanes(DataType::boolean()), 32);  // a byte each
  if (!is_host_cpu("haswell")) {
    EXPECT_EQ(m.l1d_bytes, 32 * 1024);
    EXPECT_EQ(m.l2_bytes, 256 * 1024);
  }
}

TEST(CpuModelTest, SkylakeAvx512AndSapphireRapidsAreAvx512) {
  for (const char* cpu : {"skylake-avx512", "sapphirerapids"}) {
    SCOPED_TRACE(cpu);
    CpuModel m = model_of(std::string("llvm -mtriple=x86_64-linux-gnu -mcpu=") + cpu);
    EXPECT_EQ(m.isa, IsaFamily::kX86Avx512);
    EXPECT_EQ(m.vector_bits, 512);
    EXPECT_EQ(m.vector_registers, 32);
    EXPECT_EQ(m.accumulator_registers(), 28);
    EXPECT_EQ(m.fma_chains, 8);  // latency 4 x 2 units
    EXPECT_TRUE(m.has_fma);
    EXPECT_EQ(m.lanes(DataType::f32()), 16);
  }
  if (!is_host_cpu("sapphirerapids")) {
    CpuModel spr = model_of("llvm -mtriple=x86_64-linux-gnu -mcpu=sapphirerapids");
    EXPECT_EQ(spr.l1d_bytes, 48 * 1024);
    EXPECT_EQ(spr.l2_bytes, 2048 * 1024);
  }
}

TEST(CpuModelTest, AArch64IsNeon) {
  for (const char* cpu : {"generic", "neoverse-n1"}) {
    SCOPED_TRACE(cpu);
    CpuModel m = model_of(std::string("llvm -mtriple=aarch64-linux-gnu -mcpu=") + cpu);
    EXPECT_EQ(m.isa, IsaFamily::kAArch64Neon);
    EXPECT_STREQ(isa_family_name(m.isa), "AArch64 NEON");
    EXPECT_EQ(m.vector_bits, 128);
    EXPECT_EQ(m.vector_registers, 32);
    EXPECT_TRUE(m.has_fma);
    EXPECT_EQ(m.lanes(DataType::f32()), 4);
  }
  EXPECT_EQ(model_of("llvm -mtriple=aarch64-linux-gnu -mcpu=neoverse-n1").l1d_bytes, 64 * 1024);
  EXPECT_EQ(model_of("llvm -mtriple=aarch64-linux-gnu -mcpu=neoverse-v1").fma_chains, 16);
}

TEST(CpuModelTest, FeaturesTakenAwayChangeTheFamily) {
  CpuModel no_avx512 =
      model_of("llvm -mtriple=x86_64-linux-gnu -mcpu=skylake-avx512 -mattr=-avx512f");
  EXPECT_EQ(no_avx512.isa, IsaFamily::kX86Avx2);
  EXPECT_EQ(no_avx512.vector_bits, 256);
  EXPECT_EQ(no_avx512.vector_registers, 16);
  CpuModel sse = model_of("llvm -mtriple=x86_64-linux-gnu -mcpu=x86-64");
  EXPECT_EQ(sse.isa, IsaFamily::kGeneric);
  EXPECT_EQ(sse.vector_bits, 128);
  EXPECT_EQ(sse.vector_registers, 16);
  EXPECT_FALSE(sse.has_fma);
  EXPECT_EQ(sse.fma_chains, 8);  // a CPU the table does not know
  if (!is_host_cpu("x86-64")) {  // a CPU the table does not know: the default caches
    EXPECT_EQ(sse.l1d_bytes, 32 * 1024);
    EXPECT_EQ(sse.l2_bytes, 256 * 1024);
  }
}

TEST(CpuModelTest, L1WaysComeFromTheTableOrTheHost) {
  for (const auto& [cpu, ways] :
       {std::pair{"znver4", 8}, std::pair{"znver5", 12}, std::pair{"sapphirerapids", 12}}) {
    SCOPED_TRACE(cpu);
    if (is_host_cpu(cpu)) continue;  // the host's come from sysfs
    EXPECT_EQ(model_of(std::string("llvm -mtriple=x86_64-linux-gnu -mcpu=") + cpu).l1d_ways, ways);
  }
  EXPECT_EQ(model_of("llvm -mtriple=aarch64-linux-gnu -mcpu=neoverse-n1").l1d_ways, 4);
  EXPECT_GE(CpuModel::of(Target::host()).l1d_ways, 0);
}

// Rows that lie a multiple of one way's size apart share an L1 set: with 32 KiB in 8 ways (4 KiB
// each), rows of 1024 floats all do, rows of 512 floats take two sets, and rows 4224 bytes apart
// (1056 floats) 32 of them. Rows closer than a line apart cover every set.
TEST(CpuModelTest, RowsApartByAWaysSizeShareAnL1Set) {
  CpuModel zen4;
  zen4.l1d_bytes = 32 * 1024;
  zen4.l1d_ways = 8;
  EXPECT_EQ(zen4.l1d_alias_free_rows(4096), 8);
  EXPECT_EQ(zen4.l1d_alias_free_rows(8192), 8);
  EXPECT_EQ(zen4.l1d_alias_free_rows(2048), 16);
  EXPECT_EQ(zen4.l1d_alias_free_rows(3072), 32);
  EXPECT_EQ(zen4.l1d_alias_free_rows(4224), 256);
  EXPECT_EQ(zen4.l1d_alias_free_rows(4000), 512);  // 64 sets x 8 ways
  CpuModel zen5 = zen4;
  zen5.l1d_bytes = 48 * 1024;
  zen5.l1d_ways = 12;
  EXPECT_EQ(zen5.l1d_alias_free_rows(4096), 12);
  CpuModel unknown;
  EXPECT_EQ(unknown.l1d_alias_free_rows(4096), std::numeric_limits<int64_t>::max());
}

TEST(CpuModelTest, CoresComeFromTheTargetOrTheHost) {
  EXPECT_EQ(model_of("llvm -mtriple=x86_64-linux-gnu -mcpu=haswell -num-cores=6").cores, 6);
  EXPECT_EQ(model_of("llvm -mtriple=aarch64-linux-gnu").cores, 0);  // not this machine: unknown
  CpuModel host = CpuModel::of(Target::host());
  EXPECT_EQ(host.cores, static_cast<int>(std::thread::hardware_concurrency()));
  EXPECT_GT(host.l1d_bytes, 0);
  EXPECT_GE(host.l2_bytes, host.l1d_bytes);
  EXPECT_GE(host.vector_bits, 128);
}

}  // namespace
}  // namespace tessel
