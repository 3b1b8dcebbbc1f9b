// Lowers a schedule to a tir PrimFunc: one loop nest per root stage, attached stages inside
// their host loops with a buffer sized by bound inference, reductions split into init and
// update, and `likely` guards where a split does not divide its extent.
// Guarantees: N-d BufferLoad/BufferStore, Allocate per non-argument stage, no te nodes left.
#pragma once

#include <string>
#include <vector>

#include "te/schedule.h"

namespace tessel::te {

// `args` lists the function's tensor arguments in call order: every placeholder that is read
// and every output of the schedule must be among them.
PrimFunc schedule_to_tir(const Schedule& sch, const std::vector<Tensor>& args,
                         const std::string& name);

}  // namespace tessel::te
