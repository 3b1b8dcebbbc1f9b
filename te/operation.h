// Tensor expressions: placeholder, compute over any rank, reduce_axis and reductions
// (sum, max, min and user-defined commutative reducers).
#pragma once

#include <functional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "te/expr.h"

namespace tessel::te {

using Expr = PrimExpr;

class PlaceholderOpNode : public OperationNode {
 public:
  static constexpr NodeKind kKind = node_kind(TeKind::PlaceholderOp);
  PlaceholderOpNode(std::string n, std::vector<PrimExpr> s, DataType t)
      : OperationNode(kKind, std::move(n)), shape(std::move(s)), dtype(t) {}
  std::vector<PrimExpr> shape;
  DataType dtype;
  int num_outputs() const override { return 1; }
  DataType output_dtype(int) const override { return dtype; }
  const std::vector<PrimExpr>& output_shape(int) const override { return shape; }
};

class ComputeOpNode : public OperationNode {
 public:
  static constexpr NodeKind kKind = node_kind(TeKind::ComputeOp);
  ComputeOpNode(std::string n, std::vector<IterVar> ax, std::vector<IterVar> rax, PrimExpr b);
  std::vector<IterVar> axis;         // one data-parallel axis per output dim, domain [0, shape)
  std::vector<IterVar> reduce_axis;  // axes of the top-level Reduce, if any
  PrimExpr body;                     // a Reduce only at the top
  std::vector<PrimExpr> shape;       // extents of `axis`
  int num_outputs() const override { return 1; }
  DataType output_dtype(int) const override { return body.dtype(); }
  const std::vector<PrimExpr>& output_shape(int) const override { return shape; }
};

// The output of an operation; calling it with indices reads it.
class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(Operation op, int value_index = 0)
      : op_(std::move(op)), value_index_(value_index) {}

  const Operation& op() const { return op_; }
  int value_index() const { return value_index_; }
  const std::string& name() const { return op_->name; }
  const std::vector<PrimExpr>& shape() const { return op_->output_shape(value_index_); }
  int ndim() const { return static_cast<int>(shape().size()); }
  DataType dtype() const { return op_->output_dtype(value_index_); }
  bool defined() const { return op_.defined(); }
  bool same_as(const Tensor& o) const {
    return op_.same_as(o.op_) && value_index_ == o.value_index_;
  }

  // Axes of a compute tensor (throws tessel::Error for a placeholder).
  IterVar axis(int i) const;
  IterVar reduce_axis(int i) const;

  PrimExpr operator()(std::vector<PrimExpr> indices) const;
  template <class... Idx>
  PrimExpr operator()(Idx&&... idx) const {
    return (*this)(std::vector<PrimExpr>{PrimExpr(std::forward<Idx>(idx))...});
  }

 private:
  Operation op_;
  int value_index_ = 0;
};

Var var(std::string name, DataType dtype = DataType::i32());

Tensor placeholder(std::vector<PrimExpr> shape, DataType dtype = DataType::f32(),
                   std::string name = "placeholder");

// fcompute gets one index var per output dim. Default axis names: i, j (rank <= 2), else i0, i1,
// ...
Tensor compute_impl(std::vector<PrimExpr> shape,
                    const std::function<PrimExpr(const std::vector<Var>&)>& fcompute,
                    std::string name, std::vector<std::string> axis_names);

namespace detail {
template <class F, size_t... I>
PrimExpr call_with_vars(F& f, const std::vector<Var>& v, std::index_sequence<I...>) {
  return f(v[I]...);
}
template <class F, size_t N>
constexpr bool invocable_n() {
  return []<size_t... I>(std::index_sequence<I...>) {
    return std::is_invocable_v<F, decltype((void)I, std::declval<Var>())...>;
  }(std::make_index_sequence<N>());
}
}  // namespace detail

// compute({M, N}, [&](Expr i, Expr j) { ... }, "C"); the lambda may also take const
// std::vector<Var>&.
template <class F>
Tensor compute(std::vector<PrimExpr> shape, F&& fcompute, std::string name = "compute",
               std::vector<std::string> axis_names = {}) {
  if constexpr (std::is_invocable_v<F, const std::vector<Var>&>) {
    return compute_impl(std::move(shape), fcompute, std::move(name), std::move(axis_names));
  } else {
    auto dispatch = [&](const std::vector<Var>& v) -> PrimExpr {
      PrimExpr out;
      auto try_n = [&]<size_t N>(std::integral_constant<size_t, N>) {
        if constexpr (detail::invocable_n<F, N>()) {
          if (v.size() == N)
            out = detail::call_with_vars(fcompute, v, std::make_index_sequence<N>());
        }
      };
      try_n(std::integral_constant<size_t, 1>());
      try_n(std::integral_constant<size_t, 2>());
      try_n(std::integral_constant<size_t, 3>());
      try_n(std::integral_constant<size_t, 4>());
      try_n(std::integral_constant<size_t, 5>());
      try_n(std::integral_constant<size_t, 6>());
      return out;
    };
    return compute_impl(std::move(shape), dispatch, std::move(name), std::move(axis_names));
  }
}

// A reduction axis over [begin, end).
IterVar reduce_axis(PrimExpr begin, PrimExpr end, std::string name = "rv");

// A commutative reducer: combine(x, y) with an identity for the value's dtype.
class Reducer {
 public:
  Reducer(std::string name, std::function<PrimExpr(PrimExpr, PrimExpr)> combine,
          std::function<PrimExpr(DataType)> identity);
  PrimExpr operator()(PrimExpr source, std::vector<IterVar> axis,
                      PrimExpr where = PrimExpr()) const;

 private:
  std::string name_;
  std::function<PrimExpr(PrimExpr, PrimExpr)> combine_;
  std::function<PrimExpr(DataType)> identity_;
};

PrimExpr sum(PrimExpr source, std::vector<IterVar> axis, PrimExpr where = PrimExpr());
PrimExpr max(PrimExpr source, std::vector<IterVar> axis, PrimExpr where = PrimExpr());
PrimExpr min(PrimExpr source, std::vector<IterVar> axis, PrimExpr where = PrimExpr());
// `max(x, {k})` would also match the binary max(a, b); an initializer list picks the reduction.
inline PrimExpr max(PrimExpr source, std::initializer_list<IterVar> axis,
                    PrimExpr where = PrimExpr()) {
  return max(std::move(source), std::vector<IterVar>(axis), std::move(where));
}
inline PrimExpr min(PrimExpr source, std::initializer_list<IterVar> axis,
                    PrimExpr where = PrimExpr()) {
  return min(std::move(source), std::vector<IterVar>(axis), std::move(where));
}
using tessel::max;
using tessel::min;
// select(c, a, b) evaluates a and b (for values); if_then_else(c, a, b) evaluates only the one c
// picks, so it guards loads: padding is if_then_else(in_bounds, A(i - 1), 0).
using tessel::if_then_else;
using tessel::select;

}  // namespace tessel::te
