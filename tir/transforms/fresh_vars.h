// Copies a statement with fresh binders, for passes that duplicate code (unrolling, loop
// partitioning): requires well-formed IR; guarantees every var bound inside the copy (loop, let,
// allocation data var) is new, so each var keeps exactly one binding site in the function.
#pragma once

#include <utility>
#include <vector>

#include "ir/stmt.h"

namespace tessel::tir {

// Returns `s` with `subst` applied to its free vars and every var bound inside `s` renamed.
Stmt copy_with_fresh_vars(const Stmt& s, const std::vector<std::pair<Var, PrimExpr>>& subst = {});

}  // namespace tessel::tir
