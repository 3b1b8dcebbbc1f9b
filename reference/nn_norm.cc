// Reference normalizations (BatchNormalization, InstanceNormalization, LayerNormalization, LRN) and
// the softmax family, over [outer, n, inner] views of the input.
#include <fmt/format.h>

#include <cmath>

#include "ir/error.h"
#include "ir/ops/shape_util.h"
#include "reference/nn_util.h"

namespace tessel::reference::nn {

namespace {

using graph::Node;

struct Moments {
  double mean = 0, var = 0;
};

// Mean and population variance of x[outer, n, inner] over outer and inner, for each n.
std::vector<Moments> moments(const std::vector<double>& x, int64_t outer, int64_t n,
                             int64_t inner) {
  std::vector<Moments> out(static_cast<size_t>(n));
  double count = static_cast<double>(outer * inner);
  for (int64_t c = 0; c < n; ++c) {
    double sum = 0, sq = 0;
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) sum += x[(o * n + c) * inner + i];
    }
    double mean = sum / count;
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) sq += std::pow(x[(o * n + c) * inner + i] - mean, 2);
    }
    out[c] = {mean, sq / count};
  }
  return out;
}

// y[o, c, i] = scale[c] * (x - mean[c]) / sqrt(var[c] + eps) + bias[c].
std::vector<double> normalize_channels(const std::vector<double>& x, int64_t outer, int64_t n,
                                       int64_t inner, const std::vector<Moments>& m,
                                       const std::vector<double>& scale,
                                       const std::vector<double>& bias, double eps) {
  std::vector<double> y(x.size());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t c = 0; c < n; ++c) {
      double k = scale[c] / std::sqrt(m[c].var + eps);
      for (int64_t i = 0; i < inner; ++i) {
        int64_t at = (o * n + c) * inner + i;
        y[at] = (x[at] - m[c].mean) * k + bias[c];
      }
    }
  }
  return y;
}

// Inference uses the running mean/var inputs; training_mode=1 (opset 14) uses the batch statistics
// and also returns the updated running mean and variance.
std::vector<TensorData> eval_batch_norm(const graph::Graph&, const Node& node,
                                        const std::vector<TensorData>& in) {
  const TensorData& xt = in.at(0);
  const std::vector<int64_t>& shape = xt.shape();
  int64_t c = shape.at(1), inner = product(shape, 2, shape.size());
  std::vector<double> x = to_doubles(xt), scale = to_doubles(in.at(1)), bias = to_doubles(in.at(2));
  std::vector<double> mean = to_doubles(in.at(3)), var = to_doubles(in.at(4));
  double eps = node.attr_float("epsilon", 1e-5), momentum = node.attr_float("momentum", 0.9);
  bool training = node.attr_int("training_mode", 0) != 0;
  std::vector<Moments> running(static_cast<size_t>(c));
  for (int64_t i = 0; i < c; ++i) running[i] = {mean[i], var[i]};
  std::vector<Moments> used = training ? moments(x, shape[0], c, inner) : running;
  std::vector<TensorData> out{from_doubles(
      xt.dtype(), shape, normalize_channels(x, shape[0], c, inner, used, scale, bias, eps))};
  if (node.outputs.size() > 1) {
    std::vector<double> new_mean(c), new_var(c);
    for (int64_t i = 0; i < c; ++i) {
      new_mean[i] = training ? mean[i] * momentum + used[i].mean * (1 - momentum) : mean[i];
      new_var[i] = training ? var[i] * momentum + used[i].var * (1 - momentum) : var[i];
    }
    out.push_back(from_doubles(in[3].dtype(), {c}, new_mean));
    out.push_back(from_doubles(in[4].dtype(), {c}, new_var));
  }
  return out;
}

// Statistics per (n, c) over the spatial dims: BatchNorm's math on an [1, N * C, spatial] view.
std::vector<TensorData> eval_instance_norm(const graph::Graph&, const Node& node,
                                           const std::vector<TensorData>& in) {
  const TensorData& xt = in.at(0);
  const std::vector<int64_t>& shape = xt.shape();
  int64_t planes = shape[0] * shape.at(1), inner = product(shape, 2, shape.size());
  std::vector<double> x = to_doubles(xt), scale = to_doubles(in.at(1)), bias = to_doubles(in.at(2));
  std::vector<double> plane_scale, plane_bias;
  for (int64_t p = 0; p < planes; ++p) {
    plane_scale.push_back(scale[p % shape[1]]);
    plane_bias.push_back(bias[p % shape[1]]);
  }
  std::vector<double> y =
      normalize_channels(x, 1, planes, inner, moments(x, 1, planes, inner), plane_scale, plane_bias,
                         node.attr_float("epsilon", 1e-5));
  return {from_doubles(xt.dtype(), shape, y)};
}

// Normalizes over the dims from `axis` on; Scale and B broadcast to those dims.
std::vector<TensorData> eval_layer_norm(const graph::Graph&, const Node& node,
                                        const std::vector<TensorData>& in) {
  const TensorData& xt = in.at(0);
  const std::vector<int64_t>& shape = xt.shape();
  int64_t axis = graph::ops::normalize_axis(node.attr_int("axis", -1),
                                            static_cast<int64_t>(shape.size()), node);
  std::vector<int64_t> norm_shape(shape.begin() + axis, shape.end());
  int64_t outer = product(shape, 0, static_cast<size_t>(axis)),
          inner = product(norm_shape, 0, norm_shape.size());
  std::vector<double> x = to_doubles(xt), scale = to_doubles(in.at(1));
  std::vector<int64_t> scale_at = broadcast_offsets(in[1].shape(), norm_shape);
  bool has_bias = in.size() > 2 && in[2].defined();
  std::vector<double> bias = has_bias ? to_doubles(in[2]) : std::vector<double>{};
  std::vector<int64_t> bias_at =
      has_bias ? broadcast_offsets(in[2].shape(), norm_shape) : std::vector<int64_t>{};
  double eps = node.attr_float("epsilon", 1e-5);
  std::vector<double> y(x.size()), means, inv_std;
  for (int64_t o = 0; o < outer; ++o) {
    std::vector<double> row(x.begin() + o * inner, x.begin() + (o + 1) * inner);
    Moments m = moments(row, 1, 1, inner)[0];
    double inv = 1.0 / std::sqrt(m.var + eps);
    for (int64_t i = 0; i < inner; ++i) {
      y[o * inner + i] =
          (row[i] - m.mean) * inv * scale[scale_at[i]] + (has_bias ? bias[bias_at[i]] : 0.0);
    }
    means.push_back(m.mean);
    inv_std.push_back(inv);
  }
  std::vector<int64_t> stat_shape(shape.begin(), shape.begin() + axis);
  stat_shape.resize(shape.size(), 1);
  DataType stash = node.attr_int("stash_type", 1) == 1 ? DataType::f32() : xt.dtype();
  return {from_doubles(xt.dtype(), shape, y), from_doubles(stash, stat_shape, means),
          from_doubles(stash, stat_shape, inv_std)};
}

// y = x / (bias + alpha / size * sum of squares over the channel window)^beta.
std::vector<TensorData> eval_lrn(const graph::Graph&, const Node& node,
                                 const std::vector<TensorData>& in) {
  const TensorData& xt = in.at(0);
  const std::vector<int64_t>& shape = xt.shape();
  int64_t size = node.attr_int("size", 1), c = shape.at(1), inner = product(shape, 2, shape.size());
  double alpha = node.attr_float("alpha", 1e-4), beta = node.attr_float("beta", 0.75),
         bias = node.attr_float("bias", 1.0);
  int64_t below = (size - 1) / 2, above = size - 1 - below;
  std::vector<double> x = to_doubles(xt), y(x.size());
  for (int64_t n = 0; n < shape[0]; ++n) {
    for (int64_t ch = 0; ch < c; ++ch) {
      for (int64_t i = 0; i < inner; ++i) {
        double sq = 0;
        for (int64_t k = std::max<int64_t>(0, ch - below); k <= std::min(c - 1, ch + above); ++k) {
          sq += std::pow(x[(n * c + k) * inner + i], 2);
        }
        int64_t at = (n * c + ch) * inner + i;
        y[at] = x[at] / std::pow(bias + alpha / static_cast<double>(size) * sq, beta);
      }
    }
  }
  return {from_doubles(xt.dtype(), shape, y)};
}

enum class SoftmaxKind { kSoftmax, kLogSoftmax, kHardmax };

// Normalizes along the one axis (default -1); the importer rewrites the pre-13 2-D coercion into
// that form (frontend/canonicalize_ops.h).
EvalFn softmax_like(SoftmaxKind kind) {
  return [kind](const graph::Graph&, const Node& node, const std::vector<TensorData>& in) {
    const TensorData& xt = in.at(0);
    const std::vector<int64_t>& shape = xt.shape();
    int64_t rank = std::max<int64_t>(1, static_cast<int64_t>(shape.size()));
    auto axis =
        static_cast<size_t>(graph::ops::normalize_axis(node.attr_int("axis", -1), rank, node));
    int64_t outer = product(shape, 0, axis);
    int64_t n = product(shape, axis, axis + 1);
    int64_t inner = product(shape, axis + 1, shape.size());
    std::vector<double> x = to_doubles(xt), y(x.size());
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        auto at = [&](int64_t k) { return (o * n + k) * inner + i; };
        int64_t arg = 0;
        for (int64_t k = 1; k < n; ++k) arg = x[at(k)] > x[at(arg)] ? k : arg;
        double mx = x[at(arg)], sum = 0;
        for (int64_t k = 0; k < n; ++k) sum += std::exp(x[at(k)] - mx);
        for (int64_t k = 0; k < n; ++k) {
          double shifted = x[at(k)] - mx;
          y[at(k)] = kind == SoftmaxKind::kHardmax      ? (k == arg ? 1.0 : 0.0)
                     : kind == SoftmaxKind::kLogSoftmax ? shifted - std::log(sum)
                                                        : std::exp(shifted) / sum;
        }
      }
    }
    return std::vector<TensorData>{from_doubles(xt.dtype(), shape, y)};
  };
}

}  // namespace

std::vector<RefOp> norm_ref_ops() {
  return {
      {OpKind::BatchNormalization, eval_batch_norm},
      {OpKind::InstanceNormalization, eval_instance_norm},
      {OpKind::LayerNormalization, eval_layer_norm},
      {OpKind::LRN, eval_lrn},
      {OpKind::Softmax, softmax_like(SoftmaxKind::kSoftmax)},
      {OpKind::LogSoftmax, softmax_like(SoftmaxKind::kLogSoftmax)},
      {OpKind::Hardmax, softmax_like(SoftmaxKind::kHardmax)},
  };
}

}  // namespace tessel::reference::nn
