// The single-op kernels the tuning benchmarks measure (ResNet-50, MobileNetV2, BERT and CIFAR
// ResNet shapes), and each as a one-node graph.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace tessel::bench {

// Softmax, LayerNorm and ReduceMean have no schedule template: only the auto-scheduler benchmark
// uses them.
enum class Kind { kDense, kBatchMatMul, kConv, kSoftmax, kLayerNorm, kReduceMean };

// One single-op workload, NCHW, batch 1, float32. Matmuls: [batch x] m x k times k x n (dense:
// Gemm with transB=1, the weight stored n x k). Convs: square inputs and kernels. Softmax: over
// the last axis of [batch, m, n]; LayerNormalization: over the last axis of [m, n]; ReduceMean:
// over `axis` of [batch, m, n].
struct KernelSpec {
  const char* name;
  Kind kind;
  int64_t batch = 1, m = 0, n = 0, k = 0;
  int64_t cin = 0, cout = 0, size = 0, kernel = 0, stride = 1, pad = 0, group = 1;
  int64_t axis = -1;  // ReduceMean's
  std::vector<std::string> disabled_passes =
      {};  // e.g. pack_conv_weights: the direct conv template
};

// Every kernel, in table order.
extern const std::vector<KernelSpec> kKernels;

// Whether the kernel's op has a schedule template (the template tuner's benchmarks).
inline bool templated(const KernelSpec& k) {
  return k.kind != Kind::kSoftmax && k.kind != Kind::kLayerNorm && k.kind != Kind::kReduceMean;
}

// "[m,k] x [n,k]^T", "dw 144->144 3x3 s1 p1 56x56", ...
std::string shape_text(const KernelSpec& k);
int64_t conv_out_size(const KernelSpec& k);
// Uniform in [-1, 1), reproducible from `seed`.
graph::TensorData random_tensor(const std::vector<int64_t>& shape, uint32_t seed);
// The kernel as a one-node graph: activations are graph inputs, weights random constants.
graph::Graph build_graph(const KernelSpec& k);
// Work that every program of the kernel does, as a graph of its own, for the kernels without a
// schedule template: how much faster than its untuned kernel any schedule could be. Softmax: an
// Exp over its input (every output is one exponential over a row's sum); LayerNormalization: the
// affine x * gamma + beta (every output reads x, gamma and beta and is written once). Null for
// the others.
std::optional<graph::Graph> floor_graph(const KernelSpec& k);

}  // namespace tessel::bench
