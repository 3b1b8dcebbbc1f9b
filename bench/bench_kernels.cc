#include "bench/bench_kernels.h"

#include <fmt/format.h>

#include <random>
#include <utility>

namespace tessel::bench {

const std::vector<KernelSpec> kKernels = {
    {.name = "dense/classifier", .kind = Kind::kDense, .m = 1, .n = 1000, .k = 512},
    {.name = "dense/bert", .kind = Kind::kDense, .m = 128, .n = 768, .k = 768},
    {.name = "dense/64", .kind = Kind::kDense, .m = 64, .n = 256, .k = 256},
    {.name = "bmm/8x64", .kind = Kind::kBatchMatMul, .batch = 8, .m = 64, .n = 64, .k = 64},
    {.name = "bmm/12x128", .kind = Kind::kBatchMatMul, .batch = 12, .m = 128, .n = 128, .k = 64},
    {.name = "conv/cifar-3x3-32",
     .kind = Kind::kConv,
     .cin = 16,
     .cout = 16,
     .size = 32,
     .kernel = 3,
     .pad = 1},
    {.name = "conv/cifar-3x3-16",
     .kind = Kind::kConv,
     .cin = 32,
     .cout = 32,
     .size = 16,
     .kernel = 3,
     .pad = 1},
    {.name = "conv/cifar-3x3s2-32",
     .kind = Kind::kConv,
     .cin = 16,
     .cout = 32,
     .size = 32,
     .kernel = 3,
     .stride = 2,
     .pad = 1},
    {.name = "conv/cifar-3x3s2-32-direct",
     .kind = Kind::kConv,
     .cin = 16,
     .cout = 32,
     .size = 32,
     .kernel = 3,
     .stride = 2,
     .pad = 1,
     .disabled_passes = {"pack_conv_weights"}},
    {.name = "conv/cifar-1x1s2-32",
     .kind = Kind::kConv,
     .cin = 16,
     .cout = 32,
     .size = 32,
     .kernel = 1,
     .stride = 2},
    {.name = "conv/cifar-1x1s2-32-direct",
     .kind = Kind::kConv,
     .cin = 16,
     .cout = 32,
     .size = 32,
     .kernel = 1,
     .stride = 2,
     .disabled_passes = {"pack_conv_weights"}},
    {.name = "conv/r50-3x3-56",
     .kind = Kind::kConv,
     .cin = 64,
     .cout = 64,
     .size = 56,
     .kernel = 3,
     .pad = 1},
    {.name = "conv/r50-3x3-28",
     .kind = Kind::kConv,
     .cin = 128,
     .cout = 128,
     .size = 28,
     .kernel = 3,
     .pad = 1},
    {.name = "conv/r50-3x3-28-direct",
     .kind = Kind::kConv,
     .cin = 128,
     .cout = 128,
     .size = 28,
     .kernel = 3,
     .pad = 1,
     .disabled_passes = {"pack_conv_weights"}},
    {.name = "conv/r50-3x3-14",
     .kind = Kind::kConv,
     .cin = 256,
     .cout = 256,
     .size = 14,
     .kernel = 3,
     .pad = 1},
    {.name = "conv/r50-3x3-7",
     .kind = Kind::kConv,
     .cin = 512,
     .cout = 512,
     .size = 7,
     .kernel = 3,
     .pad = 1},
    {.name = "conv/r50-1x1-56",
     .kind = Kind::kConv,
     .cin = 64,
     .cout = 256,
     .size = 56,
     .kernel = 1},
    {.name = "conv/r50-1x1s2-56",
     .kind = Kind::kConv,
     .cin = 256,
     .cout = 512,
     .size = 56,
     .kernel = 1,
     .stride = 2},
    {.name = "conv/r50-7x7s2-224",
     .kind = Kind::kConv,
     .cin = 3,
     .cout = 64,
     .size = 224,
     .kernel = 7,
     .stride = 2,
     .pad = 3},
    {.name = "dw/mbv2-3x3-56",
     .kind = Kind::kConv,
     .cin = 144,
     .cout = 144,
     .size = 56,
     .kernel = 3,
     .pad = 1,
     .group = 144},
    {.name = "dw/mbv2-3x3s2-112",
     .kind = Kind::kConv,
     .cin = 96,
     .cout = 96,
     .size = 112,
     .kernel = 3,
     .stride = 2,
     .pad = 1,
     .group = 96},
    {.name = "conv/mbv2-1x1-28",
     .kind = Kind::kConv,
     .cin = 32,
     .cout = 192,
     .size = 28,
     .kernel = 1},
    {.name = "softmax/attention", .kind = Kind::kSoftmax, .batch = 12, .m = 128, .n = 128},
    {.name = "layernorm/bert", .kind = Kind::kLayerNorm, .m = 128, .n = 768},
    // A squeeze-and-excitation block's spatial mean (512 channels of 28x28), and a mean over a
    // BERT sequence (sentence embeddings).
    {.name = "reduce/se-mean", .kind = Kind::kReduceMean, .m = 512, .n = 784},
    {.name = "reduce/seq-mean", .kind = Kind::kReduceMean, .m = 128, .n = 768, .axis = 1},
};

std::string shape_text(const KernelSpec& k) {
  switch (k.kind) {
    case Kind::kDense:
      return fmt::format("[{},{}] x [{},{}]^T", k.m, k.k, k.n, k.k);
    case Kind::kBatchMatMul:
      return fmt::format("[{},{},{}] x [{},{},{}]", k.batch, k.m, k.k, k.batch, k.k, k.n);
    case Kind::kConv:
      return fmt::format("{}{}->{} {}x{} s{} p{} {}x{}", k.group > 1 ? "dw " : "", k.cin, k.cout,
                         k.kernel, k.kernel, k.stride, k.pad, k.size, k.size);
    case Kind::kSoftmax:
      return fmt::format("[{},{},{}] axis -1", k.batch, k.m, k.n);
    case Kind::kLayerNorm:
      return fmt::format("[{},{}] axis -1", k.m, k.n);
    case Kind::kReduceMean:
      return fmt::format("[{},{},{}] axis {}", k.batch, k.m, k.n, k.axis);
  }
  return "";
}

int64_t conv_out_size(const KernelSpec& k) {
  return (k.size + 2 * k.pad - k.kernel) / k.stride + 1;
}

graph::TensorData random_tensor(const std::vector<int64_t>& shape, uint32_t seed) {
  graph::TensorData t(DataType::f32(), shape);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1, 1);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = dist(rng);
  return t;
}

namespace {

// LayerNormalization's gamma and beta over `n` columns, as constants of `g`: the kernel's and its
// floor's.
std::pair<graph::ValueId, graph::ValueId> add_layer_norm_params(graph::Graph& g, int64_t n) {
  return {g.add_constant("gamma", random_tensor({n}, 1)),
          g.add_constant("beta", random_tensor({n}, 2))};
}

}  // namespace

graph::Graph build_graph(const KernelSpec& k) {
  graph::Graph g;
  auto input = [&](const std::string& name, std::vector<int64_t> shape) {
    graph::ValueId v = g.add_value(name, {DataType::f32(), std::move(shape), {}});
    g.inputs.push_back(v);
    return v;
  };
  graph::Node node;
  node.name = k.name;
  switch (k.kind) {
    case Kind::kDense:
      node.op = graph::OpKind::Gemm;
      node.inputs = {input("a", {k.m, k.k}), g.add_constant("w", random_tensor({k.n, k.k}, 1))};
      node.attrs = {{"transB", int64_t{1}}};
      break;
    case Kind::kBatchMatMul:
      node.op = graph::OpKind::MatMul;
      node.inputs = {input("a", {k.batch, k.m, k.k}), input("b", {k.batch, k.k, k.n})};
      break;
    case Kind::kConv:
      node.op = graph::OpKind::Conv;
      node.inputs = {
          input("x", {1, k.cin, k.size, k.size}),
          g.add_constant("w", random_tensor({k.cout, k.cin / k.group, k.kernel, k.kernel}, 1))};
      node.attrs = {{"kernel_shape", std::vector<int64_t>{k.kernel, k.kernel}},
                    {"strides", std::vector<int64_t>{k.stride, k.stride}},
                    {"pads", std::vector<int64_t>{k.pad, k.pad, k.pad, k.pad}},
                    {"group", k.group}};
      break;
    case Kind::kSoftmax:
      node.op = graph::OpKind::Softmax;
      node.inputs = {input("x", {k.batch, k.m, k.n})};
      node.attrs = {{"axis", int64_t{-1}}};
      break;
    case Kind::kLayerNorm: {
      node.op = graph::OpKind::LayerNormalization;
      auto [gamma, beta] = add_layer_norm_params(g, k.n);
      node.inputs = {input("x", {k.m, k.n}), gamma, beta};
      node.attrs = {{"axis", int64_t{-1}}};
      break;
    }
    case Kind::kReduceMean:
      node.op = graph::OpKind::ReduceMean;
      node.inputs = {input("x", {k.batch, k.m, k.n})};
      node.attrs = {{"axes", std::vector<int64_t>{k.axis}}};
      break;
  }
  graph::ValueId out = g.add_value("y", {});
  node.outputs = {out};
  g.add_node(std::move(node));
  g.outputs = {out};
  return g;
}

std::optional<graph::Graph> floor_graph(const KernelSpec& k) {
  if (k.kind != Kind::kSoftmax && k.kind != Kind::kLayerNorm) return std::nullopt;
  graph::Graph g;
  auto add = [&](graph::OpKind op, std::vector<graph::ValueId> inputs, const std::string& out) {
    graph::Node node;
    node.name = out;
    node.op = op;
    node.inputs = std::move(inputs);
    graph::ValueId v = g.add_value(out, {});
    node.outputs = {v};
    g.add_node(std::move(node));
    return v;
  };
  std::vector<int64_t> shape = k.kind == Kind::kSoftmax ? std::vector<int64_t>{k.batch, k.m, k.n}
                                                        : std::vector<int64_t>{k.m, k.n};
  graph::ValueId x = g.add_value("x", {DataType::f32(), shape, {}});
  g.inputs.push_back(x);
  if (k.kind == Kind::kSoftmax) {
    g.outputs = {add(graph::OpKind::Exp, {x}, "y")};
  } else {
    auto [gamma, beta] = add_layer_norm_params(g, k.n);
    g.outputs = {
        add(graph::OpKind::Add, {add(graph::OpKind::Mul, {x, gamma}, "scaled"), beta}, "y")};
  }
  return g;
}

}  // namespace tessel::bench
