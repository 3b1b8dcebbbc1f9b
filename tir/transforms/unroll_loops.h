// Unrolls loops. Requires: every Unrolled loop has a constant extent (else tessel::Error naming
// the loop). Guarantees: no Unrolled loop is left; each copy of the body has the loop var replaced
// by its value and fresh inner binders. With auto_max_extent > 0, innermost serial loops with a
// constant extent of at most that many iterations are unrolled too.
#pragma once

#include "ir/stmt.h"

namespace tessel::tir {

struct UnrollLoopsOptions {
  int auto_max_extent = 0;  // 0: only loops marked Unrolled
};

PrimFunc unroll_loops(const PrimFunc& f, const UnrollLoopsOptions& opt = {});

}  // namespace tessel::tir
