// Type inference for the loss ops NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (opset
// 12+): scores [N, C, d1..dk], integer targets [N, d1..dk], optional per-class weights [C].
#include <fmt/format.h>

#include "ir/ops/op_defs.h"
#include "ir/ops/op_params.h"
#include "ir/ops/shape_util.h"

namespace tessel::graph::ops {
namespace {

using Types = std::vector<TensorType>;

bool dims_conflict(int64_t a, int64_t b) { return a != kUnknownDim && b != kUnknownDim && a != b; }

// The loss: the target's shape for reduction "none", a scalar for "sum" and "mean".
Types infer_loss(const Graph& g, const Node& node) {
  const TensorType& scores = input_type(g, node, 0);
  const TensorType& target = input_type(g, node, 1);
  if (!scores.dtype.is_float())
    throw node_error(node, fmt::format("input 0 must be a float tensor, got {}", scores.str()));
  if (!target.dtype.is_int())
    throw node_error(node, fmt::format("target must be an integer tensor, got {}", target.str()));
  if (scores.shape.size() < 2)
    throw node_error(
        node, fmt::format("input 0 must have rank >= 2 ([N, C, ...]), got {}", scores.str()));
  // The target is the scores' shape without the class dim.
  std::vector<int64_t> expected = scores.shape;
  expected.erase(expected.begin() + 1);
  bool target_ok = target.shape.size() == expected.size();
  for (size_t d = 0; target_ok && d < expected.size(); ++d)
    target_ok = !dims_conflict(target.shape[d], expected[d]);
  if (!target_ok) {
    throw node_error(node, fmt::format("target {} must be input 0 {} without its class dim 1",
                                       target.str(), scores.str()));
  }
  if (has_input(node, 2)) {
    const TensorType& weight = input_type(g, node, 2);
    if (weight.shape.size() != 1 || dims_conflict(weight.shape[0], scores.shape[1]) ||
        weight.dtype != scores.dtype) {
      throw node_error(node, fmt::format("weight {} must be a [C] tensor of input 0's dtype ({})",
                                         weight.str(), scores.str()));
    }
  }
  std::string reduction = node.attr_string("reduction", "mean");
  if (reduction != "none" && reduction != "sum" && reduction != "mean") {
    throw node_error(node,
                     fmt::format("reduction must be 'none', 'sum' or 'mean', got '{}'", reduction));
  }
  Types out{
      TensorType{scores.dtype, reduction == "none" ? target.shape : std::vector<int64_t>{}, {}}};
  // SoftmaxCrossEntropyLoss's optional log_prob output is like the scores.
  if (node.outputs.size() > 1) out.push_back(TensorType{scores.dtype, scores.shape, {}});
  return out;
}

}  // namespace

std::vector<OpDef> loss_defs() {
  return {
      {OpKind::NegativeLogLikelihoodLoss, 12, OpPattern::kOpaque, infer_loss},
      {OpKind::SoftmaxCrossEntropyLoss, 12, OpPattern::kOpaque, infer_loss},
  };
}

}  // namespace tessel::graph::ops
