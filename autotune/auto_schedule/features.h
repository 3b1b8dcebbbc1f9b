// Features of a program for the cost model (Ansor's per-statement features, condensed): read from
// the loop nest that schedule_to_tir makes of the program's schedule, before the tir passes, so
// that loops still carry their parallel / vectorized / unrolled annotations and accesses their
// N-d indices. Per innermost statement (a buffer store) it counts arithmetic, loop structure
// and, for the store and its largest loads, the bytes touched, their reuse, the stride along
// the innermost loop and the reuse distance; a program's vector holds its heaviest statements'
// features and a few totals.
#pragma once

#include <vector>

#include "autotune/auto_schedule/program.h"

namespace tessel::autotune {

// Features of one statement: kStatementFeatures, then kAccessFeatures per access for
// kAccessesPerStatement accesses (the store first, then the loads with the most bytes touched).
constexpr size_t kStatementFeatures = 10;
constexpr size_t kAccessFeatures = 6;
constexpr size_t kAccessesPerStatement = 4;
// Statements a program's vector holds, by floating-point work; then the program's totals.
constexpr size_t kStatementsPerProgram = 3;
constexpr size_t kProgramTotals = 4;
constexpr size_t kNumFeatures =
    kStatementsPerProgram * (kStatementFeatures + kAccessFeatures * kAccessesPerStatement) +
    kProgramTotals;

// The feature vector of a loop nest (te::schedule_to_tir's output).
std::vector<float> loop_nest_features(const PrimFunc& f);

// The feature vector of `program`; all zeros when its schedule throws (the search never keeps
// such a program).
std::vector<float> program_features(const ComputeDAG& dag, const Sketch& sketch,
                                    const Program& program);

}  // namespace tessel::autotune
