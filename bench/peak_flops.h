// Measures this core's fp32 FMA peak: independent FMA chains in the widest vector unit the CPU
// has, so "fraction of peak" is measured rather than taken from a datasheet.
#pragma once

namespace tessel::bench {

struct PeakFlops {
  double gflops_per_core;  // measured
  int vector_bits;         // 512, 256 or 128
};

// The peak of vectors no wider than `max_vector_bits` (a target's width: 256 measures AVX2 code on
// an AVX-512 machine): the best of three probes of `iterations` steps of 12 FMAs each (the
// default takes about 0.1 s a probe on current cores; a tenth of it, before each repetition of a
// benchmark, follows the VM's slow and quiet phases).
PeakFlops measure_peak_flops(int max_vector_bits = 512, long iterations = 50'000'000);

// GFLOP/s per core of a register-tiled matmul micro-kernel with its operands in L1 (vectors no
// wider than `max_vector_bits`): the best of `runs` runs of `calls` calls of 128 steps
// (l1_kernel_call_flops each: about 0.9 us with AVX-512 on Zen 4, 0.2 us with AVX2). Beside the FMA
// probe, the rate a matmul can reach at the moment, which a busy neighbour's share of the core's
// load ports lowers while the probe's rate holds; 0 without FMA. Thread-safe: each thread may
// measure its core at once.
double measure_l1_kernel_flops(int max_vector_bits, long calls, int runs = 3);
// The floating-point operations of one call of that micro-kernel (0 without FMA).
double l1_kernel_call_flops(int max_vector_bits);

}  // namespace tessel::bench
