#include "reference/ref_ops.h"

namespace tessel::reference {

std::vector<RefOp> sequence_ref_ops() { return {}; }

}  // namespace tessel::reference
