// Rewrites intrinsic calls that have no native vector instruction into arithmetic that
// vectorizes. Requires: float arguments for the rewritten calls. Guarantees: no sigmoid, rsqrt,
// tanh or erf call on float16/float32 values (scalar or vector) is left; tanh and erf become
// clamped rational approximations (max abs error about 1e-6 in float32). float64 tanh/erf stay
// calls (libm accuracy). exp, log, sqrt, pow, floor, ... and likely are kept for the codegen.
#pragma once

#include "ir/stmt.h"

namespace tessel::tir {

PrimFunc lower_intrinsics(const PrimFunc& f);

// The rewrite of one expression, exposed for numeric tests.
PrimExpr lower_intrinsic_calls(const PrimExpr& e);

}  // namespace tessel::tir
