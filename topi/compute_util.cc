#include "topi/compute_util.h"

#include <fmt/format.h>

#include "ir/error.h"
#include "ir/ops/shape_util.h"

namespace tessel::topi {

std::vector<PrimExpr> output_shape(const OpCall& call, size_t i) {
  const graph::TensorType& t = call.output_type(i);
  std::vector<PrimExpr> shape;
  for (int64_t d : t.shape) {
    if (d < 0)
      throw Error(
          fmt::format("{}: output {} has an unknown dim ({})", call.describe(), i, t.str()));
    shape.emplace_back(static_cast<int>(d));
  }
  return shape;
}

int64_t axis_attr(const OpCall& call, int64_t rank, int64_t def) {
  return graph::ops::normalize_axis(call.attr_int("axis", def), rank, call);
}

PrimExpr clamp_index(PrimExpr index, int64_t dim) {
  if (index.dtype() != DataType::i32()) index = cast(DataType::i32(), index);
  if (dim <= 1) return PrimExpr(0);
  return min(max(index, PrimExpr(0)), PrimExpr(static_cast<int>(dim - 1)));
}

PrimExpr wrap_index(PrimExpr value, int64_t dim) {
  // Wrap and clamp in int64 so that a huge int64 value cannot wrap around into range when narrowed.
  if (value.dtype() != DataType::i64()) value = cast(DataType::i64(), value);
  PrimExpr d = make_const(DataType::i64(), static_cast<double>(dim));
  PrimExpr wrapped = select(value < make_zero(DataType::i64()), value + d, value);
  if (dim <= 1) return PrimExpr(0);
  PrimExpr clamped =
      min(max(wrapped, make_zero(DataType::i64())), d - make_const(DataType::i64(), 1));
  return cast(DataType::i32(), clamped);
}

std::vector<int64_t> const_shape(const te::Tensor& t, const std::string& what) {
  std::vector<int64_t> shape;
  for (const PrimExpr& d : t.shape()) {
    const int64_t* v = as_const_int(d);
    if (!v) throw Error(fmt::format("{}: needs a static shape", what));
    shape.push_back(*v);
  }
  return shape;
}

std::vector<PrimExpr> unflatten(PrimExpr flat, const std::vector<int64_t>& shape) {
  std::vector<PrimExpr> idx(shape.size());
  int64_t stride = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    if (shape[d] == 1) {
      idx[d] = PrimExpr(0);
      continue;
    }
    PrimExpr q = stride == 1 ? flat : floordiv(flat, PrimExpr(static_cast<int>(stride)));
    // The outermost non-unit dim needs no modulo: the flat offset is in range.
    bool outermost = true;
    for (size_t e = 0; e < d; ++e) outermost = outermost && shape[e] == 1;
    idx[d] = outermost ? q : floormod(q, PrimExpr(static_cast<int>(shape[d])));
    stride *= shape[d];
  }
  return idx;
}

PrimExpr trunc_div(PrimExpr a, PrimExpr b) {
  PrimExpr q = floordiv(a, b);
  PrimExpr zero = make_zero(q.dtype());
  return select(q < zero && floormod(a, b) != zero, q + make_const(q.dtype(), 1), q);
}

std::vector<PrimExpr> exprs(const std::vector<Var>& vars) {
  return std::vector<PrimExpr>(vars.begin(), vars.end());
}

}  // namespace tessel::topi
