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

// te's pragma auto_unroll_max_step: marks Unrolled, innermost first, each serial loop in `s` with
// a constant extent whose iterations times the steps of its body are at most `max_step`. A store
// or an Evaluate is one step, an Unrolled loop its extent times its body's, a Vectorized loop its
// body's (one vector operation per statement); a loop left rolled stops its enclosing loops from
// unrolling. unroll_loops then expands the marked loops.
Stmt mark_auto_unroll(const Stmt& s, int64_t max_step);

}  // namespace tessel::tir
