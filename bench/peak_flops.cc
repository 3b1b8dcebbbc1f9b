#include "peak_flops.h"

#include <immintrin.h>

#include <algorithm>
#include <chrono>

namespace tessel::bench {
namespace {

// 12 independent FMA chains per iteration hide the FMA latency on current x86 cores. Each probe
// is a whole function compiled for its ISA so the intrinsics inline into one loop.
#define TESSEL_FMA_PROBE(NAME, ISA, VEC, FMA, SET, LANES)                                    \
  __attribute__((target(ISA), noinline)) double NAME(long iters) {                           \
    VEC a0 = SET(0.1f), a1 = SET(0.2f), a2 = SET(0.3f), a3 = SET(0.4f), a4 = SET(0.5f),      \
        a5 = SET(0.6f), a6 = SET(0.7f), a7 = SET(0.8f), a8 = SET(0.9f), a9 = SET(1.0f),      \
        a10 = SET(1.1f), a11 = SET(1.2f), m = SET(0.999f), c = SET(0.0001f);                 \
    auto t0 = std::chrono::steady_clock::now();                                              \
    for (long it = 0; it < iters; ++it) {                                                    \
      a0 = FMA(a0, m, c);                                                                    \
      a1 = FMA(a1, m, c);                                                                    \
      a2 = FMA(a2, m, c);                                                                    \
      a3 = FMA(a3, m, c);                                                                    \
      a4 = FMA(a4, m, c);                                                                    \
      a5 = FMA(a5, m, c);                                                                    \
      a6 = FMA(a6, m, c);                                                                    \
      a7 = FMA(a7, m, c);                                                                    \
      a8 = FMA(a8, m, c);                                                                    \
      a9 = FMA(a9, m, c);                                                                    \
      a10 = FMA(a10, m, c);                                                                  \
      a11 = FMA(a11, m, c);                                                                  \
    }                                                                                        \
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); \
    VEC sum = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7 + a8 + a9 + a10 + a11;                   \
    volatile float sink = sum[0];                                                            \
    (void)sink;                                                                              \
    return 2.0 * 12 * LANES * iters / s * 1e-9;                                              \
  }

TESSEL_FMA_PROBE(peak512, "avx512f", __m512, _mm512_fmadd_ps, _mm512_set1_ps, 16)
TESSEL_FMA_PROBE(peak256, "avx2,fma", __m256, _mm256_fmadd_ps, _mm256_set1_ps, 8)
#undef TESSEL_FMA_PROBE

// A matmul micro-kernel whose operands stay in L1: ROWS x 2 vectors of accumulators, over
// kL1Depth steps of a broadcast A element and two B vectors, called `calls` times. It measures
// what a register-tiled kernel can reach now: on a shared VM the FMA probe's rate can hold while
// something else on the host slows the core's loads (on an Intel Xeon VM this kernel ran at
// 99-101% of the probe's peak in quiet phases and 70-82% in busy ones).
constexpr int kL1Depth = 128;
// The floating-point operations of one call of a ROWS x 2-vector kernel of `lanes` lanes.
constexpr double l1_call_flops(int rows, int lanes) { return 2.0 * rows * 2 * lanes * kL1Depth; }

#define TESSEL_L1_KERNEL(NAME, ISA, VEC, FMA, LOAD, STORE, SET, ZERO, LANES, ROWS)           \
  __attribute__((target(ISA), noinline)) double NAME(long calls) {                           \
    alignas(64) static thread_local float a[kL1Depth * ROWS], b[kL1Depth * 2 * LANES],       \
        c[ROWS * 2 * LANES];                                                                 \
    for (int i = 0; i < kL1Depth * ROWS; ++i) a[i] = 1e-3f * static_cast<float>(i % 7);      \
    for (int i = 0; i < kL1Depth * 2 * LANES; ++i) b[i] = 1e-3f * static_cast<float>(i % 5); \
    VEC acc[ROWS][2];                                                                        \
    _Pragma("GCC unroll 16") for (int r = 0; r < ROWS; ++r) acc[r][0] = acc[r][1] = ZERO();  \
    auto t0 = std::chrono::steady_clock::now();                                              \
    for (long call = 0; call < calls; ++call) {                                              \
      for (int k = 0; k < kL1Depth; ++k) {                                                   \
        VEC b0 = LOAD(b + k * 2 * LANES), b1 = LOAD(b + k * 2 * LANES + LANES);              \
        _Pragma("GCC unroll 16") for (int r = 0; r < ROWS; ++r) {                            \
          VEC x = SET(a[k * ROWS + r]);                                                      \
          acc[r][0] = FMA(x, b0, acc[r][0]);                                                 \
          acc[r][1] = FMA(x, b1, acc[r][1]);                                                 \
        }                                                                                    \
      }                                                                                      \
    }                                                                                        \
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); \
    _Pragma("GCC unroll 16") for (int r = 0; r < ROWS; ++r) {                                \
      STORE(c + r * 2 * LANES, acc[r][0]);                                                   \
      STORE(c + r * 2 * LANES + LANES, acc[r][1]);                                           \
    }                                                                                        \
    volatile float sink = c[0];                                                              \
    (void)sink;                                                                              \
    return l1_call_flops(ROWS, LANES) * calls / s * 1e-9;                                    \
  }

// 24 accumulators of AVX-512's 32 registers, 12 of AVX2's 16.
constexpr int kL1Rows512 = 12, kL1Rows256 = 6;
TESSEL_L1_KERNEL(l1_kernel512, "avx512f", __m512, _mm512_fmadd_ps, _mm512_load_ps, _mm512_store_ps,
                 _mm512_set1_ps, _mm512_setzero_ps, 16, kL1Rows512)
TESSEL_L1_KERNEL(l1_kernel256, "avx2,fma", __m256, _mm256_fmadd_ps, _mm256_load_ps, _mm256_store_ps,
                 _mm256_set1_ps, _mm256_setzero_ps, 8, kL1Rows256)
#undef TESSEL_L1_KERNEL

double best_of_3(double (*probe)(long), long iters) {
  return std::max({probe(iters), probe(iters), probe(iters)});
}

}  // namespace

PeakFlops measure_peak_flops(int max_vector_bits, long iterations) {
  __builtin_cpu_init();
  if (max_vector_bits >= 512 && __builtin_cpu_supports("avx512f"))
    return {best_of_3(peak512, iterations), 512};
  if (max_vector_bits >= 256 && __builtin_cpu_supports("fma"))
    return {best_of_3(peak256, iterations), 256};
  return {0, 128};
}

namespace {

// The L1 micro-kernel of the widest vectors up to `max_vector_bits` that this CPU has, and the
// floating-point operations of one of its calls; none without FMA.
struct L1Kernel {
  double (*run)(long calls) = nullptr;
  double call_flops = 0;
};
L1Kernel l1_kernel_for(int max_vector_bits) {
  __builtin_cpu_init();
  if (max_vector_bits >= 512 && __builtin_cpu_supports("avx512f"))
    return {l1_kernel512, l1_call_flops(kL1Rows512, 16)};
  if (max_vector_bits >= 256 && __builtin_cpu_supports("fma"))
    return {l1_kernel256, l1_call_flops(kL1Rows256, 8)};
  return {};
}

}  // namespace

double l1_kernel_call_flops(int max_vector_bits) {
  return l1_kernel_for(max_vector_bits).call_flops;
}

double measure_l1_kernel_flops(int max_vector_bits, long calls, int runs) {
  L1Kernel kernel = l1_kernel_for(max_vector_bits);
  double best = 0;
  for (int r = 0; kernel.run && r < runs; ++r) best = std::max(best, kernel.run(calls));
  return best;
}

}  // namespace tessel::bench
