// Internal to tir/arith: the rewriting simplifier behind Analyzer::simplify. Scalar integer
// arithmetic goes through the canonical linear form (canonical_simplify.cc); everything else is
// rewritten node by node (rewrite_simplify.cc). Floats only fold constants.
#pragma once

#include <cstdint>
#include <optional>

#include "tir/arith/analyzer_impl.h"

namespace tessel::arith {

// Scalar integer types (not bool): the ones the linear form handles.
inline bool is_index_type(DataType t) { return t.is_scalar() && (t.is_int() || t.is_uint()); }

class Simplifier {
 public:
  explicit Simplifier(Analyzer::Impl& a) : a_(a) {}

  PrimExpr visit(const PrimExpr& e);

 private:
  // ---- canonical_simplify.cc ----
  // The linear form of a scalar integer expression, with all its parts simplified.
  LinearSum to_sum(const PrimExpr& e);
  LinearSum product(const PrimExpr& mul);
  LinearSum floordiv_sum(const LinearSum& s, int64_t c);  // c > 0
  LinearSum floormod_sum(const LinearSum& s, int64_t c);  // c > 0
  // r has no term divisible by c and a base in (-c, c).
  LinearSum floordiv_rest(const LinearSum& r, int64_t c);
  LinearSum floormod_rest(const LinearSum& r, int64_t c);
  struct FactorSplit {
    int64_t factor;
    LinearSum high, low;
  };
  std::optional<FactorSplit> split_at_factor(const LinearSum& r, int64_t c);
  void merge_div_mod(LinearSum* s);

  // ---- rewrite_simplify.cc ----
  PrimExpr visit_var(const PrimExpr& e);
  PrimExpr visit_float_or_vector_arith(const PrimExpr& e);
  PrimExpr vector_rule(NodeKind k, const PrimExpr& a, const PrimExpr& b);
  PrimExpr visit_min_max(const PrimExpr& e);
  PrimExpr visit_compare(const PrimExpr& e);
  PrimExpr compare_index(NodeKind k, const PrimExpr& a, const PrimExpr& b);
  PrimExpr floordiv_bound(NodeKind k, const LinearSum& lhs, int64_t n);
  PrimExpr visit_logic(const PrimExpr& e);
  PrimExpr visit_not(const NotNode* op);
  // Select and IfThenElseExpr (which stays lazy: never rewritten into a Select).
  template <class T>
  PrimExpr visit_conditional(const T* op, const PrimExpr& self);
  PrimExpr visit_cast(const CastNode* op);
  PrimExpr visit_let(const LetNode* op);
  PrimExpr visit_call(const CallNode* op);
  std::vector<PrimExpr> visit_all(const std::vector<PrimExpr>& es);

  Analyzer::Impl& a_;
};

}  // namespace tessel::arith
