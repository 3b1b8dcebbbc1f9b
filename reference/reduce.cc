// Reference evaluation of reductions, ArgMax/ArgMin, CumSum and TopK. Floats accumulate in
// double, integers in int64 (exact).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "ir/error.h"
#include "ir/ops/op_params.h"
#include "ir/ops/shape_util.h"
#include "reference/ref_ops.h"
#include "reference/ref_util.h"

namespace tessel::reference {
namespace {

using graph::Graph;
using graph::ops::node_error;
using Inputs = std::vector<TensorData>;
using Outputs = std::vector<TensorData>;

enum class Reduce { kSum, kMean, kMax, kMin, kProd, kL1, kL2, kLogSum, kLogSumExp, kSumSquare };

template <class T>
T reduce_init(Reduce kind) {
  switch (kind) {
    case Reduce::kMax:
      return std::numeric_limits<T>::lowest();
    case Reduce::kMin:
      return std::numeric_limits<T>::max();
    case Reduce::kProd:
      return 1;
    default:
      return 0;
  }
}

template <class T>
T reduce_step(Reduce kind, T acc, T x) {
  switch (kind) {
    case Reduce::kMax:
      return std::max(acc, x);
    case Reduce::kMin:
      return std::min(acc, x);
    case Reduce::kProd:
      return acc * x;
    case Reduce::kL1:
      return acc + (x < 0 ? -x : x);
    case Reduce::kL2:
    case Reduce::kSumSquare:
      return acc + x * x;
    case Reduce::kLogSumExp:
      return acc + static_cast<T>(std::exp(static_cast<double>(x)));
    default:
      return acc + x;
  }
}

// Writes the finished accumulator of one output element.
template <class T>
void reduce_finish(Reduce kind, TensorData& out, int64_t i, T acc, int64_t count) {
  switch (kind) {
    case Reduce::kMean:
      if constexpr (std::is_integral_v<T>) {
        return set_i(out, i, count ? acc / count : 0);
      } else {
        return set_f(out, i, acc / static_cast<double>(count));
      }
    case Reduce::kL2:
      return set_f(out, i, std::sqrt(static_cast<double>(acc)));
    case Reduce::kLogSum:
    case Reduce::kLogSumExp:
      return set_f(out, i, std::log(static_cast<double>(acc)));
    default:
      return set<T>(out, i, acc);
  }
}

template <class T>
TensorData reduce_as(Reduce kind, const TensorData& x, const std::vector<int64_t>& keep_shape,
                     const std::vector<int64_t>& out_shape) {
  // Broadcasting the kept-dims output over the input maps each input element to its output.
  std::vector<int64_t> target = broadcast_offsets(keep_shape, x.shape());
  int64_t n_out = numel_of(keep_shape);
  std::vector<T> acc(static_cast<size_t>(n_out), reduce_init<T>(kind));
  for (int64_t i = 0; i < x.numel(); ++i)
    acc[target[i]] = reduce_step<T>(kind, acc[target[i]], get<T>(x, i));
  TensorData out(x.dtype(), out_shape);
  int64_t count = n_out ? x.numel() / n_out : 0;
  for (int64_t i = 0; i < n_out; ++i) reduce_finish<T>(kind, out, i, acc[i], count);
  return out;
}

EvalFn reduce(Reduce kind) {
  return [kind](const Graph&, const Node& node, const Inputs& in) -> Outputs {
    const TensorData& x = required_input(in, 0, node);
    auto rank = static_cast<int64_t>(x.shape().size());
    graph::ops::ReduceSpec spec = graph::ops::reduce_spec(node, rank, runtime_params(in));
    std::vector<int64_t> keep_shape = x.shape();
    for (size_t d = 0; d < keep_shape.size(); ++d) {
      if (spec.reduced[d]) keep_shape[d] = 1;
    }
    std::vector<int64_t> out_shape = graph::ops::reduced_shape(x.shape(), spec);
    return {x.dtype().is_float() ? reduce_as<double>(kind, x, keep_shape, out_shape)
                                 : reduce_as<int64_t>(kind, x, keep_shape, out_shape)};
  };
}

// The tensor split as [outer, extent, inner] around `axis`.
struct AxisView {
  int64_t outer = 1, extent = 1, inner = 1;
  AxisView(const std::vector<int64_t>& shape, int64_t axis) {
    for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d) {
      (d < axis ? outer : d == axis ? extent : inner) *= shape[d];
    }
  }
  int64_t at(int64_t o, int64_t k, int64_t i) const { return (o * extent + k) * inner + i; }
};

EvalFn arg_reduce(bool is_max) {
  return [is_max](const Graph&, const Node& node, const Inputs& in) -> Outputs {
    const TensorData& x = required_input(in, 0, node);
    auto rank = static_cast<int64_t>(x.shape().size());
    int64_t axis = graph::ops::normalize_axis(node.attr_int("axis", 0), rank, node);
    bool last = node.attr_int("select_last_index", 0) != 0;
    AxisView v(x.shape(), axis);
    std::vector<int64_t> shape = x.shape();
    shape[axis] = 1;
    TensorData out(DataType::i64(), shape);
    for (int64_t o = 0; o < v.outer; ++o) {
      for (int64_t i = 0; i < v.inner; ++i) {
        int64_t best = 0;
        double best_v = get_f(x, v.at(o, 0, i));
        for (int64_t k = 1; k < v.extent; ++k) {
          double c = get_f(x, v.at(o, k, i));
          bool better = is_max ? (c > best_v || (last && c == best_v))
                               : (c < best_v || (last && c == best_v));
          if (better) best = k, best_v = c;
        }
        out.data<int64_t>()[o * v.inner + i] = best;
      }
    }
    if (node.attr_int("keepdims", 1) == 0) shape.erase(shape.begin() + axis);
    return {out.reshaped(shape)};
  };
}

template <class T>
void cumsum_as(const TensorData& x, TensorData& out, const AxisView& v, bool exclusive,
               bool reverse) {
  for (int64_t o = 0; o < v.outer; ++o) {
    for (int64_t i = 0; i < v.inner; ++i) {
      T sum = 0;
      for (int64_t step = 0; step < v.extent; ++step) {
        int64_t at = v.at(o, reverse ? v.extent - 1 - step : step, i);
        T value = get<T>(x, at);
        if (!exclusive) sum += value;
        set<T>(out, at, sum);
        if (exclusive) sum += value;
      }
    }
  }
}

Outputs eval_cumsum(const Graph&, const Node& node, const Inputs& in) {
  const TensorData& x = required_input(in, 0, node);
  const TensorData& axis_t = required_input(in, 1, node);
  if (axis_t.numel() != 1) throw node_error(node, "axis must be a scalar");
  int64_t axis =
      graph::ops::normalize_axis(get_i(axis_t, 0), static_cast<int64_t>(x.shape().size()), node);
  bool exclusive = node.attr_int("exclusive", 0) != 0, reverse = node.attr_int("reverse", 0) != 0;
  TensorData out(x.dtype(), x.shape());
  AxisView v(x.shape(), axis);
  if (x.dtype().is_float()) {
    cumsum_as<double>(x, out, v, exclusive, reverse);
  } else {
    cumsum_as<int64_t>(x, out, v, exclusive, reverse);
  }
  return {out};
}

Outputs eval_topk(const Graph&, const Node& node, const Inputs& in) {
  const TensorData& x = required_input(in, 0, node);
  int64_t axis = graph::ops::normalize_axis(node.attr_int("axis", -1),
                                            static_cast<int64_t>(x.shape().size()), node);
  int64_t k = graph::ops::topk_k(node, runtime_params(in));
  bool largest = node.attr_int("largest", 1) != 0;
  if (k > x.shape()[axis])
    throw node_error(node, fmt::format("k = {} exceeds the axis size {}", k, x.shape()[axis]));
  AxisView v(x.shape(), axis);
  std::vector<int64_t> shape = x.shape();
  shape[axis] = k;
  TensorData values(x.dtype(), shape), indices(DataType::i64(), shape);
  AxisView ov(shape, axis);
  std::vector<int64_t> order(static_cast<size_t>(v.extent));
  std::vector<double> keys(order.size());
  for (int64_t o = 0; o < v.outer; ++o) {
    for (int64_t i = 0; i < v.inner; ++i) {
      for (int64_t e = 0; e < v.extent; ++e) keys[e] = get_f(x, v.at(o, e, i));
      std::iota(order.begin(), order.end(), 0);
      // Stable: equal values keep the lower index first, as ONNX specifies.
      std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
        return largest ? keys[a] > keys[b] : keys[a] < keys[b];
      });
      for (int64_t j = 0; j < k; ++j) {
        copy_element(values, ov.at(o, j, i), x, v.at(o, order[j], i));
        indices.data<int64_t>()[ov.at(o, j, i)] = order[j];
      }
    }
  }
  return {values, indices};
}

}  // namespace

std::vector<RefOp> reduce_ref_ops() {
  return {
      {OpKind::ReduceSum, reduce(Reduce::kSum)},
      {OpKind::ReduceMean, reduce(Reduce::kMean)},
      {OpKind::ReduceMax, reduce(Reduce::kMax)},
      {OpKind::ReduceMin, reduce(Reduce::kMin)},
      {OpKind::ReduceProd, reduce(Reduce::kProd)},
      {OpKind::ReduceL1, reduce(Reduce::kL1)},
      {OpKind::ReduceL2, reduce(Reduce::kL2)},
      {OpKind::ReduceLogSum, reduce(Reduce::kLogSum)},
      {OpKind::ReduceLogSumExp, reduce(Reduce::kLogSumExp)},
      {OpKind::ReduceSumSquare, reduce(Reduce::kSumSquare)},
      {OpKind::ArgMax, arg_reduce(true)},
      {OpKind::ArgMin, arg_reduce(false)},
      {OpKind::CumSum, eval_cumsum},
      {OpKind::TopK, eval_topk},
  };
}

}  // namespace tessel::reference
