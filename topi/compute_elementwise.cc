// Elementwise and broadcasting ONNX operators as te computes.
#include <fmt/format.h>

#include <cmath>
#include <optional>

#include "ir/error.h"
#include "ir/ops/op_params.h"
#include "ir/ops/shape_util.h"
#include "topi/broadcast.h"
#include "topi/compute_util.h"
#include "topi/op_compute.h"

namespace tessel::topi {
namespace {

OpCompute unary_op(OpKind op, std::function<PrimExpr(const OpCall&, PrimExpr)> f) {
  return {
      op, [f](const OpCall& call, const std::vector<te::Tensor>& in, const std::string& name) {
        return std::vector<te::Tensor>{unary(in[0], [&](PrimExpr x) { return f(call, x); }, name)};
      }};
}

OpCompute binary_op(OpKind op, std::function<PrimExpr(PrimExpr, PrimExpr)> f) {
  return {op, [f](const OpCall&, const std::vector<te::Tensor>& in, const std::string& name) {
            return std::vector<te::Tensor>{binary(in[0], in[1], f, name)};
          }};
}

PrimExpr pow_expr(PrimExpr a, PrimExpr b) {
  if (a.dtype().is_float()) return pow(a, cast(a.dtype(), b));
  // Integer bases: float64 pow is exact for results below 2^53; the result keeps the base's type.
  DataType f64 = DataType::f64().with_lanes(a.dtype().lanes());
  return cast(a.dtype(), pow(cast(f64, a), cast(f64, b)));
}

// The exponent of a float Pow when it is one constant integer in [-2, 4] that leaves the base's
// shape as it is (one element, of no higher rank than the base).
std::optional<int> small_integer_exponent(const OpCall& call, const te::Tensor& base) {
  const graph::TensorData* e = call.constant_if_known(1);
  if (!base.dtype().is_float() || !e || e->numel() != 1 || e->shape().size() > base.shape().size())
    return std::nullopt;
  double v = e->get_double(0);
  if (v != std::floor(v) || v < -2 || v > 4) return std::nullopt;
  return static_cast<int>(v);
}

// Pow: by a small constant integer exponent as multiplies (of 1 / x for a negative one),
// exact at every IEEE edge that pow has (x^0 = 1 for NaN too, (-0)^-1 = -inf). Exported models
// square that way (RMSNorm's Pow(x, 2), GELU's Pow(x, 3)); their exponent is a weight that LLVM
// cannot see, so pow would call powf per lane.
OpCompute pow_op() {
  return {OpKind::Pow,
          [](const OpCall& call, const std::vector<te::Tensor>& in, const std::string& name) {
            std::optional<int> n = small_integer_exponent(call, in[0]);
            if (!n) return std::vector<te::Tensor>{binary(in[0], in[1], pow_expr, name)};
            // A negative exponent powers 1 / x: 1 / (x * x) would be 0 where x * x overflows
            // and x^-2 is still a float (x = 1e20).
            auto power = [n = *n](PrimExpr x) {
              PrimExpr one = make_const(x.dtype(), 1);
              if (n == 0) return one;
              PrimExpr b = n < 0 ? one / x : x;
              PrimExpr p = std::abs(n) == 1 ? b : b * b;
              if (std::abs(n) == 3) p = p * b;
              if (std::abs(n) == 4) p = p * p;
              return p;
            };
            return std::vector<te::Tensor>{unary(in[0], power, name)};
          }};
}

// Sum/Min/Max/Mean over any number of broadcast inputs.
OpCompute variadic_op(OpKind op, std::function<PrimExpr(PrimExpr, PrimExpr)> f, bool mean) {
  return {op, [f, mean](const OpCall&, const std::vector<te::Tensor>& in, const std::string& name) {
            te::Tensor acc = in[0];
            for (size_t i = 1; i < in.size(); ++i)
              acc = binary(acc, in[i], f, fmt::format("{}_{}", name, i));
            if (mean || in.size() == 1) {
              double n = static_cast<double>(in.size());
              acc = unary(
                  acc, [&](PrimExpr x) { return mean ? x / make_const(x.dtype(), n) : x; }, name);
            }
            return std::vector<te::Tensor>{acc};
          }};
}

PrimExpr c(const PrimExpr& like, double v) { return make_const(like.dtype(), v); }

// f computed in float64 and rounded back: the composed transcendentals below lose too much to
// cancellation in float32.
PrimExpr via_f64(const PrimExpr& x, const std::function<PrimExpr(PrimExpr)>& f) {
  if (x.dtype() == DataType::f64()) return f(x);
  return cast(x.dtype(), f(cast(DataType::f64(), x)));
}

// atan for float64 (te has no intrinsic): reduce to |u| <= tan(pi/8) with atan(x) = pi/2 -
// atan(1/x) and atan(t) = pi/4 + atan((t-1)/(t+1)), then 15 terms of the odd series (error <
// 1e-12).
PrimExpr atan_f64(const PrimExpr& x) {
  constexpr double kPi = 3.14159265358979323846;
  PrimExpr ax = abs(x);
  PrimExpr big = ax > c(x, 1);
  PrimExpr t = select(big, c(x, 1) / ax, ax);
  PrimExpr mid = t > c(x, 0.41421356237309503);
  PrimExpr u = select(mid, (t - c(x, 1)) / (t + c(x, 1)), t);
  PrimExpr z = u * u;
  PrimExpr p = c(x, 1.0 / 29);  // Horner over (-1)^k z^k / (2k + 1), k = 14 down to 0
  for (int k = 13; k >= 0; --k) p = c(x, (k % 2 ? -1.0 : 1.0) / (2 * k + 1)) + z * p;
  PrimExpr r = u * p + select(mid, c(x, kPi / 4), c(x, 0));
  r = select(big, c(x, kPi / 2) - r, r);
  return select(x < c(x, 0), -r, r);
}

// An integer divisor that is never 0 (0 stays undefined in ONNX but must not trap here).
PrimExpr safe_divisor(const PrimExpr& b) {
  return b.dtype().is_float() ? b : select(b == make_zero(b.dtype()), make_const(b.dtype(), 1), b);
}

OpCompute mod_op() {
  return {OpKind::Mod,
          [](const OpCall& call, const std::vector<te::Tensor>& in, const std::string& name) {
            bool fmod = call.attr_int("fmod", 0) != 0;
            if (in[0].dtype().is_float() && !fmod) {
              throw graph::ops::node_error(call, "fmod must be 1 for floating-point inputs");
            }
            return std::vector<te::Tensor>{binary(
                in[0], in[1],
                [fmod](PrimExpr a, PrimExpr b) {
                  if (a.dtype().is_float()) {
                    return cast(a.dtype(), [](PrimExpr x, PrimExpr y) {
                      return x - trunc(x / y) * y;
                    }(cast(DataType::f64(), a), cast(DataType::f64(), b)));
                  }
                  b = safe_divisor(b);
                  // fmod = 1 takes the dividend's sign (C's %); fmod = 0 the divisor's (Python's
                  // %).
                  return fmod ? a - trunc_div(a, b) * b : floormod(a, b);
                },
                name)};
          }};
}

// Shifts as multiply/divide by 2^y in uint64, so every integer width wraps like the reference's
// 64-bit shift; y outside [0, 64) gives 0.
OpCompute bit_shift_op() {
  return {OpKind::BitShift,
          [](const OpCall& call, const std::vector<te::Tensor>& in, const std::string& name) {
            std::string direction = call.attr_string("direction", "");
            if (direction != "LEFT" && direction != "RIGHT") {
              throw graph::ops::node_error(call, "direction must be LEFT or RIGHT");
            }
            bool left = direction == "LEFT";
            return std::vector<te::Tensor>{binary(
                in[0], in[1],
                [left](PrimExpr x, PrimExpr y) {
                  const DataType u64 = DataType::u64();
                  PrimExpr y64 = cast(DataType::i64(), y);
                  PrimExpr in_range =
                      y64 >= make_zero(y64.dtype()) && y64 < make_const(y64.dtype(), 64);
                  PrimExpr shift =
                      min(max(y64, make_zero(y64.dtype())), make_const(y64.dtype(), 63));
                  PrimExpr scale = cast(u64, exp2(cast(DataType::f64(), shift)));
                  PrimExpr r = left ? cast(u64, x) * scale : floordiv(cast(u64, x), scale);
                  return select(in_range, cast(x.dtype(), r), make_zero(x.dtype()));
                },
                name)};
          }};
}

OpCompute where_op() {
  return {OpKind::Where,
          [](const OpCall&, const std::vector<te::Tensor>& in, const std::string& name) {
            auto shape = broadcast_shape(broadcast_shape(in[0].shape(), in[1].shape(), name),
                                         in[2].shape(), name);
            return std::vector<te::Tensor>{te::compute(
                shape,
                [&](const std::vector<Var>& i) {
                  return select(in[0](broadcast_index(in[0], i)), in[1](broadcast_index(in[1], i)),
                                in[2](broadcast_index(in[2], i)));
                },
                name)};
          }};
}

// Cast (to the `to` attribute's type) and CastLike (to input 1's type). Casting to bool tests != 0.
OpCompute cast_op(OpKind op) {
  return {op, [op](const OpCall& call, const std::vector<te::Tensor>& in, const std::string& name) {
            DataType to = op == OpKind::Cast ? graph::ops::onnx_dtype(call.attr_int("to", 0), call)
                                             : in[1].dtype();
            return std::vector<te::Tensor>{
                unary(in[0], [to](PrimExpr x) { return cast(to, x); }, name)};
          }};
}

// Clip's bounds: optional constant inputs 1 (min) and 2 (max).
double clip_bound(const OpCall& call, size_t input, double def) {
  const graph::TensorData* t = call.constant(input, "a Clip bound");
  return t ? t->get_double(0) : def;
}

}  // namespace

std::vector<OpCompute> elementwise_computes() {
  std::vector<OpCompute> ops = {
      binary_op(OpKind::Add, [](PrimExpr a, PrimExpr b) { return a + b; }),
      binary_op(OpKind::Sub, [](PrimExpr a, PrimExpr b) { return a - b; }),
      binary_op(OpKind::Mul, [](PrimExpr a, PrimExpr b) { return a * b; }),
      binary_op(OpKind::Div,
                [](PrimExpr a, PrimExpr b) {
                  // ONNX integer division truncates toward zero.
                  return a.dtype().is_float() ? a / b : trunc_div(a, safe_divisor(b));
                }),
      pow_op(),
      binary_op(OpKind::PRelu,
                [](PrimExpr x, PrimExpr s) { return select(x < c(x, 0), x * s, x); }),
      unary_op(OpKind::Relu, [](const OpCall&, PrimExpr x) { return max(x, c(x, 0)); }),
      unary_op(OpKind::Neg, [](const OpCall&, PrimExpr x) { return -x; }),
      unary_op(OpKind::Abs, [](const OpCall&, PrimExpr x) { return abs(x); }),
      unary_op(OpKind::Exp, [](const OpCall&, PrimExpr x) { return exp(x); }),
      unary_op(OpKind::Log, [](const OpCall&, PrimExpr x) { return log(x); }),
      unary_op(OpKind::Sqrt, [](const OpCall&, PrimExpr x) { return sqrt(x); }),
      unary_op(OpKind::Reciprocal, [](const OpCall&, PrimExpr x) { return c(x, 1) / x; }),
      unary_op(OpKind::Tanh, [](const OpCall&, PrimExpr x) { return tanh(x); }),
      unary_op(OpKind::Sigmoid, [](const OpCall&, PrimExpr x) { return sigmoid(x); }),
      unary_op(OpKind::Erf, [](const OpCall&, PrimExpr x) { return erf(x); }),
      unary_op(OpKind::Floor, [](const OpCall&, PrimExpr x) { return floor(x); }),
      unary_op(OpKind::Ceil, [](const OpCall&, PrimExpr x) { return ceil(x); }),
      unary_op(OpKind::Round, [](const OpCall&, PrimExpr x) { return round(x); }),
      unary_op(OpKind::Sin, [](const OpCall&, PrimExpr x) { return sin(x); }),
      unary_op(OpKind::Cos, [](const OpCall&, PrimExpr x) { return cos(x); }),
      unary_op(OpKind::Sign,
               [](const OpCall&, PrimExpr x) {
                 return select(x > c(x, 0), c(x, 1), select(x < c(x, 0), c(x, -1), c(x, 0)));
               }),
      unary_op(OpKind::Identity, [](const OpCall&, PrimExpr x) { return x; }),
      unary_op(OpKind::LeakyRelu,
               [](const OpCall& n, PrimExpr x) {
                 return select(x < c(x, 0), x * c(x, n.attr_float("alpha", 0.01)), x);
               }),
      unary_op(OpKind::Elu,
               [](const OpCall& n, PrimExpr x) {
                 return select(x < c(x, 0), c(x, n.attr_float("alpha", 1.0)) * (exp(x) - c(x, 1)),
                               x);
               }),
      unary_op(OpKind::Selu,
               [](const OpCall& n, PrimExpr x) {
                 PrimExpr alpha = c(x, n.attr_float("alpha", 1.67326319217681884765625));
                 PrimExpr gamma = c(x, n.attr_float("gamma", 1.05070102214813232421875));
                 return select(x > c(x, 0), gamma * x, gamma * (alpha * exp(x) - alpha));
               }),
      unary_op(OpKind::HardSigmoid,
               [](const OpCall& n, PrimExpr x) {
                 PrimExpr y =
                     c(x, n.attr_float("alpha", 0.2)) * x + c(x, n.attr_float("beta", 0.5));
                 return max(c(x, 0), min(c(x, 1), y));
               }),
      unary_op(OpKind::HardSwish,
               [](const OpCall&, PrimExpr x) {
                 return x * max(c(x, 0), min(c(x, 1), x * c(x, 1.0 / 6) + c(x, 0.5)));
               }),
      // log(e^x + 1) as max(x, 0) + log(e^-|x| + 1): e^x overflows float32 past x = 88.7.
      unary_op(
          OpKind::Softplus,
          [](const OpCall&, PrimExpr x) { return max(x, c(x, 0)) + log(exp(-abs(x)) + c(x, 1)); }),
      unary_op(OpKind::Softsign, [](const OpCall&, PrimExpr x) { return x / (abs(x) + c(x, 1)); }),
      unary_op(OpKind::Tan,
               [](const OpCall&, PrimExpr x) {
                 return via_f64(x, [](PrimExpr v) { return sin(v) / cos(v); });
               }),
      unary_op(OpKind::Atan, [](const OpCall&, PrimExpr x) { return via_f64(x, atan_f64); }),
      unary_op(OpKind::Asin,
               [](const OpCall&, PrimExpr x) {
                 return via_f64(x, [](PrimExpr v) { return atan_f64(v / sqrt(c(v, 1) - v * v)); });
               }),
      unary_op(OpKind::Acos,
               [](const OpCall&, PrimExpr x) {
                 return via_f64(x, [](PrimExpr v) {
                   return c(v, 2) * atan_f64(sqrt((c(v, 1) - v) / (c(v, 1) + v)));
                 });
               }),
      unary_op(OpKind::Sinh,
               [](const OpCall&, PrimExpr x) {
                 return via_f64(x, [](PrimExpr v) { return (exp(v) - exp(-v)) * c(v, 0.5); });
               }),
      unary_op(OpKind::Cosh,
               [](const OpCall&, PrimExpr x) {
                 return via_f64(x, [](PrimExpr v) { return (exp(v) + exp(-v)) * c(v, 0.5); });
               }),
      unary_op(OpKind::Asinh,
               [](const OpCall&, PrimExpr x) {
                 return via_f64(x, [](PrimExpr v) {
                   PrimExpr r =
                       log(abs(v) + sqrt(v * v + c(v, 1)));  // odd: no cancellation for v < 0
                   return select(v < c(v, 0), -r, r);
                 });
               }),
      unary_op(OpKind::Acosh,
               [](const OpCall&, PrimExpr x) {
                 return via_f64(x, [](PrimExpr v) { return log(v + sqrt(v * v - c(v, 1))); });
               }),
      unary_op(OpKind::Atanh,
               [](const OpCall&, PrimExpr x) {
                 return via_f64(
                     x, [](PrimExpr v) { return c(v, 0.5) * log((c(v, 1) + v) / (c(v, 1) - v)); });
               }),
      unary_op(OpKind::Celu,
               [](const OpCall& n, PrimExpr x) {
                 PrimExpr alpha = c(x, n.attr_float("alpha", 1.0));
                 return max(x, c(x, 0)) + min(c(x, 0), alpha * (exp(x / alpha) - c(x, 1)));
               }),
      unary_op(OpKind::ThresholdedRelu,
               [](const OpCall& n, PrimExpr x) {
                 return select(x > c(x, n.attr_float("alpha", 1.0)), x, c(x, 0));
               }),
      unary_op(OpKind::Shrink,
               [](const OpCall& n, PrimExpr x) {
                 double bias = n.attr_float("bias", 0.0), lambd = n.attr_float("lambd", 0.5);
                 // Integers compare against the float lambd exactly, in float64.
                 return via_f64(x, [=](PrimExpr v) {
                   return select(v < c(v, -lambd), v + c(v, bias),
                                 select(v > c(v, lambd), v - c(v, bias), c(v, 0)));
                 });
               }),
      unary_op(OpKind::Not, [](const OpCall&, PrimExpr x) { return !x; }),
      unary_op(OpKind::IsNaN, [](const OpCall&, PrimExpr x) { return isnan(x); }),
      unary_op(OpKind::IsInf,
               [](const OpCall& n, PrimExpr x) {
                 bool pos = n.attr_int("detect_positive", 1) != 0,
                      neg = n.attr_int("detect_negative", 1) != 0;
                 PrimExpr no = make_const(DataType::boolean(), 0);
                 return (pos ? x == max_value(x.dtype()) : no) ||
                        (neg ? x == min_value(x.dtype()) : no);
               }),
      binary_op(OpKind::Equal, [](PrimExpr a, PrimExpr b) { return a == b; }),
      binary_op(OpKind::Less, [](PrimExpr a, PrimExpr b) { return a < b; }),
      binary_op(OpKind::Greater, [](PrimExpr a, PrimExpr b) { return a > b; }),
      binary_op(OpKind::LessOrEqual, [](PrimExpr a, PrimExpr b) { return a <= b; }),
      binary_op(OpKind::GreaterOrEqual, [](PrimExpr a, PrimExpr b) { return a >= b; }),
      binary_op(OpKind::And, [](PrimExpr a, PrimExpr b) { return a && b; }),
      binary_op(OpKind::Or, [](PrimExpr a, PrimExpr b) { return a || b; }),
      binary_op(OpKind::Xor, [](PrimExpr a, PrimExpr b) { return a != b; }),
      mod_op(),
      bit_shift_op(),
      where_op(),
      cast_op(OpKind::Cast),
      cast_op(OpKind::CastLike),
      variadic_op(
          OpKind::Sum, [](PrimExpr a, PrimExpr b) { return a + b; }, false),
      variadic_op(
          OpKind::Mean, [](PrimExpr a, PrimExpr b) { return a + b; }, true),
      variadic_op(
          OpKind::Max, [](PrimExpr a, PrimExpr b) { return max(a, b); }, false),
      variadic_op(
          OpKind::Min, [](PrimExpr a, PrimExpr b) { return min(a, b); }, false),
  };
  ops.push_back({OpKind::Clip, [](const OpCall& call, const std::vector<te::Tensor>& in,
                                  const std::string& name) {
                   double lo = clip_bound(call, 1, -INFINITY), hi = clip_bound(call, 2, INFINITY);
                   return std::vector<te::Tensor>{unary(
                       in[0],
                       [&](PrimExpr x) {
                         if (std::isfinite(lo)) x = max(x, c(x, lo));
                         if (std::isfinite(hi)) x = min(x, c(x, hi));
                         return x;
                       },
                       name)};
                 }});
  return ops;
}

}  // namespace tessel::topi
