// Symbolic intervals, used by bound inference to find the region of a tensor that a loop nest
// reads: each var ranges over an interval whose ends are expressions of outer vars.
#pragma once

#include <unordered_map>

#include "ir/expr.h"

namespace tessel::arith {

// Inclusive [min, max]; an undefined end means unbounded on that side.
struct IntervalSet {
  PrimExpr min, max;
  static IntervalSet point(const PrimExpr& e) { return {e, e}; }
  static IntervalSet everything() { return {}; }
  static IntervalSet from_range(const Range& r);  // [min, min + extent - 1]
  bool is_bounded() const { return min.defined() && max.defined(); }
};

using VarIntervals = std::unordered_map<const VarNode*, IntervalSet>;

// Interval of `e` when each var in `dom` ranges over its interval; vars not in `dom` stay
// symbolic (treated as points). Loads and unknown calls give an unbounded interval. Results are
// simplified.
IntervalSet eval_interval(const PrimExpr& e, const VarIntervals& dom);
// Smallest interval holding both (ends combined with min/max and simplified).
IntervalSet union_of(const IntervalSet& a, const IntervalSet& b);

}  // namespace tessel::arith
