// Measures this core's fp32 FMA peak: independent FMA chains in the widest vector unit the CPU
// has, so "fraction of peak" is measured rather than taken from a datasheet.
#pragma once

namespace tessel::bench {

struct PeakFlops {
  double gflops_per_core;  // measured
  int vector_bits;         // 512, 256 or 128
};

PeakFlops measure_peak_flops();

}  // namespace tessel::bench
