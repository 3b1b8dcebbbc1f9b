#include "ir/ops/op_defs.h"

namespace tessel::graph::ops {

std::vector<OpDef> reduce_defs() { return {}; }

}  // namespace tessel::graph::ops
