// The model zoo: small models with random weights shaped like the networks Tessel targets.
#include <cmath>

#include "zoo_builder.h"

namespace tessel::tools {
namespace {
using B = ZooBuilder;

// A ResNet-style CNN: stem, a residual block, a strided block with a projection shortcut,
// global average pooling and a classifier.
void resnet_mini(const std::string& path) {
  B b("resnet_mini", 17, 1);
  std::string h = b.conv_bn(b.input("data", {1, 3, 32, 32}), 3, 16, 3, 1, 1, "Relu");
  std::string a = b.conv_bn(h, 16, 16, 3, 1, 1, "Relu");
  h = b.node("Relu", {b.node("Add", {b.conv_bn(a, 16, 16, 3, 1, 1, ""), h})});
  a = b.conv_bn(h, 16, 32, 3, 2, 1, "Relu");
  std::string proj = b.conv_bn(h, 16, 32, 1, 2, 1, "");
  h = b.node("Relu", {b.node("Add", {b.conv_bn(a, 32, 32, 3, 1, 1, ""), proj})});
  h = b.node("Flatten", {b.node("GlobalAveragePool", {h})}, {B::i("axis", 1)});
  h = b.node("Gemm", {h, b.weight("fc_w", {10, 32}), b.weight("fc_b", {10})}, {B::i("transB", 1)});
  b.node("Softmax", {h}, {B::i("axis", 1)}, 1, "prob");
  b.output("prob", {1, 10});
  b.save(path);
}

// A MobileNetV2-style network: inverted residuals with depthwise convolutions and ReLU6 (Clip).
void mobilenet_mini(const std::string& path) {
  B b("mobilenet_mini", 17, 2);
  std::string h = b.conv_bn(b.input("data", {1, 3, 32, 32}), 3, 16, 3, 2, 1, "Relu6");
  std::string e = b.conv_bn(h, 16, 64, 1, 1, 1, "Relu6");
  std::string d = b.conv_bn(e, 64, 64, 3, 1, 64, "Relu6");
  h = b.node("Add", {b.conv_bn(d, 64, 16, 1, 1, 1, ""), h});
  e = b.conv_bn(h, 16, 64, 1, 1, 1, "Relu6");
  d = b.conv_bn(e, 64, 64, 3, 2, 64, "Relu6");
  h = b.conv_bn(d, 64, 24, 1, 1, 1, "");
  h = b.node("Flatten", {b.node("GlobalAveragePool", {h})}, {B::i("axis", 1)});
  b.node("Gemm", {h, b.weight("fc_w", {10, 24}), b.weight("fc_b", {10})}, {B::i("transB", 1)}, 1,
         "logits");
  b.output("logits", {1, 10});
  b.save(path);
}

// One transformer encoder block: pre-LayerNorm multi-head self-attention (4 heads) and an
// Erf-GELU feed-forward network, each with a residual add.
void transformer_block(const std::string& path) {
  const int64_t seq = 16, dim = 64, heads = 4, hd = dim / heads, ffn = 128;
  B b("transformer_block", 17, 3);
  std::string x = b.input("x", {1, seq, dim});
  auto layer_norm = [&](const std::string& in) {
    return b.node("LayerNormalization",
                  {in, b.weight("ln_g", {dim}, 0.8f, 1.2f), b.weight("ln_b", {dim})},
                  {B::i("axis", -1), B::f("epsilon", 1e-5f)});
  };
  auto dense = [&](const std::string& in, int64_t k, int64_t n) {
    return b.node("Add",
                  {b.node("MatMul", {in, b.weight("w", {k, n}, -0.2f, 0.2f)}), b.weight("b", {n})});
  };
  auto split_heads = [&](const std::string& in, std::vector<int64_t> perm) {
    std::string r = b.node("Reshape", {in, b.int64_constant("shape", {1, seq, heads, hd})});
    return b.node("Transpose", {r}, {B::ints("perm", perm)});
  };
  std::string ln1 = layer_norm(x);
  std::string q = split_heads(dense(ln1, dim, dim), {0, 2, 1, 3});
  std::string kt = split_heads(dense(ln1, dim, dim), {0, 2, 3, 1});
  std::string v = split_heads(dense(ln1, dim, dim), {0, 2, 1, 3});
  std::string scores = b.node(
      "Mul", {b.node("MatMul", {q, kt}), b.float_constant("scale", 1.0f / std::sqrt(float(hd)))});
  std::string attn = b.node("Softmax", {scores}, {B::i("axis", -1)});
  std::string ctx =
      b.node("Transpose", {b.node("MatMul", {attn, v})}, {B::ints("perm", {0, 2, 1, 3})});
  ctx = b.node("Reshape", {ctx, b.int64_constant("shape", {1, seq, dim})});
  std::string h = b.node("Add", {x, dense(ctx, dim, dim)});
  std::string f1 = dense(layer_norm(h), dim, ffn);
  std::string erf =
      b.node("Erf", {b.node("Div", {f1, b.float_constant("sqrt2", std::sqrt(2.0f))})});
  std::string gelu = b.node("Mul", {b.node("Mul", {f1, b.float_constant("half", 0.5f)}),
                                    b.node("Add", {erf, b.float_constant("one", 1.0f)})});
  b.node("Add", {h, dense(gelu, ffn, dim)}, {}, 1, "y");
  b.output("y", {1, seq, dim});
  b.save(path);
}

// An LSTM over 8 steps whose final hidden state feeds a classifier.
void lstm_classifier(const std::string& path) {
  const int64_t steps = 8, in = 16, hidden = 32;
  B b("lstm_classifier", 17, 4);
  std::string x = b.input("seq", {steps, 1, in});
  std::string lstm = b.node("LSTM",
                            {x, b.weight("W", {1, 4 * hidden, in}, -0.3f, 0.3f),
                             b.weight("R", {1, 4 * hidden, hidden}, -0.3f, 0.3f),
                             b.weight("B", {1, 8 * hidden}, -0.1f, 0.1f)},
                            {B::i("hidden_size", hidden)}, 3);
  std::string last = b.node("Squeeze", {lstm + "_1", b.int64_constant("axes", {0})});
  b.node("Gemm", {last, b.weight("fc_w", {10, hidden}), b.weight("fc_b", {10})},
         {B::i("transB", 1)}, 1, "logits");
  b.output("logits", {1, 10});
  b.save(path);
}

}  // namespace

void make_zoo(const std::string& dir) {
  resnet_mini(dir + "/resnet_mini.onnx");
  mobilenet_mini(dir + "/mobilenet_mini.onnx");
  transformer_block(dir + "/transformer_block.onnx");
  lstm_classifier(dir + "/lstm_classifier.onnx");
}

}  // namespace tessel::tools
