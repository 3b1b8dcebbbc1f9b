// Arithmetic analysis over integer index expressions: constant bounds, a canonicalizing
// simplifier (linear forms, floordiv/floormod with bound-aware rules) and a prover.
// All integer division is floor division (see docs/tir.md).
#pragma once

#include <cstdint>
#include <limits>
#include <unordered_map>

#include "ir/expr.h"

namespace tessel::arith {

// Inclusive constant bounds; kNegInf/kPosInf mean unbounded.
struct ConstIntBound {
  static constexpr int64_t kNegInf = std::numeric_limits<int64_t>::min();
  static constexpr int64_t kPosInf = std::numeric_limits<int64_t>::max();
  int64_t min_value = kNegInf;
  int64_t max_value = kPosInf;
  bool is_const() const { return min_value == max_value; }
};

class Analyzer {
 public:
  Analyzer();
  ~Analyzer();
  Analyzer(const Analyzer&) = delete;
  Analyzer& operator=(const Analyzer&) = delete;

  // v lies in [r.min, r.min + r.extent). Rebinding replaces the previous range.
  void bind(const Var& v, const Range& r);
  // v equals value (a let binding).
  void bind(const Var& v, const PrimExpr& value);
  void unbind(const Var& v);

  ConstIntBound const_int_bound(const PrimExpr& e);
  PrimExpr simplify(const PrimExpr& e);
  // True only when cond (a bool expression) holds for every value of the bound vars.
  bool can_prove(const PrimExpr& cond);
  bool can_prove_equal(const PrimExpr& a, const PrimExpr& b);

  struct Impl;

 private:
  Impl* impl_;
};

}  // namespace tessel::arith
