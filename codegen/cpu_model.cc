#include "codegen/cpu_model.h"

#include <fmt/format.h>
#include <llvm/Analysis/TargetTransformInfo.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/TargetParser/Triple.h>

#include <charconv>
#include <fstream>
#include <limits>
#include <numeric>
#include <optional>
#include <string_view>
#include <thread>

#include "codegen/llvm/target_machine.h"
#include "ir/error.h"

namespace tessel {
namespace {

constexpr int64_t kKiB = 1024;

struct CacheSizes {
  int64_t l1d = 0, l2 = 0;  // bytes
  int l1d_ways = 0;
};

// Per-core L1d (size and ways) and L2 of the -mcpu names whose numbers are published (a hybrid
// CPU: its big cores), and their FMA latency x units on full vectors: 5 x 2 on Haswell, Broadwell
// and Zen 2, 5 x 1 on Zen 1 (two 128-bit units), 4 x 2 on Skylake and later and on Zen 3-5 and
// Neoverse N1/N2, 4 x 4 on Neoverse V1/V2 (four 128-bit units).
struct KnownCpu {
  std::string_view cpu;
  CacheSizes caches;
  int fma_chains = 8;
};
constexpr KnownCpu kKnownCpus[] = {
    {"haswell", {32 * kKiB, 256 * kKiB, 8}, 10},
    {"broadwell", {32 * kKiB, 256 * kKiB, 8}, 10},
    {"skylake", {32 * kKiB, 256 * kKiB, 8}},
    {"skylake-avx512", {32 * kKiB, 1024 * kKiB, 8}},
    {"cascadelake", {32 * kKiB, 1024 * kKiB, 8}},
    {"cooperlake", {32 * kKiB, 1024 * kKiB, 8}},
    {"icelake-client", {48 * kKiB, 512 * kKiB, 12}},
    {"icelake-server", {48 * kKiB, 1280 * kKiB, 12}},
    {"tigerlake", {48 * kKiB, 1280 * kKiB, 12}},
    {"alderlake", {48 * kKiB, 1280 * kKiB, 12}},
    {"sapphirerapids", {48 * kKiB, 2048 * kKiB, 12}},
    {"emeraldrapids", {48 * kKiB, 2048 * kKiB, 12}},
    {"graniterapids", {48 * kKiB, 2048 * kKiB, 12}},
    {"znver1", {32 * kKiB, 512 * kKiB, 8}, 5},
    {"znver2", {32 * kKiB, 512 * kKiB, 8}, 10},
    {"znver3", {32 * kKiB, 512 * kKiB, 8}},
    {"znver4", {32 * kKiB, 1024 * kKiB, 8}},
    {"znver5", {48 * kKiB, 1024 * kKiB, 12}},
    {"neoverse-n1", {64 * kKiB, 1024 * kKiB, 4}},
    {"neoverse-n2", {64 * kKiB, 1024 * kKiB, 4}},
    {"neoverse-v1", {64 * kKiB, 1024 * kKiB, 4}, 16},
    {"neoverse-v2", {64 * kKiB, 1024 * kKiB, 4}, 16},
};
// Any other CPU: the caches LLVM's x86 cost model assumes (Haswell's), which most cores since have
// at least, and 8 FMA chains.
constexpr KnownCpu kOtherCpu = {"", {32 * kKiB, 256 * kKiB, 8}};

const KnownCpu& known_cpu(const Target& target) {
  for (const KnownCpu& known : kKnownCpus) {
    if (known.cpu == target.cpu) return known;
  }
  return kOtherCpu;
}

// A sysfs cache size ("48K", "2048K", "1M") in bytes; 0 when it is not one.
int64_t parse_cache_size(const std::string& text) {
  int64_t n = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || n <= 0) return 0;
  std::string_view unit(end, text.data() + text.size() - end);
  if (unit.empty()) return n;
  if (unit == "K") return n * kKiB;
  if (unit == "M") return n * kKiB * kKiB;
  return 0;
}

// The first core's L1d (size and ways) and L2 as Linux reports them; none when sysfs does not say.
std::optional<CacheSizes> read_host_caches() {
  CacheSizes c;
  for (int index = 0;; ++index) {
    std::string dir = fmt::format("/sys/devices/system/cpu/cpu0/cache/index{}/", index);
    std::ifstream level_file(dir + "level"), type_file(dir + "type"), size_file(dir + "size");
    int level = 0;
    std::string type, size;
    if (!(level_file >> level) || !(type_file >> type) || !(size_file >> size)) break;
    if (level == 1 && type == "Data") {
      c.l1d = parse_cache_size(size);
      std::ifstream ways_file(dir + "ways_of_associativity");
      if (!(ways_file >> c.l1d_ways) || c.l1d_ways < 0) c.l1d_ways = 0;
    }
    if (level == 2 && type != "Instruction") c.l2 = parse_cache_size(size);
  }
  if (c.l1d == 0 || c.l2 == 0) return std::nullopt;
  return c;
}

CacheSizes caches_of(const Target& target) {
  if (target.is_host_cpu()) {
    static const std::optional<CacheSizes> host = read_host_caches();
    if (host) return *host;
  }
  return known_cpu(target).caches;
}

// The SIMD registers LLVM allocates for the target; its scalar registers when it has no SIMD unit
// (vector code is then split into scalars).
int vector_registers_of(const Target& target) {
  std::unique_ptr<llvm::TargetMachine> tm = codegen::create_target_machine(target);
  llvm::LLVMContext context;
  llvm::Module module("cpu_model", context);
  module.setTargetTriple(target.triple);
  module.setDataLayout(tm->createDataLayout());
  // Target cost queries are per function: one without attributes gets the machine's CPU.
  llvm::Function* probe =
      llvm::Function::Create(llvm::FunctionType::get(llvm::Type::getVoidTy(context), false),
                             llvm::Function::ExternalLinkage, "probe", module);
  llvm::TargetTransformInfo tti = tm->getTargetTransformInfo(*probe);
  unsigned vector = tti.getNumberOfRegisters(tti.getRegisterClassForType(true));
  return static_cast<int>(vector ? vector
                                 : tti.getNumberOfRegisters(tti.getRegisterClassForType(false)));
}

}  // namespace

const char* isa_family_name(IsaFamily isa) {
  switch (isa) {
    case IsaFamily::kX86Avx2:
      return "x86 AVX2";
    case IsaFamily::kX86Avx512:
      return "x86 AVX-512";
    case IsaFamily::kAArch64Neon:
      return "AArch64 NEON";
    case IsaFamily::kGeneric:
      return "generic";
  }
  TESSEL_UNREACHABLE("ISA family");
}

int64_t CpuModel::l1d_alias_free_rows(int64_t row_bytes) const {
  constexpr int64_t kLineBytes = 64;  // x86's and the Neoverse cores'
  if (l1d_ways <= 0 || l1d_bytes < l1d_ways || row_bytes <= 0)
    return std::numeric_limits<int64_t>::max();
  int64_t way = l1d_bytes / l1d_ways;
  // Rows fall on way / gcd(row_bytes, way) offsets within a way, at most one set per line.
  int64_t step = std::gcd(row_bytes % way, way);
  return way / std::max(step, kLineBytes) * l1d_ways;
}

CpuModel CpuModel::of(const Target& target) {
  CpuModel m;
  // Feature names are per architecture (LLVM aborts on a name its target does not define).
  llvm::Triple triple(target.triple);
  if (triple.isX86()) {
    m.isa = target.has_feature("avx512f") ? IsaFamily::kX86Avx512
            : target.has_feature("avx2")  ? IsaFamily::kX86Avx2
                                          : IsaFamily::kGeneric;
    m.has_fma = target.has_feature("fma");
  } else if (triple.isAArch64() && target.has_feature("neon")) {
    m.isa = IsaFamily::kAArch64Neon;
    m.has_fma = true;  // FMLA is part of AArch64's Advanced SIMD
  }
  m.vector_bits = target.vector_bits();
  m.vector_registers = vector_registers_of(target);
  CacheSizes caches = caches_of(target);
  m.l1d_bytes = caches.l1d;
  m.l2_bytes = caches.l2;
  m.l1d_ways = caches.l1d_ways;
  m.fma_chains = known_cpu(target).fma_chains;
  m.cores = target.num_cores > 0   ? target.num_cores
            : target.is_host_cpu() ? static_cast<int>(std::thread::hardware_concurrency())
                                   : 0;
  return m;
}

}  // namespace tessel
