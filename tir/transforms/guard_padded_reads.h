// Turns a sum's update that reads a zero-filled window (a padded input inlined into a conv or a
// pool) into a guarded update: `acc = acc + if_then_else(c, x, 0) * w` becomes
// `if (likely(c)) acc = acc + x * w`, and `acc = acc + if_then_else(c, x, 0)` likewise, so that
// loop_partition splits the loops around the window's edge and the interior reads without checks.
// Requires: flattened buffers. Guarantees: only stores that add such a read to the element they
// read change, and only where the condition is scalar and uses no vectorized loop's var, and the
// unrolled loops around the update run it at most 64 times (partitioning copies it); the sum
// differs from the unguarded one only where w is infinite or NaN at a padded point (0 * inf is NaN;
// the padded point then adds nothing, as in a runtime that skips the padding).
#pragma once

#include "ir/stmt.h"

namespace tessel::tir {

PrimFunc guard_padded_reads(const PrimFunc& f);

}  // namespace tessel::tir
