// Flattens N-d buffer accesses to 1-d. Requires: loads and stores index each buffer with one
// index per dimension. Guarantees: every access in the body has one index (row-major from the
// shape, or the dot product with the strides when given); an Allocate holds a 1-d buffer of the
// product size. Parameter buffers stay N-d in PrimFuncNode::buffers (for argument checks) while
// the body uses a 1-d buffer that shares the same `data` var (codegen keys memory by the data var).
#pragma once

#include "ir/stmt.h"

namespace tessel::tir {

PrimFunc flatten_buffers(const PrimFunc& f);

}  // namespace tessel::tir
