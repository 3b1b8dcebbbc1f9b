// Bound inference: the range of every iter var of every stage. Consumers come first; for each
// producer, the loops enclosing its attach point are fixed, the loops inside it are relaxed,
// and the producer's region is the union of the intervals of its consumers' reads.
// Requires: bodies with inlined stages already substituted (see inline_bodies).
#pragma once

#include <functional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "te/schedule.h"

namespace tessel::te {

using Bounds = std::unordered_map<const IterVarNode*, Range>;
using StageBodies = std::unordered_map<const StageNode*, PrimExpr>;

// Each compute stage's body with the reads of inlined stages replaced by their bodies.
StageBodies inline_bodies(const Schedule& sch);

Bounds infer_bound(const Schedule& sch, const StageBodies& bodies);

// The ranges of a stage's loops over its root iter vars' own domains, through its splits and
// fuses: what its loops run before bound inference narrows them (a stage at root keeps them).
Bounds own_loop_ranges(const StageNode& s);

// The loops that enclose a stage's body, outermost first: its attach path, then its own leaves.
std::vector<std::pair<const StageNode*, IterVar>> enclosing_loops(const StageNode& s);

// Loops run over [0, extent); a leaf's value is its range's min plus its loop var, so that guards
// and accesses stay linear in the outer loops (which loop partitioning relies on).
Range loop_range(const Bounds& b, const IterVar& iv);

// The loops enclosing a stage's attach point (empty at root).
std::vector<std::pair<const StageNode*, IterVar>> attach_point_loops(const StageNode& s);

// Each root iter var's value as an expression of the stage's leaf loop vars (see loop_range).
// `fused_value`, when given, may stand in for a fused loop's value before it is divided back into
// the loops it fused (bound inference clips it to the fused extent).
using FusedValue = std::function<PrimExpr(const FuseRelation&, const PrimExpr&)>;
std::unordered_map<const IterVarNode*, PrimExpr> root_values(const StageNode& s, const Bounds& b,
                                                             const FusedValue& fused_value = {});

// Conditions (those not provable) that keep split parents inside their ranges when a factor does
// not divide the extent, and keep the stage's axes inside their domain when its region was
// computed for a whole consumer tile.
std::vector<PrimExpr> loop_guards(const StageNode& s, const Bounds& b,
                                  const std::unordered_map<const IterVarNode*, PrimExpr>& values);

}  // namespace tessel::te
