// Type inference for reductions (Reduce*, ArgMax/ArgMin), CumSum and TopK.
#include <fmt/format.h>

#include "ir/ops/op_defs.h"
#include "ir/ops/op_params.h"
#include "ir/ops/shape_util.h"

namespace tessel::graph::ops {
namespace {

std::vector<TensorType> infer_reduce(const Graph& g, const Node& node) {
  const TensorType& in = input_type(g, node, 0);
  ReduceSpec spec =
      reduce_spec(node, static_cast<int64_t>(in.shape.size()), constant_params(g, node));
  return {TensorType{in.dtype, reduced_shape(in.shape, spec), {}}};
}

std::vector<TensorType> infer_arg_reduce(const Graph& g, const Node& node) {
  const TensorType& in = input_type(g, node, 0);
  int64_t rank = static_cast<int64_t>(in.shape.size());
  ReduceSpec spec{std::vector<bool>(static_cast<size_t>(rank), false),
                  node.attr_int("keepdims", 1) != 0};
  spec.reduced[normalize_axis(node.attr_int("axis", 0), rank, node)] = true;
  return {TensorType{DataType::i64(), reduced_shape(in.shape, spec), {}}};
}

std::vector<TensorType> infer_cumsum(const Graph& g, const Node& node) {
  const TensorType& in = input_type(g, node, 0);
  const TensorType& axis = input_type(g, node, 1);
  if (axis.shape.size() > 1 || !axis.dtype.is_int()) {
    throw node_error(node, fmt::format("axis must be an int32/int64 scalar, got {}", axis.str()));
  }
  return {in};
}

std::vector<TensorType> infer_topk(const Graph& g, const Node& node) {
  const TensorType& in = input_type(g, node, 0);
  int64_t axis =
      normalize_axis(node.attr_int("axis", -1), static_cast<int64_t>(in.shape.size()), node);
  int64_t k = topk_k(node, constant_params(g, node));
  if (in.shape[axis] != kUnknownDim && k > in.shape[axis]) {
    throw node_error(node, fmt::format("k = {} exceeds the axis size {}", k, in.shape[axis]));
  }
  std::vector<int64_t> shape = in.shape;
  shape[axis] = k;
  return {TensorType{in.dtype, shape, {}}, TensorType{DataType::i64(), shape, {}}};
}

}  // namespace

std::vector<OpDef> reduce_defs() {
  std::vector<OpDef> defs;
  for (OpKind name : {OpKind::ReduceSum, OpKind::ReduceMean, OpKind::ReduceMax, OpKind::ReduceMin,
                      OpKind::ReduceProd, OpKind::ReduceL1, OpKind::ReduceL2, OpKind::ReduceLogSum,
                      OpKind::ReduceLogSumExp, OpKind::ReduceSumSquare}) {
    defs.push_back({name, 1, OpPattern::kCommReduce, infer_reduce});
  }
  defs.push_back({OpKind::ArgMax, 1, OpPattern::kCommReduce, infer_arg_reduce});
  defs.push_back({OpKind::ArgMin, 1, OpPattern::kCommReduce, infer_arg_reduce});
  defs.push_back({OpKind::CumSum, 11, OpPattern::kOpaque, infer_cumsum});
  defs.push_back({OpKind::TopK, 1, OpPattern::kOpaque, infer_topk});
  return defs;
}

}  // namespace tessel::graph::ops
