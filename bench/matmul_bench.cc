// fp32 matmul, n^3 for n in {256, 512, 1024, 2048} and 64 x 1024 x 1024 (the fewest rows the CPU
// issue holds the kernel to 85% of the peak at), at 1 and 2 threads: Tessel's default te
// kernel, Tessel's hand-scheduled kernel (topi::schedule_matmul_cpu), Eigen and OpenBLAS.
// Counters: GFLOPS; peak_GFLOPS, the FMA peak for the target's vector width measured just before
// each run (times its threads), l1_kernel_GFLOPS, a micro-kernel with its operands in L1 measured
// with it (bench/peak_flops.h), and paired_l1_share, the median of each call's rate over that
// micro-kernel's right after it (run_and_report); the start-up peak is in the context.
// `--target="llvm -mcpu=haswell"` compiles Tessel's kernels for another ISA (the default is the
// host CPU); the register tile comes from that target's CpuModel, or from `--tile=MRxNR`.
// `--prepacked` gives the scheduled kernel B in its panels beforehand (topi::matmul_prepacked, as
// a model's packed weights) instead of packing it in every call.
// bench/run_matmul_bench.sh turns the JSON output into the table in docs/benchmarks.md.
#include <benchmark/benchmark.h>
#include <cblas.h>

#include <Eigen/Core>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "codegen/build.h"
#include "peak_flops.h"
#include "runtime/ndarray.h"
#include "runtime/thread_pool.h"
#include "te/lower.h"
#include "topi/matmul.h"

using namespace tessel;

namespace {

bench::PeakFlops g_peak;
Target g_target = Target::parse("llvm -mcpu=native");
std::optional<topi::MatmulCpuConfig> g_tile;  // --tile=MRxNR; default: the target's
CpuModel g_cpu;                               // the target's (main)
bool g_prepacked = false;                     // --prepacked
constexpr int kSizes[] = {256, 512, 1024, 2048};
// Shapes [m, k] x [k, n] with k = n besides the squares: few rows.
constexpr std::pair<int, int> kFewRows[] = {{64, 1024}};

// The scheduled kernel's config at n^3: the target's, with --tile's tile.
topi::MatmulCpuConfig config_for(int64_t n) {
  topi::MatmulCpuConfig cfg = topi::matmul_cpu_config(g_cpu, DataType::f32(), n);
  if (g_tile) {  // another register tile; the rest (B column blocks, k unroll) as the target's
    cfg.mr = g_tile->mr;
    cfg.nr = g_tile->nr;
  }
  return cfg;
}

// "12x32 (n=256, 512), 8x32 (n=1024, 2048)": the register tile of each size.
std::string register_tiles() {
  std::vector<std::pair<std::string, std::vector<int>>> tiles;
  for (int n : kSizes) {
    topi::MatmulCpuConfig cfg = config_for(n);
    std::string tile = std::to_string(cfg.mr) + "x" + std::to_string(cfg.nr);
    if (tiles.empty() || tiles.back().first != tile) tiles.push_back({tile, {}});
    tiles.back().second.push_back(n);
  }
  if (tiles.size() == 1) return tiles[0].first;
  std::string text;
  for (const auto& [tile, ns] : tiles) {
    text += (text.empty() ? "" : ", ") + tile + " (n=";
    for (size_t i = 0; i < ns.size(); ++i) text += (i ? ", " : "") + std::to_string(ns[i]);
    text += ")";
  }
  return text;
}

void fill_random(float* p, int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (int64_t i = 0; i < n; ++i) p[i] = dist(rng);
}

// What a core can do now, per core: the FMA peak, and a register-tiled micro-kernel with its
// operands in L1 (about 60 ms both). The start-up peak moved by up to 1.6x with the VM's phases
// (101-176 GFLOP/s on an Intel VM in one day), and in its busy phases the L1 kernel fell to 70-82%
// of a steady FMA peak; each run carries both.
struct Peak {
  double fma = 0, l1_kernel = 0;
};
Peak peak_now() {
  return {bench::measure_peak_flops(g_peak.vector_bits, 5'000'000).gflops_per_core,
          bench::measure_l1_kernel_flops(g_peak.vector_bits, 20'000)};
}

// The pause after each call in which the L1 micro-kernel measures the core (run_and_report). It
// stays well inside the 200 us that an idle pool worker spins before it sleeps: 250 calls of the
// micro-kernel had taken 0.22 ms with AVX-512 on Zen 4, so every call at two threads began with a
// futex wake-up of the worker (256^3 prepacked at 78% of the paired L1 rate, 95% with the worker
// kept spinning), a cost that kernels launched back to back in a model do not pay.
constexpr double kPairedSeconds = 1e-4;

// Runs the benchmark loop over `call` (m x n x n on `threads` threads) and reports it. After each
// call, with the timer paused, the L1 micro-kernel runs for about kPairedSeconds in this thread:
// the median of each call's GFLOP/s over `threads` times the micro-kernel's just after it
// (counter paired_l1_share) is the call's share of what the cores could do at that moment, which
// the VM's phases (seconds long) move less than either rate. Only this thread measures, so that
// no other thread competes with the engines' spinning workers. `peak`: peak_now() just before the
// loop.
template <class Call>
void run_and_report(benchmark::State& state, int64_t m, int64_t n, int threads, Peak peak,
                    Call call) {
  double flops = 2.0 * m * n * n;
  double call_flops = bench::l1_kernel_call_flops(g_peak.vector_bits);
  long paired_calls =
      call_flops > 0 ? std::max(1L, std::lround(kPairedSeconds * peak.l1_kernel * 1e9 / call_flops))
                     : 1;
  std::vector<double> shares;
  for (auto _ : state) {
    auto t0 = std::chrono::steady_clock::now();
    call();
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    state.PauseTiming();
    double l1_kernel = bench::measure_l1_kernel_flops(g_peak.vector_bits, paired_calls, 1);
    shares.push_back(flops / seconds * 1e-9 / (l1_kernel * threads));
    state.ResumeTiming();
  }
  std::nth_element(shares.begin(), shares.begin() + shares.size() / 2, shares.end());
  state.counters["GFLOPS"] =
      benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["threads"] = threads;
  state.counters["peak_GFLOPS"] = peak.fma * threads;
  state.counters["l1_kernel_GFLOPS"] = peak.l1_kernel * threads;
  state.counters["paired_l1_share"] = shares.empty() ? 0 : shares[shares.size() / 2];
}

// Compiled kernels are cached per (schedule kind, m, n) so compile time stays out of the loop.
runtime::Function tessel_kernel(bool scheduled, int64_t m, int64_t n) {
  static std::map<std::tuple<bool, int64_t, int64_t>, std::pair<runtime::Module, runtime::Function>>
      cache;
  auto key = std::make_tuple(scheduled, m, n);
  if (auto it = cache.find(key); it != cache.end()) return it->second.second;
  int M = static_cast<int>(m), N = static_cast<int>(n);
  PrimFunc f;
  if (scheduled) {
    topi::MatmulCpuConfig cfg = config_for(n);
    topi::Matmul mm = g_prepacked ? topi::matmul_prepacked(M, N, N, cfg.nr)
                                  : topi::matmul_packed(M, N, N, cfg.nr);
    f = te::lower(topi::schedule_matmul_cpu(mm, cfg),
                  {mm.A, g_prepacked ? mm.packed_B : mm.B, mm.C}, "mm");
  } else {
    topi::Matmul mm = topi::matmul(M, N, N);
    f = te::lower(te::create_schedule({mm.C}), {mm.A, mm.B, mm.C}, "mm");
  }
  runtime::Module module = build(f, g_target);
  runtime::Function fn = module.get_function("mm");
  cache[key] = {module, fn};
  return fn;
}

// B as --prepacked passes it: [ceil(n / nr), n, nr] panels (random values: only the time counts).
runtime::NDArray b_panels(int64_t n) {
  int64_t nr = config_for(n).nr;
  return runtime::NDArray::empty({(n + nr - 1) / nr, n, nr}, DataType::f32());
}

void BM_Tessel(benchmark::State& state, bool scheduled) {
  int64_t m = state.range(0), n = state.range(1);
  int threads = static_cast<int>(state.range(2));
  runtime::set_num_threads(threads);
  auto a = runtime::NDArray::empty({m, n}, DataType::f32()),
       b = scheduled && g_prepacked ? b_panels(n)
                                    : runtime::NDArray::empty({n, n}, DataType::f32()),
       c = runtime::NDArray::empty({m, n}, DataType::f32());
  fill_random(a.data<float>(), m * n, 1);
  fill_random(b.data<float>(), b.numel(), 2);
  runtime::Function fn = tessel_kernel(scheduled, m, n);
  fn(a, b, c);
  Peak peak = peak_now();
  run_and_report(state, m, n, scheduled ? threads : 1, peak, [&] { fn(a, b, c); });
}

void BM_Eigen(benchmark::State& state) {
  int64_t m = state.range(0), n = state.range(1);
  int threads = static_cast<int>(state.range(2));
  Eigen::setNbThreads(threads);
  using M = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  M a(m, n), b(n, n), c(m, n);
  fill_random(a.data(), m * n, 1);
  fill_random(b.data(), n * n, 2);
  Peak peak = peak_now();
  run_and_report(state, m, n, Eigen::nbThreads(), peak, [&] {
    c.noalias() = a * b;
    benchmark::DoNotOptimize(c.data());
  });
}

void BM_OpenBLAS(benchmark::State& state) {
  int64_t m = state.range(0), n = state.range(1);
  int threads = static_cast<int>(state.range(2));
  openblas_set_num_threads(threads);
  std::vector<float> a(m * n), b(n * n), c(m * n);
  fill_random(a.data(), m * n, 1);
  fill_random(b.data(), n * n, 2);
  Peak peak = peak_now();
  run_and_report(state, m, n, threads, peak, [&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, n, 1.0f, a.data(), n, b.data(), n,
                0.0f, c.data(), n);
    benchmark::DoNotOptimize(c.data());
  });
}

void sizes(benchmark::internal::Benchmark* b) {
  for (int threads : {1, 2}) {
    for (int n : kSizes) b->Args({n, n, threads});
    for (auto [m, n] : kFewRows) b->Args({m, n, threads});
  }
  b->ArgNames({"m", "n", "threads"})->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(0.5);
}

// The default kernel is one thread whatever the pool size, so it runs once per size.
void default_sizes(benchmark::internal::Benchmark* b) {
  for (int n : kSizes) b->Args({n, n, 1});
  for (auto [m, n] : kFewRows) b->Args({m, n, 1});
  b->ArgNames({"m", "n", "threads"})->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(1);
}

// "MRxNR" as a register tile; exits naming the flag when it is not one.
topi::MatmulCpuConfig parse_tile(const std::string& text) {
  topi::MatmulCpuConfig cfg;
  if (std::sscanf(text.c_str(), "%dx%d", &cfg.mr, &cfg.nr) != 2 || cfg.mr <= 0 || cfg.nr <= 0) {
    std::fprintf(stderr, "matmul_bench: --tile wants MRxNR (e.g. 8x32), got '%s'\n", text.c_str());
    std::exit(2);
  }
  return cfg;
}

// Takes --target=T, --tile=MRxNR (or "--flag value") and --prepacked out of argv for Google
// Benchmark.
void take_own_flags(int& argc, char** argv) {
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--target" && i + 1 < argc) {
      g_target = Target::parse(argv[++i]);
    } else if (arg.rfind("--target=", 0) == 0) {
      g_target = Target::parse(arg.substr(9));
    } else if (arg == "--tile" && i + 1 < argc) {
      g_tile = parse_tile(argv[++i]);
    } else if (arg.rfind("--tile=", 0) == 0) {
      g_tile = parse_tile(arg.substr(7));
    } else if (arg == "--prepacked") {
      g_prepacked = true;
    } else {
      argv[kept++] = argv[i];
    }
  }
  argc = kept;
}

}  // namespace

BENCHMARK_CAPTURE(BM_Tessel, default, false)->Apply(default_sizes);
BENCHMARK_CAPTURE(BM_Tessel, scheduled, true)->Apply(sizes);
BENCHMARK(BM_Eigen)->Apply(sizes);
BENCHMARK(BM_OpenBLAS)->Apply(sizes);

int main(int argc, char** argv) {
  take_own_flags(argc, argv);
  g_cpu = CpuModel::of(g_target);
  // The kernels run here: another -mcpu's model has no core count unless -num-cores gives one.
  if (g_cpu.cores == 0) g_cpu.cores = static_cast<int>(std::thread::hardware_concurrency());
  g_peak = bench::measure_peak_flops(g_cpu.vector_bits);
  benchmark::AddCustomContext("target", "llvm -mcpu=" + g_target.cpu);
  benchmark::AddCustomContext("isa", isa_family_name(g_cpu.isa));
  benchmark::AddCustomContext("register_tile", register_tiles());
  benchmark::AddCustomContext(
      "b_operand", g_prepacked ? "in panels beforehand (--prepacked)" : "packed in every call");
  benchmark::AddCustomContext("fma_peak_gflops_per_core", std::to_string(g_peak.gflops_per_core));
  benchmark::AddCustomContext("vector_bits", std::to_string(g_peak.vector_bits));
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
