#include "tir/arith/analyzer.h"

#include <algorithm>

#include "ir/error.h"
#include "ir/structural_equal.h"
#include "tir/arith/analyzer_impl.h"

namespace tessel::arith {

VarInfo Analyzer::Impl::info_for_range(const Var& v, const Range& r) {
  TESSEL_ICHECK(r.min.defined() && r.extent.defined()) << "range of " << v->name_hint;
  PrimExpr min = simplify(r.min);
  PrimExpr last = simplify(r.min + r.extent - 1);
  ConstIntBound type = type_bound(v.dtype());
  VarInfo info{v,
               {std::max(bound(min).min_value, type.min_value),
                std::min(bound(last).max_value, type.max_value)},
               {},
               {}};
  if (!min.is<IntImmNode>() || !last.is<IntImmNode>()) info.symbolic = {min, last};
  return info;
}

VarInfo Analyzer::Impl::info_for_value(const Var& v, const PrimExpr& value) {
  return VarInfo{v, bound(value), {}, value};
}

std::optional<VarInfo> Analyzer::Impl::replace(const Var& v, std::optional<VarInfo> info) {
  std::optional<VarInfo> old;
  if (auto it = vars.find(v.get()); it != vars.end()) {
    old = std::move(it->second);
    num_symbolic_ranges -= old->symbolic.is_bounded();
    vars.erase(it);
  }
  if (info) {
    num_symbolic_ranges += info->symbolic.is_bounded();
    vars.emplace(v.get(), std::move(*info));
  }
  return old;
}

Analyzer::Analyzer() : impl_(new Impl) {}
Analyzer::~Analyzer() { delete impl_; }

void Analyzer::bind(const Var& v, const Range& r) {
  impl_->replace(v, impl_->info_for_range(v, r));
}

void Analyzer::bind(const Var& v, const PrimExpr& value) {
  impl_->replace(v, impl_->info_for_value(v, simplify(value)));
}

void Analyzer::unbind(const Var& v) { impl_->replace(v, std::nullopt); }

ConstIntBound Analyzer::const_int_bound(const PrimExpr& e) { return impl_->bound(e); }

PrimExpr Analyzer::simplify(const PrimExpr& e) { return impl_->simplify(e); }

bool Analyzer::can_prove(const PrimExpr& cond) { return impl_->can_prove(cond); }

bool Analyzer::can_prove_equal(const PrimExpr& a, const PrimExpr& b) {
  DataType t = a.dtype();
  if (t == b.dtype() && t.is_scalar() && (t.is_int() || t.is_uint())) {
    return is_zero(simplify(a - b));
  }
  return structural_equal(simplify(a), simplify(b));
}

}  // namespace tessel::arith
