// The operator table: for each supported ONNX operator, its fusion pattern and its type/shape
// inference. Plain functions and a table, no registry; the te lowering of each op lives in topi
// (the ir layer cannot depend on it) and the reference evaluation in reference/.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace tessel::graph {

// FuseOps patterns, in TVM's order: a lower pattern fuses more freely.
enum class OpPattern {
  kElemWise = 0,
  kBroadcast = 1,
  kInjective = 2,
  kCommReduce = 3,
  kOutEWiseFusable = 4,
  kOpaque = 8
};
const char* op_pattern_name(OpPattern p);

// Output types of `node` from its input types. Inputs whose values are constants (shape
// tensors, axes, ...) are available through graph.value(id).constant. Throws tessel::Error naming
// the node when inputs are invalid, or when a shape depends on a non-constant input.
using InferTypeFn = std::function<std::vector<TensorType>(const Graph& graph, const Node& node)>;

// The since_opset of Tessel's internal ops, which passes create and no ONNX model may contain.
inline constexpr int kInternalOp = 1 << 30;

struct OpDef {
  std::string name;  // ONNX op_type
  int since_opset;   // oldest opset whose semantics are implemented
  OpPattern pattern;
  InferTypeFn infer_type;
};

// nullptr when the op is not supported.
const OpDef* find_op(const std::string& op_type);
const std::vector<OpDef>& all_ops();

}  // namespace tessel::graph
