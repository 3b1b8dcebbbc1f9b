// Internal to tir/arith: the state behind Analyzer (what is known about each var) and the entry
// points that const_int_bound.cc, rewrite_simplify.cc and int_set.cc provide to each other.
#pragma once

#include <optional>
#include <unordered_map>

#include "tir/arith/analyzer.h"
#include "tir/arith/int_set.h"
#include "tir/arith/linear_sum.h"

namespace tessel::arith {

// Saturating arithmetic on bound ends: kNegInf/kPosInf absorb, overflow saturates.
int64_t sat_add(int64_t a, int64_t b);
int64_t sat_mul(int64_t a, int64_t b);
// The values a scalar integer type can hold (bool: [0, 1]); everything for other types.
ConstIntBound type_bound(DataType t);

struct VarInfo {
  Var var;               // keeps the key alive
  ConstIntBound bound;   // constant bounds, computed when bound
  IntervalSet symbolic;  // [min, min + extent - 1] when bound to a non-constant range
  PrimExpr value;        // the let value, when bound to one
};

struct Analyzer::Impl {
  std::unordered_map<const VarNode*, VarInfo> vars;
  int num_symbolic_ranges = 0;  // vars whose `symbolic` interval is set
  bool in_symbolic_proof = false;

  // analyzer.cc
  VarInfo info_for_range(const Var& v, const Range& r);
  VarInfo info_for_value(const Var& v, const PrimExpr& value);
  // Installs `info` for v (or forgets v) and returns what was known before, to restore scopes.
  std::optional<VarInfo> replace(const Var& v, std::optional<VarInfo> info);

  ConstIntBound bound(const PrimExpr& e);  // const_int_bound.cc
  ConstIntBound bound(const LinearSum& s);
  // Bounds of s, tightened by relaxing vars with symbolic ranges (i in [0, n) gives i - n < 0).
  ConstIntBound proof_bound(const LinearSum& s);
  PrimExpr simplify(const PrimExpr& e);  // rewrite_simplify.cc
  bool can_prove(const PrimExpr& cond) { return is_const_int(simplify(cond), 1); }
};

// eval_interval with the vars' known bounds taken from `a` (int_set.cc).
IntervalSet eval_interval(const PrimExpr& e, const VarIntervals& dom, Analyzer::Impl& a);

}  // namespace tessel::arith
