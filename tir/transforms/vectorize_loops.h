// Turns Vectorized loops into vector code. Requires: flattened (1-d) accesses; every Vectorized
// loop has a constant extent, no guard or assert that depends on its var, no inner loop whose
// bounds depend on it, and independent iterations (each buffer written in it is accessed at one
// position per iteration). Violations throw tessel::Error naming the loop, with a hint.
// Guarantees: no Vectorized loop is left; the loop var becomes ramp(min, 1, lanes), invariant
// scalars are broadcast, loads/stores/selects/calls become vector ones; an if_then_else keeps a
// condition that does not depend on the loop scalar and otherwise gets a vector condition (its
// values stay lazy per lane: codegen masks their loads); inner serial loops stay around the vector
// body (the vectorized loop moves innermost, checked legal above).
#pragma once

#include "ir/stmt.h"

namespace tessel::tir {

PrimFunc vectorize_loops(const PrimFunc& f);

}  // namespace tessel::tir
