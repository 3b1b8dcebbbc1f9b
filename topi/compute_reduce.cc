// Reductions as te computes: Reduce* (axes/keepdims/noop_with_empty_axes, decoded by
// ir/ops/op_params.h like type inference), ArgMax/ArgMin (two exact reductions: the extreme value,
// then the first or last index holding it), CumSum (a masked reduction, O(n^2) along the axis) and
// TopK (ranks by counting, O(n^2) along the axis).
#include <fmt/format.h>

#include "ir/error.h"
#include "ir/ops/op_params.h"
#include "ir/ops/shape_util.h"
#include "topi/compute_util.h"
#include "topi/op_compute.h"

namespace tessel::topi {
namespace {

// Where each input dim's index comes from: a reduce axis, or an output index. Each reduction
// stage needs its own map: te reduce axes belong to one compute.
struct ReduceMap {
  std::vector<bool> reduced;
  bool keepdims = true;
  std::vector<te::IterVar> axes;  // one per reduced dim, in order

  ReduceMap(std::vector<bool> r, bool keep, const std::vector<int64_t>& shape)
      : reduced(std::move(r)), keepdims(keep) {
    for (size_t d = 0; d < shape.size(); ++d) {
      if (reduced[d])
        axes.push_back(te::reduce_axis(0, static_cast<int>(shape[d]), fmt::format("k{}", d)));
    }
  }
  std::vector<PrimExpr> input_index(const std::vector<Var>& o) const {
    std::vector<PrimExpr> idx;
    size_t oi = 0, ri = 0;
    for (bool r : reduced) {
      if (r) {
        idx.push_back(axes[ri++]);
        if (keepdims) ++oi;
      } else {
        idx.push_back(o[oi++]);
      }
    }
    return idx;
  }
  // How many input elements each output combines.
  int64_t count(const std::vector<int64_t>& shape) const {
    int64_t n = 1;
    for (size_t d = 0; d < shape.size(); ++d) {
      if (reduced[d]) n *= shape[d];
    }
    return n;
  }
};

enum class Kind { kSum, kMean, kMax, kMin, kProd, kL1, kL2, kLogSum, kLogSumExp, kSumSquare };

PrimExpr c(const PrimExpr& like, double v) { return make_const(like.dtype(), v); }

// The per-element term that is combined (exp of an integer is taken in float64).
PrimExpr element(Kind kind, PrimExpr v) {
  switch (kind) {
    case Kind::kL1:
      return abs(v);
    case Kind::kL2:
    case Kind::kSumSquare:
      return v * v;
    case Kind::kLogSumExp:
      return exp(v.dtype().is_float() ? v : cast(DataType::f64(), v));
    default:
      return v;
  }
}

PrimExpr combine(Kind kind, PrimExpr term, const std::vector<te::IterVar>& axes) {
  switch (kind) {
    case Kind::kMax:
      return te::max(term, axes);
    case Kind::kMin:
      return te::min(term, axes);
    case Kind::kProd: {
      static const te::Reducer prod(
          "prod", [](PrimExpr a, PrimExpr b) { return a * b; },
          [](DataType t) { return make_const(t, 1); });
      return prod(term, axes);
    }
    default:
      return te::sum(term, axes);
  }
}

// The finished value, in `out` dtype, from the combined accumulator of `count` elements.
PrimExpr finish(Kind kind, PrimExpr acc, int64_t count, DataType out) {
  auto in_float = [&](PrimExpr (*f)(PrimExpr)) {
    return cast(out, f(acc.dtype().is_float() ? acc : cast(DataType::f64(), acc)));
  };
  switch (kind) {
    case Kind::kMean:
      if (acc.dtype().is_float()) return acc / c(acc, static_cast<double>(count));
      return trunc_div(acc, c(acc, static_cast<double>(count)));
    case Kind::kL2:
      return in_float(sqrt);
    case Kind::kLogSum:
    case Kind::kLogSumExp:
      return in_float(log);
    default:
      return acc;
  }
}

bool needs_finish(Kind kind) {
  return kind == Kind::kMean || kind == Kind::kL2 || kind == Kind::kLogSum ||
         kind == Kind::kLogSumExp;
}

// log(sum(exp(x - m))) + m with m the max, so that exp cannot overflow.
te::Tensor log_sum_exp(const te::Tensor& x, const graph::ops::ReduceSpec& spec,
                       const std::vector<int64_t>& shape, const std::vector<PrimExpr>& out_shape,
                       const std::string& name) {
  ReduceMap max_map(spec.reduced, spec.keepdims, shape),
      sum_map(spec.reduced, spec.keepdims, shape);
  te::Tensor m = te::compute(
      out_shape,
      [&](const std::vector<Var>& o) { return te::max(x(max_map.input_index(o)), max_map.axes); },
      name + "_max");
  te::Tensor s = te::compute(
      out_shape,
      [&](const std::vector<Var>& o) {
        return te::sum(exp(x(sum_map.input_index(o)) - m(exprs(o))), sum_map.axes);
      },
      name + "_sum");
  return te::compute(
      out_shape,
      [&](const std::vector<Var>& o) {
        PrimExpr mv = m(exprs(o));
        // An all -inf slice has m = -inf; its result is -inf, not NaN.
        return select(mv == min_value(mv.dtype()), mv, log(s(exprs(o))) + mv);
      },
      name);
}

ComputeFn reduce(Kind kind) {
  return [kind](const OpCall& call, const Inputs& in, const std::string& name) -> Outputs {
    const te::Tensor& x = in[0];
    std::vector<int64_t> shape = const_shape(x, call.describe());
    graph::ops::ReduceSpec spec = graph::ops::reduce_spec(call, x.ndim(), call.params());
    ReduceMap map(spec.reduced, spec.keepdims, shape);
    std::vector<PrimExpr> out_shape = output_shape(call, 0);
    if (map.axes.empty()) {  // noop_with_empty_axes: each element is reduced alone
      return {te::compute(
          out_shape,
          [&](const std::vector<Var>& o) {
            return finish(kind, element(kind, x(exprs(o))), 1, x.dtype());
          },
          name)};
    }
    if (kind == Kind::kLogSumExp && x.dtype().is_float())
      return {log_sum_exp(x, spec, shape, out_shape, name)};
    std::string acc_name = needs_finish(kind) ? name + "_acc" : name;
    te::Tensor acc = te::compute(
        out_shape,
        [&](const std::vector<Var>& o) {
          return combine(kind, element(kind, x(map.input_index(o))), map.axes);
        },
        acc_name);
    if (!needs_finish(kind)) return {acc};
    int64_t count = map.count(shape);
    return {te::compute(
        out_shape,
        [&](const std::vector<Var>& o) { return finish(kind, acc(exprs(o)), count, x.dtype()); },
        name)};
  };
}

// ArgMax/ArgMin: the extreme value along the axis, then the smallest (or, with
// select_last_index, largest) position holding it. Exact: no packing of value and index.
ComputeFn arg_reduce(bool is_max) {
  return [is_max](const OpCall& call, const Inputs& in, const std::string& name) -> Outputs {
    const te::Tensor& x = in[0];
    std::vector<int64_t> shape = const_shape(x, call.describe());
    int64_t axis = axis_attr(call, x.ndim(), 0);
    bool last = call.attr_int("select_last_index", 0) != 0;
    std::vector<bool> reduced(shape.size(), false);
    reduced[axis] = true;
    bool keepdims = call.attr_int("keepdims", 1) != 0;
    std::vector<PrimExpr> out_shape = output_shape(call, 0);
    ReduceMap vmap(reduced, keepdims, shape);
    te::Tensor best = te::compute(
        out_shape,
        [&](const std::vector<Var>& o) {
          PrimExpr v = x(vmap.input_index(o));
          return is_max ? te::max(v, vmap.axes) : te::min(v, vmap.axes);
        },
        name + "_value");
    ReduceMap imap(reduced, keepdims, shape);
    const DataType i64 = DataType::i64();
    return {te::compute(
        out_shape,
        [&](const std::vector<Var>& o) {
          PrimExpr k = cast(i64, imap.axes[0]);
          PrimExpr hit = x(imap.input_index(o)) == best(exprs(o));
          if (last) return te::max(select(hit, k, make_const(i64, -1)), imap.axes);
          return te::min(select(hit, k, make_const(i64, static_cast<double>(shape[axis]))),
                         imap.axes);
        },
        name)};
  };
}

// CumSum: out[.., i, ..] = sum of x[.., k, ..] over k <= i (k < i exclusive; k >= i / k > i
// reversed).
Outputs cumsum(const OpCall& call, const Inputs& in, const std::string& name) {
  const te::Tensor& x = in[0];
  const graph::TensorData& axis_t = call.required_constant(1, "axis");
  if (axis_t.numel() != 1) throw graph::ops::node_error(call, "axis must be a scalar");
  int64_t axis = graph::ops::normalize_axis(axis_t.get_int(0), x.ndim(), call);
  std::vector<int64_t> shape = const_shape(x, call.describe());
  bool exclusive = call.attr_int("exclusive", 0) != 0, reverse = call.attr_int("reverse", 0) != 0;
  te::IterVar k = te::reduce_axis(0, static_cast<int>(shape[axis]), "k");
  return {te::compute(
      x.shape(),
      [&](const std::vector<Var>& o) {
        std::vector<PrimExpr> idx = exprs(o);
        idx[axis] = k;
        PrimExpr i = o[axis];
        PrimExpr kv = k;
        PrimExpr take = reverse ? (exclusive ? kv > i : kv >= i) : (exclusive ? kv < i : kv <= i);
        return te::sum(x(idx), {k}, take);
      },
      name)};
}

// TopK without a sort: the rank of each element along the axis is the number of elements ordered
// before it (larger, or smaller with largest=0; equal ones with a lower index first, the stable
// order ONNX specifies), an O(n^2) count; output slot j takes the element of rank j. The output is
// always sorted, which sorted=0 allows.
Outputs topk(const OpCall& call, const Inputs& in, const std::string& name) {
  const te::Tensor& x = in[0];
  std::vector<int64_t> shape = const_shape(x, call.describe());
  int64_t axis = axis_attr(call, x.ndim(), -1), n = shape[axis];
  bool largest = call.attr_int("largest", 1) != 0;
  const DataType i32 = DataType::i32(), i64 = DataType::i64();
  te::IterVar r = te::reduce_axis(0, static_cast<int>(n), "r");
  te::Tensor rank = te::compute(
      x.shape(),
      [&](const std::vector<Var>& o) {
        std::vector<PrimExpr> at = exprs(o);
        PrimExpr v = x(at);
        at[axis] = r;
        PrimExpr other = x(at);
        PrimExpr ahead = largest ? other > v : other < v;
        return te::sum(make_const(i32, 1), {r}, ahead || (other == v && PrimExpr(r) < o[axis]));
      },
      name + "_rank");
  // The position whose rank is the slot (n if none: only NaNs leave a rank unclaimed).
  te::IterVar s = te::reduce_axis(0, static_cast<int>(n), "s");
  std::vector<PrimExpr> out_shape = output_shape(call, 0);
  te::Tensor indices = te::compute(
      out_shape,
      [&](const std::vector<Var>& o) {
        std::vector<PrimExpr> at = exprs(o);
        at[axis] = s;
        return te::min(
            select(rank(at) == o[axis], cast(i64, s), make_const(i64, static_cast<double>(n))),
            {s});
      },
      name + "_indices");
  te::Tensor values = te::compute(
      out_shape,
      [&](const std::vector<Var>& o) {
        std::vector<PrimExpr> at = exprs(o);
        at[axis] = clamp_index(indices(exprs(o)), n);
        return x(at);
      },
      name);
  return {values, indices};
}

}  // namespace

std::vector<OpCompute> reduce_computes() {
  return {
      {OpKind::ReduceSum, reduce(Kind::kSum)},
      {OpKind::ReduceMean, reduce(Kind::kMean)},
      {OpKind::ReduceMax, reduce(Kind::kMax)},
      {OpKind::ReduceMin, reduce(Kind::kMin)},
      {OpKind::ReduceProd, reduce(Kind::kProd)},
      {OpKind::ReduceL1, reduce(Kind::kL1)},
      {OpKind::ReduceL2, reduce(Kind::kL2)},
      {OpKind::ReduceLogSum, reduce(Kind::kLogSum)},
      {OpKind::ReduceLogSumExp, reduce(Kind::kLogSumExp)},
      {OpKind::ReduceSumSquare, reduce(Kind::kSumSquare)},
      {OpKind::ArgMax, arg_reduce(true)},
      {OpKind::ArgMin, arg_reduce(false)},
      {OpKind::CumSum, cumsum},
      {OpKind::TopK, topk},
  };
}

}  // namespace tessel::topi
