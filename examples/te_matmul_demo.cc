// The main demo: a 1024^3 fp32 matmul written in te, lowered and JIT-compiled twice: with the
// default schedule and with the register-tiled CPU schedule from topi. Prints the lowered loop
// IR of both, checks the results against each other, and reports GFLOP/s.
//   te_matmul_demo [size] [--threads N]
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <random>
#include <string>

#include "codegen/build.h"
#include "ir/error.h"
#include "ir/printer.h"
#include "runtime/ndarray.h"
#include "runtime/thread_pool.h"
#include "te/lower.h"
#include "topi/matmul.h"

using namespace tessel;

namespace {

runtime::NDArray random_matrix(int64_t rows, int64_t cols, uint32_t seed) {
  auto a = runtime::NDArray::empty({rows, cols}, DataType::f32());
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::generate(a.data<float>(), a.data<float>() + a.numel(), [&] { return dist(rng); });
  return a;
}

// Best of `repeat` timed calls, in seconds.
double time_best(const runtime::Function& f, const runtime::NDArray& a, const runtime::NDArray& b,
                 const runtime::NDArray& c, int repeat) {
  f(a, b, c);  // warm-up
  double best = 1e30;
  for (int r = 0; r < repeat; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    f(a, b, c);
    best = std::min(best,
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  int64_t n = 1024;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--threads" && i + 1 < argc) {
      runtime::set_num_threads(std::atoi(argv[++i]));
    } else if (arg.rfind("--", 0) != 0) {
      n = std::atoll(arg.c_str());
    } else {
      std::cerr << "usage: te_matmul_demo [size] [--threads N]\n";
      return 2;
    }
  }
  try {
    Target target = Target::parse("llvm -mcpu=native");
    int N = static_cast<int>(n);

    topi::Matmul plain = topi::matmul(N, N, N);
    te::Schedule plain_s = te::create_schedule({plain.C});
    PrimFunc plain_ir = te::lower(plain_s, {plain.A, plain.B, plain.C}, "matmul_default");

    // The register tile for this CPU's vector width, register file and L1 (12 x 32 with AVX-512,
    // 8 x 32 where L1 holds 8 of A's rows at this size).
    topi::MatmulCpuConfig tile = topi::matmul_cpu_config(CpuModel::of(target), DataType::f32(), n);
    topi::Matmul packed = topi::matmul_packed(N, N, N, tile.nr);
    te::Schedule tuned_s = topi::schedule_matmul_cpu(packed, tile);
    PrimFunc tuned_ir = te::lower(tuned_s, {packed.A, packed.B, packed.C}, "matmul_scheduled");

    std::cout << "== Default schedule, lowered ==\n" << plain_ir << "\n";
    std::cout << "== Hand schedule (trace) ==\n" << tuned_s.trace().str() << "\n";
    std::cout << "== Hand schedule, lowered ==\n" << tuned_ir << "\n";

    runtime::Module m_plain = build(plain_ir, target);
    runtime::Module m_tuned = build(tuned_ir, target);

    auto a = random_matrix(n, n, 1), b = random_matrix(n, n, 2);
    auto c_plain = runtime::NDArray::empty({n, n}, DataType::f32());
    auto c_tuned = runtime::NDArray::empty({n, n}, DataType::f32());
    double flops = 2.0 * n * n * n;
    double t_plain = time_best(m_plain.get_function("matmul_default"), a, b, c_plain, 2);
    double t_tuned = time_best(m_tuned.get_function("matmul_scheduled"), a, b, c_tuned, 10);

    double max_err = 0;
    for (int64_t i = 0; i < n * n; ++i) {
      max_err =
          std::max(max_err, double(std::fabs(c_plain.data<float>()[i] - c_tuned.data<float>()[i])));
    }
    std::cout << fmt::format("matmul {0}x{0}x{0} fp32, {1} threads, target {2}\n", n,
                             runtime::num_threads(), "llvm -mcpu=" + target.cpu);
    std::cout << fmt::format("  default schedule : {:8.2f} GFLOP/s ({:.1f} ms)\n",
                             flops / t_plain * 1e-9, t_plain * 1e3);
    std::cout << fmt::format("  hand schedule    : {:8.2f} GFLOP/s ({:.1f} ms)\n",
                             flops / t_tuned * 1e-9, t_tuned * 1e3);
    std::cout << fmt::format("  speed-up {:.1f}x, max |difference| {:.2e}\n", t_plain / t_tuned,
                             max_err);
    if (max_err > 1e-3 * n) {
      std::cerr << "error: the two schedules disagree\n";
      return 1;
    }
  } catch (const Error& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
