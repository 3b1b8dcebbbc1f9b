// Readable text for expressions, statements and functions. Distinct vars that share a name hint
// get distinct names (i, i_1, ...). Integer division prints as // and % with floor semantics.
#pragma once

#include <iosfwd>
#include <string>

#include "ir/stmt.h"

namespace tessel {

std::string to_string(const PrimExpr& e);
std::string to_string(const Stmt& s);
std::string to_string(const PrimFunc& f);

std::ostream& operator<<(std::ostream& os, const PrimExpr& e);
std::ostream& operator<<(std::ostream& os, const Stmt& s);
std::ostream& operator<<(std::ostream& os, const PrimFunc& f);

}  // namespace tessel
