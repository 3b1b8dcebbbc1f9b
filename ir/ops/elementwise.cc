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
  for (auto [name, since] : std::initializer_list<std::pair<OpKind, int>>{
           {OpKind::Sqrt, 6},     {OpKind::Reciprocal, 6},  {OpKind::Exp, 6},
           {OpKind::Log, 6},      {OpKind::Erf, 9},         {OpKind::Tanh, 6},
           {OpKind::Sigmoid, 6},  {OpKind::LeakyRelu, 6},   {OpKind::Elu, 6},
           {OpKind::Selu, 6},     {OpKind::HardSigmoid, 6}, {OpKind::HardSwish, 14},
           {OpKind::Softplus, 1}, {OpKind::Softsign, 1},    {OpKind::Floor, 6},
           {OpKind::Ceil, 6},     {OpKind::Round, 11},      {OpKind::Sin, 7},
           {OpKind::Cos, 7},      {OpKind::Tan, 7},         {OpKind::Asin, 7},
           {OpKind::Acos, 7},     {OpKind::Atan, 7},        {OpKind::Sinh, 9},
           {OpKind::Cosh, 9},     {OpKind::Asinh, 9},       {OpKind::Acosh, 9},
           {OpKind::Atanh, 9},    {OpKind::Celu, 12},       {OpKind::ThresholdedRelu, 10}}) {
    defs.push_back({name, since, E, unary(Operand::kFloat)});
  }
  // Unary math that also takes integers.
  for (auto [name, since] : std::initializer_list<std::pair<OpKind, int>>{{OpKind::Relu, 6},
                                                                          {OpKind::Neg, 6},
                                                                          {OpKind::Abs, 6},
                                                                          {OpKind::Sign, 9},
                                                                          {OpKind::Shrink, 9},
                                                                          {OpKind::Identity, 1},
                                                                          {OpKind::Clip, 6}}) {
    defs.push_back({name, since, E, unary(Operand::kAny)});
  }
  defs.push_back({OpKind::Not, 1, E, unary(Operand::kBool)});
  defs.push_back({OpKind::IsNaN, 9, E, unary(Operand::kFloat, b)});
  defs.push_back({OpKind::IsInf, 10, E, unary(Operand::kFloat, b)});
  defs.push_back({OpKind::Cast, 6, E, infer_cast});
  defs.push_back({OpKind::CastLike, 15, E, infer_cast_like});
  defs.push_back({OpKind::Dropout, 7, E, infer_dropout});
  // Binary and variadic broadcasting ops. Before opset 7 the binary ops broadcast by a
  // `broadcast`/`axis` attribute (not implemented); the variadic ones required equal shapes, a case
  // of numpy broadcasting.
  for (auto [name, since] : std::initializer_list<std::pair<OpKind, int>>{{OpKind::Add, 7},
                                                                          {OpKind::Sub, 7},
                                                                          {OpKind::Mul, 7},
                                                                          {OpKind::Div, 7},
                                                                          {OpKind::Mod, 10},
                                                                          {OpKind::Min, 1},
                                                                          {OpKind::Max, 1},
                                                                          {OpKind::Sum, 1},
                                                                          {OpKind::Mean, 1}}) {
    defs.push_back({name, since, B, broadcast(Operand::kAny, kAllInputs)});
  }
  defs.push_back({OpKind::BitShift, 11, B, broadcast(Operand::kInteger, kAllInputs)});
  defs.push_back({OpKind::Pow, 7, B, broadcast(Operand::kAny, 1)});
  defs.push_back({OpKind::PRelu, 7, B, broadcast(Operand::kAny, kAllInputs)});
  for (OpKind name : {OpKind::Equal, OpKind::Less, OpKind::Greater, OpKind::LessOrEqual,
                      OpKind::GreaterOrEqual}) {
    defs.push_back({name, 7, B, broadcast(Operand::kAny, kAllInputs, b)});
  }
  for (OpKind name : {OpKind::And, OpKind::Or, OpKind::Xor})
    defs.push_back({name, 7, B, broadcast(Operand::kBool, kAllInputs, b)});
  defs.push_back({OpKind::Where, 9, B, infer_where});
  return defs;
}

}  // namespace tessel::graph::ops
