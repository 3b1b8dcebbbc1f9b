// Well-formedness check run between passes. Requires nothing. Guarantees (or throws
// InternalError naming the pass and the problem): every var used is defined (a parameter, a var
// in a parameter buffer's shape or strides, a loop, let or allocation), no node is of a kind ir
// does not know (te's), stored and loaded values match their buffer's dtype and the index lanes,
// and, per the options, every access is 1-d and no Vectorized loop is left.
#pragma once

#include <string>

#include "ir/stmt.h"

namespace tessel::tir {

struct VerifyOptions {
  std::string after_pass = "input";          // named in the error message
  bool require_flat = false;                 // after flatten_buffers
  bool require_no_vectorized_loops = false;  // after vectorize_loops
};

void verify(const PrimFunc& f, const VerifyOptions& opt = {});

}  // namespace tessel::tir
