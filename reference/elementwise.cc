// Reference evaluation of elementwise and broadcasting ops. Float dtypes compute in double,
// integer and bool dtypes in int64 (exact), then round or wrap to the output dtype.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

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

template <class R>
void store(TensorData& out, int64_t i, R v) {
  if constexpr (std::is_floating_point_v<R>) {
    set_f(out, i, static_cast<double>(v));
  } else {
    set_i(out, i, static_cast<int64_t>(v));
  }
}

// out[i] = fn(x[i]) with x read as T.
template <class T, class Fn>
TensorData map_unary(const TensorData& x, DataType out_dtype, Fn fn) {
  TensorData out(out_dtype, x.shape());
  for (int64_t i = 0; i < x.numel(); ++i) store(out, i, fn(get<T>(x, i)));
  return out;
}

// out = fn(a, b) broadcast numpy-style, with a and b read as T.
template <class T, class Fn>
TensorData map_binary(const Node& node, const TensorData& a, const TensorData& b,
                      DataType out_dtype, Fn fn) {
  std::vector<int64_t> shape = graph::ops::broadcast_shapes(a.shape(), b.shape(), node);
  std::vector<int64_t> ia = broadcast_offsets(a.shape(), shape),
                       ib = broadcast_offsets(b.shape(), shape);
  TensorData out(out_dtype, shape);
  for (int64_t i = 0; i < out.numel(); ++i) store(out, i, fn(get<T>(a, ia[i]), get<T>(b, ib[i])));
  return out;
}

// Computes in double for float inputs, in int64 otherwise; `fn` is generic over both.
template <class Fn>
TensorData unary_numeric(const TensorData& x, DataType out_dtype, Fn fn) {
  return x.dtype().is_float() ? map_unary<double>(x, out_dtype, fn)
                              : map_unary<int64_t>(x, out_dtype, fn);
}
template <class Fn>
TensorData binary_numeric(const Node& node, const TensorData& a, const TensorData& b,
                          DataType out_dtype, Fn fn) {
  return a.dtype().is_float() || b.dtype().is_float()
             ? map_binary<double>(node, a, b, out_dtype, fn)
             : map_binary<int64_t>(node, a, b, out_dtype, fn);
}

// An op computing out = fn(x) in double; make(node) reads the attributes.
RefOp float_unary(OpKind op, std::function<std::function<double(double)>(const Node&)> make) {
  return {op, [make](const Graph&, const Node& node, const Inputs& in) -> Outputs {
            const TensorData& x = required_input(in, 0, node);
            return {map_unary<double>(x, x.dtype(), make(node))};
          }};
}
RefOp float_unary(OpKind op, double (*fn)(double)) {
  return float_unary(op, [fn](const Node&) { return std::function<double(double)>(fn); });
}

// An op over one input, exact for integers.
template <class Fn>
RefOp numeric_unary(OpKind op, Fn fn) {
  return {op, [fn](const Graph&, const Node& node, const Inputs& in) -> Outputs {
            const TensorData& x = required_input(in, 0, node);
            return {unary_numeric(x, x.dtype(), fn)};
          }};
}

// A broadcasting op over two inputs; `make(node)` gives the generic element function.
template <class Make>
RefOp binary(OpKind op, Make make, bool bool_output = false) {
  return {op, [make, bool_output](const Graph&, const Node& node, const Inputs& in) -> Outputs {
            const TensorData& a = required_input(in, 0, node);
            const TensorData& b = required_input(in, 1, node);
            DataType out = bool_output ? DataType::boolean() : a.dtype();
            return {binary_numeric(node, a, b, out, make(node))};
          }};
}

// Min/Max/Sum/Mean: a left fold of the binary function over all inputs.
template <class Fn>
RefOp variadic(OpKind op, Fn fn, bool mean = false) {
  return {op, [fn, mean](const Graph&, const Node& node, const Inputs& in) -> Outputs {
            TensorData acc = required_input(in, 0, node);
            for (size_t k = 1; k < in.size(); ++k) {
              acc = binary_numeric(node, acc, required_input(in, k, node), acc.dtype(), fn);
            }
            if (mean) {
              double n = static_cast<double>(in.size());
              acc = map_unary<double>(acc, acc.dtype(), [n](double v) { return v / n; });
            }
            return {acc};
          }};
}

template <class T>
constexpr bool is_int_v = std::is_integral_v<T>;

auto int_divisor_check(const Node& node) {
  return [&node](int64_t y) {
    if (y == 0) throw node_error(node, "integer division by zero");
  };
}

Outputs eval_mod(const Graph&, const Node& node, const Inputs& in) {
  bool fmod = node.attr_int("fmod", 0) != 0;
  const TensorData& a = required_input(in, 0, node);
  if (a.dtype().is_float() && !fmod)
    throw node_error(node, "fmod must be 1 for floating-point inputs");
  auto check = int_divisor_check(node);
  return {binary_numeric(node, a, required_input(in, 1, node), a.dtype(), [&](auto x, auto y) {
    using T = decltype(x);
    T r;
    if constexpr (is_int_v<T>) {
      check(y);
      r = x % y;
    } else {
      r = std::fmod(x, y);
    }
    // fmod = 0 (integers only): the result takes the divisor's sign, like Python's %.
    if (!fmod && r != 0 && ((r < 0) != (y < 0))) r += y;
    return r;
  })};
}

Outputs eval_div(const Graph&, const Node& node, const Inputs& in) {
  const TensorData& a = required_input(in, 0, node);
  auto check = int_divisor_check(node);
  return {binary_numeric(node, a, required_input(in, 1, node), a.dtype(), [&](auto x, auto y) {
    if constexpr (is_int_v<decltype(x)>) check(y);
    return x / y;  // integers truncate toward zero, as ONNX specifies
  })};
}

Outputs eval_pow(const Graph&, const Node& node, const Inputs& in) {
  const TensorData& a = required_input(in, 0, node);
  const TensorData& b = required_input(in, 1, node);
  return {binary_numeric(node, a, b, a.dtype(), [](auto x, auto y) {
    using T = decltype(x);
    if constexpr (is_int_v<T>) {
      if (y < 0) return static_cast<T>(std::pow(static_cast<double>(x), static_cast<double>(y)));
      T r = 1;
      for (T base = x; y > 0; y >>= 1, base *= base) {
        if (y & 1) r *= base;
      }
      return r;
    } else {
      return std::pow(x, y);
    }
  })};
}

Outputs eval_bit_shift(const Graph&, const Node& node, const Inputs& in) {
  std::string direction = node.attr_string("direction", "");
  if (direction != "LEFT" && direction != "RIGHT")
    throw node_error(node, "direction must be LEFT or RIGHT");
  bool left = direction == "LEFT";
  const TensorData& a = required_input(in, 0, node);
  return {map_binary<int64_t>(
      node, a, required_input(in, 1, node), a.dtype(), [left](int64_t x, int64_t y) {
        auto ux = static_cast<uint64_t>(x);  // unsigned: right shifts are logical
        if (y < 0 || y >= 64) return int64_t{0};
        return static_cast<int64_t>(left ? ux << y : ux >> y);
      })};
}

Outputs eval_clip(const Graph&, const Node& node, const Inputs& in) {
  const TensorData& x = required_input(in, 0, node);
  const TensorData *lo_t = optional_input(in, 1), *hi_t = optional_input(in, 2);
  if (x.dtype().is_float()) {
    double lo = lo_t ? get_f(*lo_t, 0) : -INFINITY, hi = hi_t ? get_f(*hi_t, 0) : INFINITY;
    return {
        map_unary<double>(x, x.dtype(), [=](double v) { return std::min(std::max(v, lo), hi); })};
  }
  int64_t lo = lo_t ? get_i(*lo_t, 0) : std::numeric_limits<int64_t>::min();
  int64_t hi = hi_t ? get_i(*hi_t, 0) : std::numeric_limits<int64_t>::max();
  return {
      map_unary<int64_t>(x, x.dtype(), [=](int64_t v) { return std::min(std::max(v, lo), hi); })};
}

Outputs eval_where(const Graph&, const Node& node, const Inputs& in) {
  const TensorData& c = required_input(in, 0, node);
  const TensorData& x = required_input(in, 1, node);
  const TensorData& y = required_input(in, 2, node);
  if (x.dtype() != y.dtype()) throw node_error(node, "X and Y must have the same dtype");
  auto shape = graph::ops::broadcast_shapes(
      c.shape(), graph::ops::broadcast_shapes(x.shape(), y.shape(), node), node);
  auto ic = broadcast_offsets(c.shape(), shape), ix = broadcast_offsets(x.shape(), shape),
       iy = broadcast_offsets(y.shape(), shape);
  TensorData out(x.dtype(), shape);
  for (int64_t i = 0; i < out.numel(); ++i) {
    if (get_i(c, ic[i])) {
      copy_element(out, i, x, ix[i]);
    } else {
      copy_element(out, i, y, iy[i]);
    }
  }
  return {out};
}

TensorData cast(const TensorData& x, DataType to) {
  if (x.dtype() == to) return x;
  TensorData out(to, x.shape());
  for (int64_t i = 0; i < x.numel(); ++i) {
    if (x.dtype().is_float() || x.dtype().is_bfloat()) {
      set_f(out, i, get_f(x, i));
    } else {
      set_i(out, i, get_i(x, i));
    }
  }
  return out;
}

Outputs eval_dropout(const Graph&, const Node& node, const Inputs& in) {
  const TensorData& x = required_input(in, 0, node);
  double ratio = 0.5;
  if (const TensorData* r = optional_input(in, 1)) ratio = get_f(*r, 0);
  const TensorData* training = optional_input(in, 2);
  if (training && get_i(*training, 0) && ratio != 0) {
    throw node_error(node, "training-mode Dropout is random and has no reference evaluation");
  }
  TensorData mask(DataType::boolean(), x.shape());
  for (int64_t i = 0; i < mask.numel(); ++i) set_i(mask, i, 1);
  return {x, mask};
}

double sigmoid(double x) { return 1 / (1 + std::exp(-x)); }

}  // namespace

std::vector<RefOp> elementwise_ref_ops() {
  using UnaryFn = std::function<double(double)>;
  std::vector<RefOp> ops = {
      float_unary(OpKind::Sqrt, [](double x) { return std::sqrt(x); }),
      float_unary(OpKind::Reciprocal, [](double x) { return 1 / x; }),
      float_unary(OpKind::Exp, [](double x) { return std::exp(x); }),
      float_unary(OpKind::Log, [](double x) { return std::log(x); }),
      float_unary(OpKind::Erf, [](double x) { return std::erf(x); }),
      float_unary(OpKind::Tanh, [](double x) { return std::tanh(x); }),
      float_unary(OpKind::Sigmoid, sigmoid),
      float_unary(OpKind::HardSwish,
                  [](double x) { return x * std::clamp(x / 6 + 0.5, 0.0, 1.0); }),
      float_unary(OpKind::Softplus,
                  [](double x) { return std::max(x, 0.0) + std::log1p(std::exp(-std::fabs(x))); }),
      float_unary(OpKind::Softsign, [](double x) { return x / (1 + std::abs(x)); }),
      float_unary(OpKind::Floor, [](double x) { return std::floor(x); }),
      float_unary(OpKind::Ceil, [](double x) { return std::ceil(x); }),
      float_unary(OpKind::Round, [](double x) { return std::nearbyint(x); }),  // halves to even
      float_unary(OpKind::Sin, [](double x) { return std::sin(x); }),
      float_unary(OpKind::Cos, [](double x) { return std::cos(x); }),
      float_unary(OpKind::Tan, [](double x) { return std::tan(x); }),
      float_unary(OpKind::Asin, [](double x) { return std::asin(x); }),
      float_unary(OpKind::Acos, [](double x) { return std::acos(x); }),
      float_unary(OpKind::Atan, [](double x) { return std::atan(x); }),
      float_unary(OpKind::Sinh, [](double x) { return std::sinh(x); }),
      float_unary(OpKind::Cosh, [](double x) { return std::cosh(x); }),
      float_unary(OpKind::Asinh, [](double x) { return std::asinh(x); }),
      float_unary(OpKind::Acosh, [](double x) { return std::acosh(x); }),
      float_unary(OpKind::Atanh, [](double x) { return std::atanh(x); }),
      float_unary(OpKind::LeakyRelu,
                  [](const Node& n) -> UnaryFn {
                    double a = n.attr_float("alpha", 0.01);
                    return [a](double x) { return x < 0 ? a * x : x; };
                  }),
      float_unary(OpKind::Elu,
                  [](const Node& n) -> UnaryFn {
                    double a = n.attr_float("alpha", 1.0);
                    return [a](double x) { return x < 0 ? a * (std::exp(x) - 1) : x; };
                  }),
      float_unary(OpKind::Selu,
                  [](const Node& n) -> UnaryFn {
                    double a = n.attr_float("alpha", 1.67326319217681884765625);
                    double gamma = n.attr_float("gamma", 1.05070102214813232421875);
                    return [a, gamma](double x) {
                      return x > 0 ? gamma * x : gamma * a * (std::exp(x) - 1);
                    };
                  }),
      float_unary(OpKind::HardSigmoid,
                  [](const Node& n) -> UnaryFn {
                    double a = n.attr_float("alpha", 0.2), b = n.attr_float("beta", 0.5);
                    return [a, b](double x) { return std::clamp(a * x + b, 0.0, 1.0); };
                  }),
      float_unary(OpKind::Celu,
                  [](const Node& n) -> UnaryFn {
                    double a = n.attr_float("alpha", 1.0);
                    return [a](double x) {
                      return std::max(0.0, x) + std::min(0.0, a * (std::exp(x / a) - 1));
                    };
                  }),
      float_unary(OpKind::ThresholdedRelu,
                  [](const Node& n) -> UnaryFn {
                    double a = n.attr_float("alpha", 1.0);
                    return [a](double x) { return x > a ? x : 0.0; };
                  }),
      float_unary(OpKind::Shrink,
                  [](const Node& n) -> UnaryFn {
                    double bias = n.attr_float("bias", 0.0), lambd = n.attr_float("lambd", 0.5);
                    return [=](double x) {
                      return x < -lambd ? x + bias : x > lambd ? x - bias : 0.0;
                    };
                  }),
      numeric_unary(OpKind::Relu, [](auto x) { return x > 0 ? x : decltype(x){0}; }),
      numeric_unary(OpKind::Neg, [](auto x) { return -x; }),
      numeric_unary(OpKind::Abs, [](auto x) { return x < 0 ? -x : x; }),
      numeric_unary(OpKind::Sign,
                    [](auto x) { return static_cast<decltype(x)>((x > 0) - (x < 0)); }),
      {OpKind::Identity,
       [](const Graph&, const Node& n, const Inputs& in) -> Outputs {
         return {required_input(in, 0, n)};
       }},
      {OpKind::Not,
       [](const Graph&, const Node& n, const Inputs& in) -> Outputs {
         return {map_unary<int64_t>(required_input(in, 0, n), DataType::boolean(),
                                    [](int64_t x) { return !x; })};
       }},
      {OpKind::IsNaN,
       [](const Graph&, const Node& n, const Inputs& in) -> Outputs {
         return {map_unary<double>(required_input(in, 0, n), DataType::boolean(),
                                   [](double x) { return std::isnan(x); })};
       }},
      {OpKind::IsInf,
       [](const Graph&, const Node& n, const Inputs& in) -> Outputs {
         bool pos = n.attr_int("detect_positive", 1) != 0,
              neg = n.attr_int("detect_negative", 1) != 0;
         return {map_unary<double>(required_input(in, 0, n), DataType::boolean(),
                                   [=](double x) { return std::isinf(x) && (x > 0 ? pos : neg); })};
       }},
      {OpKind::Cast,
       [](const Graph&, const Node& n, const Inputs& in) -> Outputs {
         return {cast(required_input(in, 0, n), graph::ops::onnx_dtype(n.attr_int("to", 0), n))};
       }},
      {OpKind::CastLike,
       [](const Graph&, const Node& n, const Inputs& in) -> Outputs {
         return {cast(required_input(in, 0, n), required_input(in, 1, n).dtype())};
       }},
      {OpKind::Clip, eval_clip},
      {OpKind::Dropout, eval_dropout},
      {OpKind::Where, eval_where},
      {OpKind::Div, eval_div},
      {OpKind::Mod, eval_mod},
      {OpKind::Pow, eval_pow},
      {OpKind::BitShift, eval_bit_shift},
      binary(OpKind::Add, [](const Node&) { return [](auto x, auto y) { return x + y; }; }),
      binary(OpKind::Sub, [](const Node&) { return [](auto x, auto y) { return x - y; }; }),
      binary(OpKind::Mul, [](const Node&) { return [](auto x, auto y) { return x * y; }; }),
      binary(OpKind::PRelu,
             [](const Node&) { return [](auto x, auto slope) { return x < 0 ? slope * x : x; }; }),
      binary(
          OpKind::Equal, [](const Node&) { return [](auto x, auto y) { return x == y; }; }, true),
      binary(
          OpKind::Less, [](const Node&) { return [](auto x, auto y) { return x < y; }; }, true),
      binary(
          OpKind::Greater, [](const Node&) { return [](auto x, auto y) { return x > y; }; }, true),
      binary(
          OpKind::LessOrEqual, [](const Node&) { return [](auto x, auto y) { return x <= y; }; },
          true),
      binary(
          OpKind::GreaterOrEqual, [](const Node&) { return [](auto x, auto y) { return x >= y; }; },
          true),
      binary(
          OpKind::And, [](const Node&) { return [](auto x, auto y) { return x && y; }; }, true),
      binary(
          OpKind::Or, [](const Node&) { return [](auto x, auto y) { return x || y; }; }, true),
      binary(
          OpKind::Xor,
          [](const Node&) { return [](auto x, auto y) { return (x != 0) != (y != 0); }; }, true),
      variadic(OpKind::Min, [](auto x, auto y) { return std::min(x, y); }),
      variadic(OpKind::Max, [](auto x, auto y) { return std::max(x, y); }),
      variadic(OpKind::Sum, [](auto x, auto y) { return x + y; }),
      variadic(
          OpKind::Mean, [](auto x, auto y) { return x + y; }, true),
  };
  return ops;
}

}  // namespace tessel::reference
