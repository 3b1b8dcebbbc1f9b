// Input values for runs without given inputs (tessel run, the tuned-model check).
#pragma once

#include <string>

#include "runtime/ndarray.h"

namespace tessel::runtime {

// Fills an array by `mode`: "zeros", "ones" or "random" (uniform [0, 1) for floats, 0..9 for ints,
// 0 or 1 for bool, from `seed`). Error for a dtype it cannot fill.
void fill(NDArray& a, const std::string& mode, unsigned seed);

}  // namespace tessel::runtime
