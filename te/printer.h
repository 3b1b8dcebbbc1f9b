// Text for compute bodies: ir's printer (ir/printer.h) plus te's nodes. A tensor read prints as
// `A(i, j)`, a reduction as `sum(A(i, k), axis=[k], where=...)`. ir's operator<< prints te's
// nodes as <non-ir node>.
#pragma once

#include <string>

#include "ir/expr.h"

namespace tessel::te {

std::string body_to_string(const PrimExpr& e);

}  // namespace tessel::te
