// Internal to tir/arith: the canonical linear form of an integer index expression,
// sum(coef_i * mono_i) + base, where each mono is a product of non-linear atoms (vars,
// floordiv/floormod nodes, min, loads, ...). Like terms merge by structural equality.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/expr.h"

namespace tessel::arith {

// A total structural order used to sort terms and factors deterministically (vars by name; vars
// that share a name compare equal, so stable sorts keep their first-appearance order).
int expr_compare(const PrimExpr& a, const PrimExpr& b);

// Product of two monomials with factors flattened and sorted.
PrimExpr mono_mul(const PrimExpr& a, const PrimExpr& b);

struct Term {
  PrimExpr mono;
  int64_t coef;
};

struct LinearSum {
  explicit LinearSum(DataType t, int64_t base_ = 0) : dtype(t), base(base_) {}

  DataType dtype;
  std::vector<Term> terms;  // no zero coefficients, no two structurally equal monos
  int64_t base = 0;

  bool is_const() const { return terms.empty(); }
  // A single term with no constant: coef * mono.
  bool is_monomial() const { return terms.size() == 1 && base == 0; }

  void add_term(const PrimExpr& mono, int64_t coef);
  void add(const LinearSum& other, int64_t scale = 1);
  void scale(int64_t c);
  LinearSum negated() const;
  // The canonical expression: terms by decreasing |coef| then structure, positive terms before
  // subtracted ones, the constant last.
  PrimExpr to_expr() const;
};

// Reads an already simplified expression back into linear form without simplifying anything.
LinearSum parse_linear(const PrimExpr& e);

}  // namespace tessel::arith
