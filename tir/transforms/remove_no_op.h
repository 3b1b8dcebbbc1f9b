// Removes statements that do nothing. Requires: well-formed IR. Guarantees: no Evaluate of a
// constant (unless the whole body is one), no empty sequences, no loop, if, let or allocation
// whose body does nothing or whose loop runs zero times, and no store of an element to itself.
#pragma once

#include "ir/stmt.h"

namespace tessel::tir {

PrimFunc remove_no_op(const PrimFunc& f);

}  // namespace tessel::tir
