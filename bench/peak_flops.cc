#include "peak_flops.h"

#include <immintrin.h>

#include <algorithm>
#include <chrono>

namespace tessel::bench {
namespace {

// 16 independent accumulators hide the FMA latency (4 cycles x 2 pipes on current x86 cores).
template <class V, V (*Fma)(V, V, V), V (*Set)(float)>
double run_fma_chains(int lanes) {
  const long iters = 20'000'000;
  double best = 0;
  for (int rep = 0; rep < 3; ++rep) {
    V acc[16];
    for (int i = 0; i < 16; ++i) acc[i] = Set(0.001f * i);
    V a = Set(0.999f), b = Set(0.0001f);
    auto t0 = std::chrono::steady_clock::now();
    for (long it = 0; it < iters; ++it) {
      for (int i = 0; i < 16; ++i) acc[i] = Fma(acc[i], a, b);
      asm volatile("" : "+x"(acc[0]), "+x"(acc[5]), "+x"(acc[10]), "+x"(acc[15]));
    }
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    volatile float sink = reinterpret_cast<float*>(&acc[3])[0];
    (void)sink;
    best = std::max(best, 2.0 * 16 * lanes * iters / s * 1e-9);
  }
  return best;
}

__attribute__((target("avx512f"))) __m512 fma512(__m512 a, __m512 b, __m512 c) { return _mm512_fmadd_ps(a, b, c); }
__attribute__((target("avx512f"))) __m512 set512(float v) { return _mm512_set1_ps(v); }
__attribute__((target("avx2,fma"))) __m256 fma256(__m256 a, __m256 b, __m256 c) { return _mm256_fmadd_ps(a, b, c); }
__attribute__((target("avx2,fma"))) __m256 set256(float v) { return _mm256_set1_ps(v); }

__attribute__((target("avx512f"))) double peak512() { return run_fma_chains<__m512, fma512, set512>(16); }
__attribute__((target("avx2,fma"))) double peak256() { return run_fma_chains<__m256, fma256, set256>(8); }

}  // namespace

PeakFlops measure_peak_flops() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return {peak512(), 512};
  if (__builtin_cpu_supports("fma")) return {peak256(), 256};
  return {0, 128};
}

}  // namespace tessel::bench
