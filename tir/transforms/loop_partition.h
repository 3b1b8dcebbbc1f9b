// Splits loops around `likely(cond)` guards. Requires: guards are IfThenElse(likely(c), ...) with
// c a conjunction of integer comparisons. Guarantees: a loop whose guard conjunct is linear in the
// loop var (e.g. io*8 + ii < n from a non-dividing split, n symbolic or not) becomes a main loop
// where the conjunct provably holds and is removed, plus guarded head/tail loops over the rest of
// the range. A guarded vectorized loop is split the same way: its main part stays vectorized when
// its width is a constant >= 2. Vectorized loops in the guarded parts that the guard depends on
// become Serial: the tail is scalar code by design. Loops that cannot be split are unchanged.
// A parallel loop whose parts have constant extents stays one loop, its iterations branching to
// the head, the main part or the tail, where that shortens the longest of `parallel_threads`
// equal chunks (codegen's split of a parallel loop) below the main part's chunk plus the head and
// tail run after it (0 threads: never).
#pragma once

#include "ir/stmt.h"

namespace tessel::tir {

PrimFunc loop_partition(const PrimFunc& f, int parallel_threads = 0);

}  // namespace tessel::tir
