// Type inference for elementwise and broadcasting ops: math, activations, comparisons, logic,
// Where, Clip, Cast/CastLike, Identity and Dropout.
#include <fmt/format.h>

#include "ir/ops/op_defs.h"
#include "ir/ops/op_params.h"
#include "ir/ops/shape_util.h"

namespace tessel::graph::ops {
namespace {

enum class Operand { kAny, kFloat, kBool, kInteger };

bool accepts(Operand kind, DataType t) {
  switch (kind) {
    case Operand::kAny:
      return true;
    case Operand::kFloat:
      return t.is_float();
    case Operand::kBool:
      return t.is_bool();
    case Operand::kInteger:
      return t.is_int() || t.is_uint();
  }
  return false;
}

const char* operand_name(Operand kind) {
  switch (kind) {
    case Operand::kAny:
      return "any";
    case Operand::kFloat:
      return "a float";
    case Operand::kBool:
      return "a bool";
    case Operand::kInteger:
      return "an integer";
  }
  return "?";
}

void check_operand(const Node& node, size_t i, DataType t, Operand kind) {
  if (!accepts(kind, t)) {
    throw node_error(
        node, fmt::format("input {} is {} but must be {} tensor", i, t.str(), operand_name(kind)));
  }
}

// One output like input 0, e.g. Relu.
InferTypeFn unary(Operand kind, std::optional<DataType> out_dtype = std::nullopt) {
  return [kind, out_dtype](const Graph& g, const Node& node) {
    TensorType t = input_type(g, node, 0);
    check_operand(node, 0, t.dtype, kind);
    if (out_dtype) t.dtype = *out_dtype;
    return std::vector<TensorType>{t};
  };
}

// All present inputs broadcast together; inputs [0, same_dtype_inputs) must share a dtype. The
// output takes input 0's dtype (or `out_dtype`).
InferTypeFn broadcast(Operand kind, size_t same_dtype_inputs,
                      std::optional<DataType> out_dtype = std::nullopt, size_t first = 0) {
  return [=](const Graph& g, const Node& node) {
    if (node.inputs.size() <= first) throw node_error(node, "needs at least one input");
    TensorType out = input_type(g, node, first);
    std::vector<size_t> same_dtype;
    for (size_t i = first; i < node.inputs.size(); ++i) {
      const TensorType& t = input_type(g, node, i);
      check_operand(node, i, t.dtype, kind);
      if (i < first + same_dtype_inputs) same_dtype.push_back(i);
      out.shape = broadcast_shapes(out.shape, t.shape, node);
    }
    require_same_dtype(g, node, same_dtype);
    out.dim_params.clear();
    if (out_dtype) out.dtype = *out_dtype;
    return std::vector<TensorType>{out};
  };
}

constexpr size_t kAllInputs = 1 << 20;

std::vector<TensorType> infer_where(const Graph& g, const Node& node) {
  check_operand(node, 0, input_type(g, node, 0).dtype, Operand::kBool);
  auto out = broadcast(Operand::kAny, 2, std::nullopt, 1)(g, node);
  out[0].shape = broadcast_shapes(input_type(g, node, 0).shape, out[0].shape, node);
  return out;
}

std::vector<TensorType> infer_cast(const Graph& g, const Node& node) {
  TensorType t = input_type(g, node, 0);
  if (!node.has_attr("to")) throw node_error(node, "attribute 'to' is required");
  t.dtype = onnx_dtype(node.attr_int("to", 0), node);
  return {t};
}

std::vector<TensorType> infer_cast_like(const Graph& g, const Node& node) {
  TensorType t = input_type(g, node, 0);
  t.dtype = input_type(g, node, 1).dtype;
  return {t};
}

// Inference-mode Dropout: the output is the input; the optional mask is all true.
std::vector<TensorType> infer_dropout(const Graph& g, const Node& node) {
  TensorType t = input_type(g, node, 0);
  std::vector<TensorType> out{t};
  if (node.outputs.size() > 1)
    out.push_back(TensorType{DataType::boolean(), t.shape, t.dim_params});
  return out;
}

}  // namespace

std::vector<OpDef> elementwise_defs() {
  const auto E = OpPattern::kElemWise, B = OpPattern::kBroadcast;
  const DataType b = DataType::boolean();
  std::vector<OpDef> defs;
  // Unary float math.
  for (auto [name, since] : std::initializer_list<std::pair<const char*, int>>{
           {"Sqrt", 6},     {"Reciprocal", 6},  {"Exp", 6},
           {"Log", 6},      {"Erf", 9},         {"Tanh", 6},
           {"Sigmoid", 6},  {"LeakyRelu", 6},   {"Elu", 6},
           {"Selu", 6},     {"HardSigmoid", 6}, {"HardSwish", 14},
           {"Softplus", 1}, {"Softsign", 1},    {"Floor", 6},
           {"Ceil", 6},     {"Round", 11},      {"Sin", 7},
           {"Cos", 7},      {"Tan", 7},         {"Asin", 7},
           {"Acos", 7},     {"Atan", 7},        {"Sinh", 9},
           {"Cosh", 9},     {"Asinh", 9},       {"Acosh", 9},
           {"Atanh", 9},    {"Celu", 12},       {"ThresholdedRelu", 10}}) {
    defs.push_back({name, since, E, unary(Operand::kFloat)});
  }
  // Unary math that also takes integers.
  for (auto [name, since] : std::initializer_list<std::pair<const char*, int>>{{"Relu", 6},
                                                                               {"Neg", 6},
                                                                               {"Abs", 6},
                                                                               {"Sign", 9},
                                                                               {"Shrink", 9},
                                                                               {"Identity", 1},
                                                                               {"Clip", 6}}) {
    defs.push_back({name, since, E, unary(Operand::kAny)});
  }
  defs.push_back({"Not", 1, E, unary(Operand::kBool)});
  defs.push_back({"IsNaN", 9, E, unary(Operand::kFloat, b)});
  defs.push_back({"IsInf", 10, E, unary(Operand::kFloat, b)});
  defs.push_back({"Cast", 6, E, infer_cast});
  defs.push_back({"CastLike", 15, E, infer_cast_like});
  defs.push_back({"Dropout", 7, E, infer_dropout});
  // Binary and variadic broadcasting ops. Before opset 7 the binary ops broadcast by a
  // `broadcast`/`axis` attribute (not implemented); the variadic ones required equal shapes, a case
  // of numpy broadcasting.
  for (auto [name, since] : std::initializer_list<std::pair<const char*, int>>{{"Add", 7},
                                                                               {"Sub", 7},
                                                                               {"Mul", 7},
                                                                               {"Div", 7},
                                                                               {"Mod", 10},
                                                                               {"Min", 1},
                                                                               {"Max", 1},
                                                                               {"Sum", 1},
                                                                               {"Mean", 1}}) {
    defs.push_back({name, since, B, broadcast(Operand::kAny, kAllInputs)});
  }
  defs.push_back({"BitShift", 11, B, broadcast(Operand::kInteger, kAllInputs)});
  defs.push_back({"Pow", 7, B, broadcast(Operand::kAny, 1)});
  defs.push_back({"PRelu", 7, B, broadcast(Operand::kAny, kAllInputs)});
  for (const char* name : {"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"}) {
    defs.push_back({name, 7, B, broadcast(Operand::kAny, kAllInputs, b)});
  }
  for (const char* name : {"And", "Or", "Xor"})
    defs.push_back({name, 7, B, broadcast(Operand::kBool, kAllInputs, b)});
  defs.push_back({"Where", 9, B, infer_where});
  return defs;
}

}  // namespace tessel::graph::ops
