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

}  // namespace tessel::bench
