// Full-size public architectures with random weights, batch 1, fp32, written node for node as
// torch.onnx.export (TorchScript exporter, opset 17, eval mode, static input shapes, constant
// folding on) writes the PyTorch/torchvision modules: BatchNormalization kept after each Conv (the
// exporter folds it only with training=EVAL and do_constant_folding; Tessel folds it itself), ReLU6
// as Clip(x, 0, 6), adaptive average pooling to 1x1 as GlobalAveragePool, torch.flatten(x, 1) as
// Flatten, nn.Linear on 2-D inputs as Gemm(transB=1) and on 3-D inputs as MatMul by the
// pre-transposed weight + Add, every shape computation folded into a constant. Dropout is gone in
// eval mode.
#include <cmath>

#include "zoo_builder.h"

namespace tessel::tools {
namespace {
using B = ZooBuilder;

// PyTorch's default init for Linear and Conv weights: uniform in +-1/sqrt(fan_in) (kaiming_uniform
// with a = sqrt(5)), which keeps activations finite through deep stacks of random layers.
float torch_range(int64_t fan_in) { return 1.0f / std::sqrt(static_cast<float>(fan_in)); }

// Conv+BN with LeCun-uniform weights, so that activations stay finite through 50 layers.
std::string scaled_conv_bn(B& b, const std::string& x, int64_t in_c, int64_t out_c, int64_t k,
                           int64_t stride, const std::string& activation, int64_t group = 1) {
  return b.conv_bn(x, in_c, out_c, k, stride, group, activation,
                   std::sqrt(3.0f / static_cast<float>(in_c / group * k * k)));
}

std::string max_pool(B& b, const std::string& x, int64_t pad, bool ceil_mode) {
  return b.node("MaxPool", {x},
                {B::i("ceil_mode", ceil_mode ? 1 : 0), B::ints("kernel_shape", {3, 3}),
                 B::ints("pads", {pad, pad, pad, pad}), B::ints("strides", {2, 2})});
}

std::string pool_flatten(B& b, const std::string& x) {
  return b.node("Flatten", {b.node("GlobalAveragePool", {x})}, {B::i("axis", 1)});
}

// nn.Linear on a [1, k] input: Gemm with the [n, k] weight, transB=1.
std::string gemm(B& b, const std::string& x, int64_t k, int64_t n, const std::string& name = "") {
  float r = torch_range(k);
  return b.node("Gemm", {x, b.weight("fc_w", {n, k}, -r, r), b.weight("fc_b", {n}, -r, r)},
                {B::f("alpha", 1.0f), B::f("beta", 1.0f), B::i("transB", 1)}, 1, name);
}

// nn.Linear on a 3-D input: MatMul by the transposed [k, n] weight (folded), then Add of the bias.
std::string matmul_add(B& b, const std::string& x, int64_t k, int64_t n) {
  float r = torch_range(k);
  return b.node("Add",
                {b.node("MatMul", {x, b.weight("w", {k, n}, -r, r)}), b.weight("b", {n}, -r, r)});
}

std::string reshape(B& b, const std::string& x, const std::vector<int64_t>& shape) {
  return b.node("Reshape", {x, b.int64_constant("shape", shape)});
}

std::string transpose(B& b, const std::string& x, const std::vector<int64_t>& perm) {
  return b.node("Transpose", {x}, {B::ints("perm", perm)});
}

void resnet50(const std::string& path) {
  B b("resnet50", 17, 5);
  std::string h = scaled_conv_bn(b, b.input("data", {1, 3, 224, 224}), 3, 64, 7, 2, "Relu");
  h = max_pool(b, h, 1, false);
  struct Stage {
    int64_t mid, out, blocks, stride;
  };
  int64_t in_c = 64;
  for (Stage s : {Stage{64, 256, 3, 1}, Stage{128, 512, 4, 2}, Stage{256, 1024, 6, 2},
                  Stage{512, 2048, 3, 2}}) {
    for (int64_t block = 0; block < s.blocks; ++block) {
      int64_t stride = block == 0 ? s.stride : 1;
      std::string a = scaled_conv_bn(b, h, in_c, s.mid, 1, 1, "Relu");
      a = scaled_conv_bn(b, a, s.mid, s.mid, 3, stride, "Relu");
      a = scaled_conv_bn(b, a, s.mid, s.out, 1, 1, "");
      std::string shortcut = block == 0 ? scaled_conv_bn(b, h, in_c, s.out, 1, stride, "") : h;
      h = b.node("Relu", {b.node("Add", {a, shortcut})});
      in_c = s.out;
    }
  }
  h = pool_flatten(b, h);
  h = b.node("Gemm", {h, b.weight("fc_w", {1000, 2048}, -0.04f, 0.04f), b.weight("fc_b", {1000})},
             {B::i("transB", 1)});
  b.node("Softmax", {h}, {B::i("axis", 1)}, 1, "prob");
  b.output("prob", {1, 1000});
  b.save(path);
}

void densenet121(const std::string& path) {
  B b("densenet121", 17, 6);
  // Pre-activation: BatchNormalization and Relu, then a convolution without bias.
  auto bn_relu = [&](const std::string& x, int64_t c) {
    return b.node("Relu", {b.node("BatchNormalization",
                                  {x, b.weight("gamma", {c}, 0.5f, 1.5f), b.weight("beta", {c}),
                                   b.weight("mean", {c}), b.weight("var", {c}, 0.5f, 1.5f)},
                                  {B::f("epsilon", 1e-5f)})});
  };
  auto conv = [&](const std::string& x, int64_t in_c, int64_t out_c, int64_t k) {
    return b.conv(x, in_c, out_c, k, 1, k / 2, 1,
                  std::sqrt(3.0f / static_cast<float>(in_c * k * k)));
  };
  const int64_t growth = 32;
  std::string h = scaled_conv_bn(b, b.input("data", {1, 3, 224, 224}), 3, 64, 7, 2, "Relu");
  h = max_pool(b, h, 1, false);
  int64_t c = 64;
  const std::vector<int64_t> blocks = {6, 12, 24, 16};
  for (size_t block = 0; block < blocks.size(); ++block) {
    // As torchvision's _DenseBlock: each layer concatenates the block's input and the features
    // so far (one Concat of all of them, the first of the input alone), and so does the block.
    std::vector<std::string> features{h};
    for (int64_t layer = 0; layer < blocks[block]; ++layer) {
      std::string x = b.node("Concat", features, {B::i("axis", 1)});
      std::string y = conv(bn_relu(x, c), c, 4 * growth, 1);
      features.push_back(conv(bn_relu(y, 4 * growth), 4 * growth, growth, 3));
      c += growth;
    }
    h = b.node("Concat", features, {B::i("axis", 1)});
    if (block + 1 == blocks.size()) break;
    h = conv(bn_relu(h, c), c, c / 2, 1);
    h = b.node("AveragePool", {h}, {B::ints("kernel_shape", {2, 2}), B::ints("strides", {2, 2})});
    c /= 2;
  }
  h = pool_flatten(b, bn_relu(h, c));
  h = b.node("Gemm", {h, b.weight("fc_w", {1000, c}, -0.04f, 0.04f), b.weight("fc_b", {1000})},
             {B::i("transB", 1)});
  b.node("Softmax", {h}, {B::i("axis", 1)}, 1, "prob");
  b.output("prob", {1, 1000});
  b.save(path);
}

// torchvision resnet18: BasicBlocks [2, 2, 2, 2]; a block whose stride or width changes has a
// 1x1 conv + BN shortcut (downsample). Exported as Add(block, shortcut) then Relu.
void resnet18(const std::string& path) {
  B b("resnet18", 17, 7);
  std::string h = scaled_conv_bn(b, b.input("input", {1, 3, 224, 224}), 3, 64, 7, 2, "Relu");
  h = max_pool(b, h, 1, false);
  int64_t in_c = 64;
  for (int64_t out_c : {64, 128, 256, 512}) {
    for (int block = 0; block < 2; ++block) {
      int64_t stride = block == 0 && out_c != 64 ? 2 : 1;
      std::string a = scaled_conv_bn(b, h, in_c, out_c, 3, stride, "Relu");
      a = scaled_conv_bn(b, a, out_c, out_c, 3, 1, "");
      std::string shortcut =
          stride != 1 || in_c != out_c ? scaled_conv_bn(b, h, in_c, out_c, 1, stride, "") : h;
      h = b.node("Relu", {b.node("Add", {a, shortcut})});
      in_c = out_c;
    }
  }
  gemm(b, pool_flatten(b, h), 512, 1000, "logits");
  b.output("logits", {1, 1000});
  b.save(path);
}

// torchvision mobilenet_v2 (width 1.0): its inverted-residual table (expansion t, channels c,
// repeats n, first stride s); a block expands with a 1x1 conv (unless t = 1), filters with a 3x3
// depthwise conv, projects with a linear 1x1 conv, and adds its input when stride is 1 and the
// width is unchanged (exported as Add(x, block)).
void mobilenet_v2(const std::string& path) {
  B b("mobilenet_v2", 17, 8);
  std::string h = scaled_conv_bn(b, b.input("input", {1, 3, 224, 224}), 3, 32, 3, 2, "Relu6");
  struct Row {
    int64_t t, c, n, s;
  };
  int64_t in_c = 32;
  for (Row r : {Row{1, 16, 1, 1}, Row{6, 24, 2, 2}, Row{6, 32, 3, 2}, Row{6, 64, 4, 2},
                Row{6, 96, 3, 1}, Row{6, 160, 3, 2}, Row{6, 320, 1, 1}}) {
    for (int64_t i = 0; i < r.n; ++i) {
      int64_t stride = i == 0 ? r.s : 1, hidden = in_c * r.t;
      std::string y = r.t == 1 ? h : scaled_conv_bn(b, h, in_c, hidden, 1, 1, "Relu6");
      y = scaled_conv_bn(b, y, hidden, hidden, 3, stride, "Relu6", hidden);
      y = scaled_conv_bn(b, y, hidden, r.c, 1, 1, "");
      h = stride == 1 && in_c == r.c ? b.node("Add", {h, y}) : y;
      in_c = r.c;
    }
  }
  h = scaled_conv_bn(b, h, 320, 1280, 1, 1, "Relu6");
  gemm(b, pool_flatten(b, h), 1280, 1000, "logits");
  b.output("logits", {1, 1000});
  b.save(path);
}

// torchvision squeezenet1_1: convs with bias and no BatchNorm, MaxPool with ceil_mode, Fire modules
// (a 1x1 squeeze conv, then 1x1 and 3x3 expand convs concatenated on channels), and a 1x1 conv
// classifier before the global pooling.
void squeezenet1_1(const std::string& path) {
  B b("squeezenet1_1", 17, 9);
  auto conv_relu = [&](const std::string& x, int64_t in_c, int64_t out_c, int64_t k, int64_t stride,
                       int64_t pad) {
    return b.node("Relu",
                  {b.conv(x, in_c, out_c, k, stride, pad, 1, torch_range(in_c * k * k), true)});
  };
  auto fire = [&](const std::string& x, int64_t in_c, int64_t squeeze, int64_t expand) {
    std::string s = conv_relu(x, in_c, squeeze, 1, 1, 0);
    return b.node("Concat",
                  {conv_relu(s, squeeze, expand, 1, 1, 0), conv_relu(s, squeeze, expand, 3, 1, 1)},
                  {B::i("axis", 1)});
  };
  std::string h = conv_relu(b.input("input", {1, 3, 224, 224}), 3, 64, 3, 2, 0);
  h = max_pool(b, h, 0, true);
  h = fire(fire(h, 64, 16, 64), 128, 16, 64);
  h = max_pool(b, h, 0, true);
  h = fire(fire(h, 128, 32, 128), 256, 32, 128);
  h = max_pool(b, h, 0, true);
  h = fire(fire(h, 256, 48, 192), 384, 48, 192);
  h = fire(fire(h, 384, 64, 256), 512, 64, 256);
  h = conv_relu(h, 512, 1000, 1, 1, 0);
  b.node("Flatten", {b.node("GlobalAveragePool", {h})}, {B::i("axis", 1)}, 1, "logits");
  b.output("logits", {1, 1000});
  b.save(path);
}

// nn.TransformerEncoder(nn.TransformerEncoderLayer(d_model=256, nhead=4, dim_feedforward=1024,
// activation="gelu", batch_first=True), num_layers=4), post-norm (norm_first=False), on a
// [1, 128, 256] input, as torch.onnx.export (opset 17) writes PyTorch 2.x's slow path
// (F.multi_head_attention_forward with need_weights=False):
// - batch_first: Transpose [1,0,2] to sequence-first [128, 1, 256] on the way in and back out of
//   each attention;
// - the packed in-projection (_in_projection_packed): MatMul by the [256, 768] weight + Add, then
//   unflatten(-1, (3, E)).unsqueeze(0).transpose(0, -2).squeeze(-2) as Reshape [128,1,3,256],
//   Unsqueeze 0, Transpose [3,1,2,0,4], Squeeze -2, and q, k, v as Gather 0, 1, 2 on axis 0;
// - per head: view(128, 4, 64) + transpose(0, 1) as Reshape + Transpose [1,0,2], then
//   view(1, 4, 128, 64) as Reshape;
// - scaled_dot_product_attention's symbolic (symbolic_opset14): q * sqrt(scale),
//   Transpose(k, [0,1,3,2]) * sqrt(scale), MatMul, Softmax(-1), MatMul with v (scale =
//   1/sqrt(64), its Sqrt folded);
// - permute(2, 0, 1, 3) + view(128, 256) as Transpose + Reshape, the out-projection on that 2-D
//   tensor as Gemm(transB=1), view(128, 1, 256) as Reshape;
// - norm1(x + attention), norm2(x + FFN) as Add + LayerNormalization(axis -1, epsilon 1e-5);
// - the FFN's exact GELU as the exporter's Div(x, sqrt 2), Erf, Add 1, Mul x, Mul 0.5.
void transformer_encoder(const std::string& path) {
  const int64_t seq = 128, dim = 256, heads = 4, hd = dim / heads, ffn = 1024, layers = 4;
  B b("transformer_encoder", 17, 10);
  std::string x = b.input("src", {1, seq, dim});
  auto layer_norm = [&](const std::string& in, const std::string& name = "") {
    return b.node("LayerNormalization",
                  {in, b.weight("ln_g", {dim}, 0.8f, 1.2f), b.weight("ln_b", {dim}, -0.1f, 0.1f)},
                  {B::i("axis", -1), B::f("epsilon", 1e-5f)}, 1, name);
  };
  const std::string sqrt_scale =
      b.float_constant("sqrt_scale", std::sqrt(1.0f / std::sqrt(static_cast<float>(hd))));
  for (int64_t layer = 0; layer < layers; ++layer) {
    std::string s = transpose(b, x, {1, 0, 2});
    std::string proj = reshape(b, matmul_add(b, s, dim, 3 * dim), {seq, 1, 3, dim});
    proj = b.node("Unsqueeze", {proj, b.int64_constant("axes", {0})});
    proj = transpose(b, proj, {3, 1, 2, 0, 4});
    proj = b.node("Squeeze", {proj, b.int64_constant("axes", {-2})});
    auto head = [&](int64_t index) {
      std::string t = b.node("Gather", {proj, b.int64_scalar("index", index)}, {B::i("axis", 0)});
      t = transpose(b, reshape(b, t, {seq, heads, hd}), {1, 0, 2});
      return reshape(b, t, {1, heads, seq, hd});
    };
    std::string q = head(0), k = head(1), v = head(2);
    std::string scores =
        b.node("MatMul", {b.node("Mul", {q, sqrt_scale}),
                          b.node("Mul", {transpose(b, k, {0, 1, 3, 2}), sqrt_scale})});
    std::string ctx = b.node("MatMul", {b.node("Softmax", {scores}, {B::i("axis", -1)}), v});
    ctx = reshape(b, transpose(b, ctx, {2, 0, 1, 3}), {seq, dim});
    ctx = reshape(b, gemm(b, ctx, dim, dim), {seq, 1, dim});
    x = layer_norm(b.node("Add", {x, transpose(b, ctx, {1, 0, 2})}));
    std::string f = matmul_add(b, x, dim, ffn);
    std::string erf =
        b.node("Erf", {b.node("Div", {f, b.float_constant("sqrt2", std::sqrt(2.0f))})});
    f = b.node("Mul", {b.node("Mul", {f, b.node("Add", {erf, b.float_constant("one", 1.0f)})}),
                       b.float_constant("half", 0.5f)});
    x = layer_norm(b.node("Add", {x, matmul_add(b, f, ffn, dim)}), layer + 1 == layers ? "y" : "");
  }
  b.output("y", {1, seq, dim});
  b.save(path);
}

// nn.LSTM(input_size=128, hidden_size=256, num_layers=2) over 64 steps of a [64, 1, 128]
// (sequence-first) input, then nn.Linear(256, 10) on the last step's output. The exporter writes
// one ONNX LSTM per layer: W [1, 1024, in], R [1, 1024, 256] (gates reordered to i, o, f, c),
// B [1, 2048] (input and recurrent biases), no sequence_lens, zero initial_h and initial_c
// [1, 1, 256] (the zeros nn.LSTM makes when no state is given, folded); Y [64, 1, 1, 256] is
// squeezed on axis 1 for the next layer, and out[-1] is a Gather of index -1 on axis 0.
void lstm(const std::string& path) {
  const int64_t steps = 64, in = 128, hidden = 256, layers = 2;
  B b("lstm", 17, 11);
  std::string h = b.input("input", {steps, 1, in});
  const float r = torch_range(hidden);
  for (int64_t layer = 0, width = in; layer < layers; ++layer, width = hidden) {
    std::string y = b.node(
        "LSTM",
        {h, b.weight("W", {1, 4 * hidden, width}, -r, r),
         b.weight("R", {1, 4 * hidden, hidden}, -r, r), b.weight("B", {1, 8 * hidden}, -r, r), "",
         b.weight("initial_h", {1, 1, hidden}, 0.0f, 0.0f),  // zeros
         b.weight("initial_c", {1, 1, hidden}, 0.0f, 0.0f)},
        {B::i("hidden_size", hidden)}, 3);
    h = b.node("Squeeze", {y, b.int64_constant("axes", {1})});
  }
  h = b.node("Gather", {h, b.int64_scalar("index", -1)}, {B::i("axis", 0)});
  gemm(b, h, hidden, 10, "logits");
  b.output("logits", {1, 10});
  b.save(path);
}

// nn.Sequential(Linear(784, 512), ReLU, Linear(512, 512), ReLU, Linear(512, 10)) on [1, 784].
void mlp(const std::string& path) {
  B b("mlp", 17, 12);
  std::string h = b.input("input", {1, 784});
  h = b.node("Relu", {gemm(b, h, 784, 512)});
  h = b.node("Relu", {gemm(b, h, 512, 512)});
  gemm(b, h, 512, 10, "logits");
  b.output("logits", {1, 10});
  b.save(path);
}

constexpr int kChainLength = 32;

// Softmax over the last axis of attention scores [12, 128, 128] (BERT-base's heads at sequence
// length 128), 32 times in a row.
void softmax_chain(const std::string& path) {
  B b("softmax_chain", 17, 13);
  std::string x = b.input("scores", {12, 128, 128});
  for (int i = 0; i < kChainLength; ++i) x = b.node("Softmax", {x}, {B::i("axis", -1)});
  b.output(x, {12, 128, 128});
  b.save(path);
}

// LayerNormalization over the last axis of [128, 768] (BERT-base's hidden states at sequence
// length 128), 32 times in a row, each with its own scale and bias.
void layernorm_chain(const std::string& path) {
  B b("layernorm_chain", 17, 14);
  std::string x = b.input("hidden", {128, 768});
  for (int i = 0; i < kChainLength; ++i) {
    x = b.node("LayerNormalization",
               {x, b.weight("gamma", {768}, 0.5f, 1.5f), b.weight("beta", {768})},
               {B::i("axis", -1)});
  }
  b.output(x, {128, 768});
  b.save(path);
}

// RMSNorm as PyTorch exports LLaMA's (x / sqrt(mean(x^2) + eps) * weight, the square a Pow by a
// constant 2) over the last axis of [128, 768], 32 times in a row, each with its own weight.
void rmsnorm_chain(const std::string& path) {
  B b("rmsnorm_chain", 17, 15);
  std::string x = b.input("hidden", {128, 768});
  std::string two = b.float_constant("two", 2.0f), eps = b.float_constant("eps", 1e-6f);
  for (int i = 0; i < kChainLength; ++i) {
    std::string mean_square = b.node("ReduceMean", {b.node("Pow", {x, two})},
                                     {B::ints("axes", {-1}), B::i("keepdims", 1)});
    std::string scale = b.node("Reciprocal", {b.node("Sqrt", {b.node("Add", {mean_square, eps})})});
    x = b.node("Mul", {b.node("Mul", {x, scale}), b.weight("weight", {768}, 0.5f, 1.5f)});
  }
  b.output(x, {128, 768});
  b.save(path);
}

}  // namespace

const std::vector<FullSizeModel>& full_size_models() {
  static const std::vector<FullSizeModel> models = {
      {"resnet50", "ResNet-50 v1, 224x224, with a Softmax (25.6M weights)", resnet50},
      {"densenet121", "DenseNet-121, 224x224, with a Softmax (8M weights)", densenet121},
      {"resnet18", "torchvision resnet18, 224x224 (11.7M weights)", resnet18},
      {"mobilenet_v2", "torchvision mobilenet_v2, 224x224 (3.5M weights)", mobilenet_v2},
      {"squeezenet1_1", "torchvision squeezenet1_1, 224x224 (1.2M weights)", squeezenet1_1},
      {"transformer_encoder",
       "nn.TransformerEncoder: 4 layers, d_model 256, 4 heads, FFN 1024, GELU, seq 128",
       transformer_encoder},
      {"lstm", "2-layer LSTM (input 128, hidden 256, 64 steps) + Linear(256, 10)", lstm},
      {"mlp", "MLP 784-512-512-10 (Gemm + Relu)", mlp},
      {"softmax_chain", "kernel chain: 32 x Softmax(axis -1) on [12, 128, 128]", softmax_chain,
       true},
      {"layernorm_chain", "kernel chain: 32 x LayerNormalization(axis -1) on [128, 768]",
       layernorm_chain, true},
      {"rmsnorm_chain", "kernel chain: 32 x RMSNorm (Pow 2, ReduceMean, Sqrt) on [128, 768]",
       rmsnorm_chain, true},
  };
  return models;
}

const FullSizeModel* find_full_size_model(const std::string& name) {
  for (const FullSizeModel& m : full_size_models())
    if (m.name == name) return &m;
  return nullptr;
}

}  // namespace tessel::tools
