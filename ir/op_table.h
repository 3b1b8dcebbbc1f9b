// The operator table: one OpDef per OpKind (ir/op_kind.h) with the op's fusion pattern, its
// type/shape relation, the op family that picks its schedule (topi/strategy.h), whether it is tuned
// and its FLOP count. Plain functions in a static table, no registry. The te compute of each op
// (topi/op_compute.h) and its reference implementation (reference/reference.h) are tables indexed
// by the same OpKind in their own layers, which ir cannot depend on; a test checks that every
// OpDef has each piece or is on a listed exception.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/op_kind.h"

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
  kConvWinograd,   // 3x3 stride-1 Conv as Winograd's F(m x m, 3 x 3)
  kDense,          // Gemm and MatMul
  kPool,           // windowed and global pools
  kSoftmaxLike,    // softmax and the normalizations: row statistics, then elementwise outputs
  kOpaque,         // anything else (TopK, the loss ops, ...)
};
inline constexpr int kNumOpFamilies = static_cast<int>(OpFamily::kOpaque) + 1;
// "injective", "reduction", "conv", "conv_nchwc", "conv_winograd", "dense", "pool", "softmax_like"
// or "opaque".
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
  OpKind kind;
  int since_opset;  // oldest opset whose semantics are implemented
  OpPattern pattern;
  InferTypeFn infer_type;
  // Unset for most ops: the family follows from the pattern (op_family).
  std::optional<OpFamily> family = std::nullopt;
  // Autotune makes a task of each workload and searches the schedule template of the family's
  // strategy; untuned ops with a template take its fallback.
  bool tuned = false;
  FlopsFn flops = nullptr;  // nullptr: not counted (elementwise work is not)

  std::string_view name() const { return op_kind_name(kind); }
};

// def.family, else kInjective for elementwise/broadcast/injective patterns, kReduction for
// kCommReduce and kOpaque for the rest.
OpFamily op_family(const OpDef& def);

// The definition of `kind`.
const OpDef& op_def(OpKind kind);
// Every OpDef, in OpKind order.
const std::vector<OpDef>& all_ops();
// The op named `op_type` (an ONNX op_type or an internal op's name); nullptr when there is none.
// Only the importer and tools that read op names from users look ops up by name.
const OpDef* find_op(std::string_view op_type);

}  // namespace tessel::graph
