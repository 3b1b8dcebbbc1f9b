// Simplifies every expression of a statement with arith::Analyzer, knowing each loop var's range
// and each let var's value. Requires: well-formed tir (each var bound once). Guarantees: same
// semantics; index math canonical; ifs with a decided (possibly likely-wrapped) condition, loops
// of extent <= 0 and non-thread loops of extent 1 are gone; float math is only constant-folded.
#pragma once

#include "ir/stmt.h"

namespace tessel {

Stmt simplify_stmt(const Stmt& s);
PrimFunc simplify(const PrimFunc& f);

}  // namespace tessel
