// Structural equality and hashing of ir (te's nodes are not ir: they are an InternalError here).
// Vars bound inside (loops, lets, allocations) match by position; free vars match by identity
// unless map_free_vars is set, in which case a consistent one-to-one renaming is accepted.
#pragma once

#include <cstddef>
#include <string>

#include "ir/stmt.h"

namespace tessel {

bool structural_equal(const PrimExpr& a, const PrimExpr& b, bool map_free_vars = false);
bool structural_equal(const Stmt& a, const Stmt& b, bool map_free_vars = false);
bool structural_equal(const PrimFunc& a, const PrimFunc& b);

size_t structural_hash(const PrimExpr& e);
size_t structural_hash(const Stmt& s);

}  // namespace tessel
