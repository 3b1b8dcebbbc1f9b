// The operator table: for each supported ONNX operator, its fusion pattern, its type/shape
// inference, the op family that picks its schedule (topi/strategy.h), whether it is tuned and its
// FLOP count. Plain functions and a table, no registry; the te lowering of each op lives in topi
// (the ir layer cannot depend on it) and the reference evaluation in reference/.
#pragma once

#include <functional>
#include <optional>
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

// What kind of schedule a fused group anchored by the op takes: the key of topi's strategy tables
// (topi/strategy.h), one schedule per family and target.
enum class OpFamily {
  kInjective = 0,  // elementwise, broadcast and injective ops
  kReduction,      // generic reductions (ReduceSum, ArgMax, ...)
  kConv,           // Conv and ConvTranspose on NCHW
  kConvNCHWc,      // Conv with weights packed in blocks of output channels
  kDense,          // Gemm and MatMul
  kPool,           // windowed and global pools
  kSoftmaxLike,    // softmax and the normalizations: row statistics, then elementwise outputs
  kOpaque,         // anything else (TopK, the loss ops, ...)
};
inline constexpr int kNumOpFamilies = static_cast<int>(OpFamily::kOpaque) + 1;
// "injective", "reduction", "conv", "conv_nchwc", "dense", "pool", "softmax_like" or "opaque".
const char* op_family_name(OpFamily f);

// Output types of `node` from its input types. Inputs whose values are constants (shape
// tensors, axes, ...) are available through graph.value(id).constant. Throws tessel::Error naming
// the node when inputs are invalid, or when a shape depends on a non-constant input.
using InferTypeFn = std::function<std::vector<TensorType>(const Graph& graph, const Node& node)>;

// The since_opset of Tessel's internal ops, which passes create and no ONNX model may contain.
inline constexpr int kInternalOp = 1 << 30;

// 2 x multiply-adds of one node of a typed graph.
using FlopsFn = double (*)(const Graph& graph, const Node& node);

struct OpDef {
  std::string name;  // ONNX op_type
  int since_opset;   // oldest opset whose semantics are implemented
  OpPattern pattern;
  InferTypeFn infer_type;
  // Unset for most ops: the family follows from the pattern (op_family).
  std::optional<OpFamily> family = std::nullopt;
  // Autotune makes a task of each workload and searches the schedule template of the family's
  // strategy; untuned ops with a template take its fallback.
  bool tuned = false;
  FlopsFn flops = nullptr;  // nullptr: not counted (elementwise work is not)
};

// def.family, else kInjective for elementwise/broadcast/injective patterns, kReduction for
// kCommReduce and kOpaque for the rest.
OpFamily op_family(const OpDef& def);

// nullptr when the op is not supported.
const OpDef* find_op(const std::string& op_type);
const std::vector<OpDef>& all_ops();

}  // namespace tessel::graph
