// Tests name ops as models do ("Conv"); this is the importer's lookup, failing loudly on a typo.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

#include "ir/op_table.h"

namespace tessel::testing {

inline graph::OpKind op_named(std::string_view name) {
  const graph::OpDef* def = graph::find_op(name);
  if (!def) throw std::invalid_argument("no op named '" + std::string(name) + "'");
  return def->kind;
}

}  // namespace tessel::testing
