// Reference NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss, following ONNX's definition:
// loss[n, d...] = -w[t] * x[n, t, d...] with t = target[n, d...] and w[t] = weight[t] (1 without
// weights, 0 where t == ignore_index); "mean" divides the sum by the sum of those w.
#include <fmt/format.h>

#include <cmath>
#include <optional>

#include "ir/error.h"
#include "reference/nn_util.h"
#include "reference/ref_ops.h"

namespace tessel::reference {

namespace {

using nn::from_doubles;
using nn::product;
using nn::to_doubles;

// `x` is [N, C, D] flattened (D = the product of the trailing dims, 1 for 2-D scores).
TensorData nll_loss(const Node& node, DataType dtype, const std::vector<int64_t>& x_shape,
                    const std::vector<double>& x, const TensorData& target,
                    const TensorData* weight) {
  std::string reduction = node.attr_string("reduction", "mean");
  if (reduction != "none" && reduction != "sum" && reduction != "mean") {
    throw Error(fmt::format("{}: reduction must be 'none', 'sum' or 'mean', got '{}'",
                            node.describe(), reduction));
  }
  std::optional<int64_t> ignore_index;
  if (node.has_attr("ignore_index")) ignore_index = node.attr_int("ignore_index", 0);
  int64_t n = x_shape.at(0), c = x_shape.at(1), d = product(x_shape, 2, x_shape.size());
  if (target.numel() != n * d) {
    throw Error(fmt::format("{}: target has {} elements, expected N * d1..dk = {}", node.describe(),
                            target.numel(), n * d));
  }
  std::vector<double> loss(static_cast<size_t>(n * d), 0.0);
  double loss_sum = 0, weight_sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < d; ++j) {
      int64_t flat = i * d + j, t = get_i(target, flat);
      if (ignore_index && t == *ignore_index) continue;
      if (t < 0 || t >= c) {
        throw Error(fmt::format("{}: target {} at element {} is outside the {} classes",
                                node.describe(), t, flat, c));
      }
      double w = weight ? get_f(*weight, t) : 1.0;
      loss[flat] = -w * x[(i * c + t) * d + j];
      loss_sum += loss[flat];
      weight_sum += w;
    }
  }
  if (reduction == "none") return from_doubles(dtype, target.shape(), loss);
  return from_doubles(dtype, {}, {reduction == "sum" ? loss_sum : loss_sum / weight_sum});
}

std::vector<TensorData> eval_nll(const graph::Graph&, const Node& node,
                                 const std::vector<TensorData>& in) {
  const TensorData& x = required_input(in, 0, node);
  return {nll_loss(node, x.dtype(), x.shape(), to_doubles(x), required_input(in, 1, node),
                   optional_input(in, 2))};
}

// log_softmax over the class dim 1, then the NLL loss of it; output 1 is the log_softmax.
std::vector<TensorData> eval_softmax_cross_entropy(const graph::Graph&, const Node& node,
                                                   const std::vector<TensorData>& in) {
  const TensorData& x = required_input(in, 0, node);
  const std::vector<int64_t>& shape = x.shape();
  if (shape.size() < 2) throw Error(fmt::format("{}: scores must have rank >= 2", node.describe()));
  int64_t n = shape[0], c = shape[1], d = product(shape, 2, shape.size());
  std::vector<double> v = to_doubles(x);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < d; ++j) {
      auto at = [&](int64_t k) -> double& { return v[(i * c + k) * d + j]; };
      double mx = -INFINITY, sum = 0;
      for (int64_t k = 0; k < c; ++k) mx = std::max(mx, at(k));
      for (int64_t k = 0; k < c; ++k) sum += std::exp(at(k) - mx);
      double log_sum = mx + std::log(sum);
      for (int64_t k = 0; k < c; ++k) at(k) -= log_sum;
    }
  }
  return {nll_loss(node, x.dtype(), shape, v, required_input(in, 1, node), optional_input(in, 2)),
          from_doubles(x.dtype(), shape, v)};
}

}  // namespace

std::vector<RefOp> loss_ref_ops() {
  return {{OpKind::NegativeLogLikelihoodLoss, eval_nll},
          {OpKind::SoftmaxCrossEntropyLoss, eval_softmax_cross_entropy}};
}

}  // namespace tessel::reference
