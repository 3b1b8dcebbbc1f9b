// What a fused group's kernel is measured on: inputs (its constants, else random values) and the
// outputs the reference executor computes from them, an oracle that shares no code with the
// kernel. Both tuners check every candidate against them.
#pragma once

#include <cstdint>
#include <vector>

#include "passes/lower_to_te.h"
#include "runtime/ndarray.h"

namespace tessel::autotune {

struct KernelData {
  std::vector<runtime::NDArray> inputs;      // the kernel's input args, in order
  std::vector<runtime::NDArray> references;  // its outputs, in order
};

// For `lowered` (group `group` of `g`, lowered by lower_to_te or compute_group): random inputs
// drawn from `seed` (uniform in [-1, 1), small non-negative integers for integer inputs; constants
// keep their values, so weights keep their real distribution).
KernelData kernel_data(const graph::Graph& g, const passes::FusedGroup& group,
                       const passes::LoweredGroup& lowered, uint64_t seed);

}  // namespace tessel::autotune
