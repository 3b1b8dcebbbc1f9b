// Elementwise and broadcasting ONNX operators as te computes.
#include <fmt/format.h>

#include <cmath>

#include "ir/error.h"
#include "topi/broadcast.h"
#include "topi/op_compute.h"

namespace tessel::topi {
namespace {

using graph::Graph;
using graph::Node;

OpCompute unary_op(std::string op, std::function<PrimExpr(const Node&, PrimExpr)> f) {
  return {op, [f](const Graph&, const Node& node, const std::vector<te::Tensor>& in, const std::string& name) {
            return std::vector<te::Tensor>{unary(in[0], [&](PrimExpr x) { return f(node, x); }, name)};
          }};
}

OpCompute binary_op(std::string op, std::function<PrimExpr(PrimExpr, PrimExpr)> f) {
  return {op, [f](const Graph&, const Node&, const std::vector<te::Tensor>& in, const std::string& name) {
            return std::vector<te::Tensor>{binary(in[0], in[1], f, name)};
          }};
}

// Sum/Min/Max/Mean over any number of broadcast inputs.
OpCompute variadic_op(std::string op, std::function<PrimExpr(PrimExpr, PrimExpr)> f, bool mean) {
  return {op, [f, mean](const Graph&, const Node&, const std::vector<te::Tensor>& in, const std::string& name) {
            te::Tensor acc = in[0];
            for (size_t i = 1; i < in.size(); ++i) acc = binary(acc, in[i], f, fmt::format("{}_{}", name, i));
            if (mean || in.size() == 1) {
              double n = static_cast<double>(in.size());
              acc = unary(acc, [&](PrimExpr x) { return mean ? x / make_const(x.dtype(), n) : x; }, name);
            }
            return std::vector<te::Tensor>{acc};
          }};
}

PrimExpr c(const PrimExpr& like, double v) { return make_const(like.dtype(), v); }

// Clip's bounds: attributes before opset 11, optional constant inputs after.
double clip_bound(const Graph& g, const Node& node, size_t input, const char* attr, double def) {
  if (g.opset < 11) return node.attr_float(attr, def);
  if (input >= node.inputs.size() || node.inputs[input] == graph::kNoValue) return def;
  const auto& v = g.value(node.inputs[input]).constant;
  if (!v) throw Error(fmt::format("{}: Clip bounds must be constants", node.describe()));
  return v->get_double(0);
}

}  // namespace

std::vector<OpCompute> elementwise_computes() {
  auto is_float = [](const PrimExpr& x) { return x.dtype().is_float(); };
  std::vector<OpCompute> ops = {
      binary_op("Add", [](PrimExpr a, PrimExpr b) { return a + b; }),
      binary_op("Sub", [](PrimExpr a, PrimExpr b) { return a - b; }),
      binary_op("Mul", [](PrimExpr a, PrimExpr b) { return a * b; }),
      binary_op("Div", [is_float](PrimExpr a, PrimExpr b) {
        // ONNX integer division truncates toward zero.
        if (is_float(a)) return a / b;
        PrimExpr q = floordiv(a, b);
        return select(q < 0 && floormod(a, b) != 0, q + 1, q);
      }),
      binary_op("Pow", [](PrimExpr a, PrimExpr b) { return pow(a, cast(a.dtype(), b)); }),
      binary_op("PRelu", [](PrimExpr x, PrimExpr s) { return select(x < c(x, 0), x * s, x); }),
      unary_op("Relu", [](const Node&, PrimExpr x) { return max(x, c(x, 0)); }),
      unary_op("Neg", [](const Node&, PrimExpr x) { return -x; }),
      unary_op("Abs", [](const Node&, PrimExpr x) { return abs(x); }),
      unary_op("Exp", [](const Node&, PrimExpr x) { return exp(x); }),
      unary_op("Log", [](const Node&, PrimExpr x) { return log(x); }),
      unary_op("Sqrt", [](const Node&, PrimExpr x) { return sqrt(x); }),
      unary_op("Reciprocal", [](const Node&, PrimExpr x) { return c(x, 1) / x; }),
      unary_op("Tanh", [](const Node&, PrimExpr x) { return tanh(x); }),
      unary_op("Sigmoid", [](const Node&, PrimExpr x) { return sigmoid(x); }),
      unary_op("Erf", [](const Node&, PrimExpr x) { return erf(x); }),
      unary_op("Floor", [](const Node&, PrimExpr x) { return floor(x); }),
      unary_op("Ceil", [](const Node&, PrimExpr x) { return ceil(x); }),
      unary_op("Round", [](const Node&, PrimExpr x) { return round(x); }),
      unary_op("Sin", [](const Node&, PrimExpr x) { return sin(x); }),
      unary_op("Cos", [](const Node&, PrimExpr x) { return cos(x); }),
      unary_op("Sign", [](const Node&, PrimExpr x) {
        return select(x > c(x, 0), c(x, 1), select(x < c(x, 0), c(x, -1), c(x, 0)));
      }),
      unary_op("Identity", [](const Node&, PrimExpr x) { return x; }),
      unary_op("LeakyRelu", [](const Node& n, PrimExpr x) {
        return select(x < c(x, 0), x * c(x, n.attr_float("alpha", 0.01)), x);
      }),
      unary_op("Elu", [](const Node& n, PrimExpr x) {
        return select(x < c(x, 0), c(x, n.attr_float("alpha", 1.0)) * (exp(x) - c(x, 1)), x);
      }),
      unary_op("Selu", [](const Node& n, PrimExpr x) {
        PrimExpr alpha = c(x, n.attr_float("alpha", 1.67326319217681884765625));
        PrimExpr gamma = c(x, n.attr_float("gamma", 1.05070102214813232421875));
        return select(x > c(x, 0), gamma * x, gamma * (alpha * exp(x) - alpha));
      }),
      unary_op("HardSigmoid", [](const Node& n, PrimExpr x) {
        PrimExpr y = c(x, n.attr_float("alpha", 0.2)) * x + c(x, n.attr_float("beta", 0.5));
        return max(c(x, 0), min(c(x, 1), y));
      }),
      unary_op("HardSwish", [](const Node&, PrimExpr x) {
        return x * max(c(x, 0), min(c(x, 1), x * c(x, 1.0 / 6) + c(x, 0.5)));
      }),
      unary_op("Softplus", [](const Node&, PrimExpr x) { return log(exp(x) + c(x, 1)); }),
      unary_op("Softsign", [](const Node&, PrimExpr x) { return x / (abs(x) + c(x, 1)); }),
      variadic_op("Sum", [](PrimExpr a, PrimExpr b) { return a + b; }, false),
      variadic_op("Mean", [](PrimExpr a, PrimExpr b) { return a + b; }, true),
      variadic_op("Max", [](PrimExpr a, PrimExpr b) { return max(a, b); }, false),
      variadic_op("Min", [](PrimExpr a, PrimExpr b) { return min(a, b); }, false),
  };
  ops.push_back({"Clip", [](const Graph& g, const Node& node, const std::vector<te::Tensor>& in, const std::string& name) {
                   double lo = clip_bound(g, node, 1, "min", -INFINITY), hi = clip_bound(g, node, 2, "max", INFINITY);
                   return std::vector<te::Tensor>{unary(in[0], [&](PrimExpr x) {
                     if (std::isfinite(lo)) x = max(x, c(x, lo));
                     if (std::isfinite(hi)) x = min(x, c(x, hi));
                     return x;
                   }, name)};
                 }});
  return ops;
}

}  // namespace tessel::topi
