#include "ir/ops/op_defs.h"

namespace tessel::graph::ops {

std::vector<OpDef> elementwise_defs() { return {}; }

}  // namespace tessel::graph::ops
