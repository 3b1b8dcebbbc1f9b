#include <gtest/gtest.h>

#include "ir/ops/conv_packing.h"
#include "tests/ir/ops/nn_test_util.h"

namespace tessel::graph::nn_testing {
namespace {

using Ints = std::vector<int64_t>;
constexpr int64_t kU = kUnknownDim;

Ints conv_shape(Ints x, Ints w, std::map<std::string, Attr> attrs = {}) {
  return infer("Conv", {f32(x), f32(w)}, std::move(attrs))[0].shape;
}

TEST(NnInferTest, ConvStridesPadsDilationsAndGroups) {
  EXPECT_EQ(conv_shape({1, 3, 224, 224}, {64, 3, 7, 7},
                       {{"strides", Ints{2, 2}}, {"pads", Ints{3, 3, 3, 3}}}),
            (Ints{1, 64, 112, 112}));
  EXPECT_EQ(
      conv_shape({2, 8, 10, 9}, {16, 2, 3, 3}, {{"group", int64_t{4}}, {"dilations", Ints{2, 3}}}),
      (Ints{2, 16, 6, 3}));
  EXPECT_EQ(conv_shape({1, 32, 7, 7}, {32, 1, 3, 3},
                       {{"group", int64_t{32}}, {"pads", Ints{1, 0, 1, 2}}}),
            (Ints{1, 32, 7, 7}));
  EXPECT_EQ(conv_shape({1, 2, 11}, {4, 2, 3}, {{"strides", Ints{3}}}), (Ints{1, 4, 3}));
  EXPECT_EQ(conv_shape({1, 2, 4, 5, 6}, {4, 2, 2, 2, 2}), (Ints{1, 4, 3, 4, 5}));
  EXPECT_EQ(conv_shape({kU, 3, kU, 8}, {5, 3, 3, 3}), (Ints{kU, 5, kU, 6}));
}

TEST(NnInferTest, ConvAutoPad) {
  EXPECT_EQ(conv_shape({1, 1, 7, 8}, {1, 1, 3, 3},
                       {{"auto_pad", std::string("SAME_UPPER")}, {"strides", Ints{2, 2}}}),
            (Ints{1, 1, 4, 4}));
  EXPECT_EQ(conv_shape({1, 1, 7, 8}, {1, 1, 3, 3}, {{"auto_pad", std::string("SAME_LOWER")}}),
            (Ints{1, 1, 7, 8}));
  EXPECT_EQ(conv_shape({1, 1, 7, 8}, {1, 1, 3, 3},
                       {{"auto_pad", std::string("VALID")}, {"strides", Ints{2, 2}}}),
            (Ints{1, 1, 3, 3}));
}

TEST(NnInferTest, ConvErrorsNameTheNode) {
  expect_infer_error("channels", "Conv", {f32({1, 4, 5, 5}), f32({2, 3, 3, 3})});
  expect_infer_error("divisible by group", "Conv", {f32({1, 4, 5, 5}), f32({3, 2, 3, 3})},
                     {{"group", int64_t{2}}});
  expect_infer_error("smaller than the kernel", "Conv", {f32({1, 1, 2, 2}), f32({1, 1, 3, 3})});
  expect_infer_error("'strides' has 1 entries", "Conv", {f32({1, 1, 5, 5}), f32({1, 1, 3, 3})},
                     {{"strides", Ints{2}}});
  expect_infer_error("auto_pad", "Conv", {f32({1, 1, 5, 5}), f32({1, 1, 3, 3})},
                     {{"auto_pad", std::string("SAME")}});
  expect_infer_error("rank", "Conv", {f32({1, 1, 5, 5}), f32({1, 1, 3})});
}

TEST(NnInferTest, PackedConvShapesAndErrors) {
  auto shape = [](Ints x, Ints w, std::map<std::string, Attr> attrs = {}) {
    return infer("ConvNCHWc", {f32(x), f32(w)}, std::move(attrs))[0].shape;
  };
  EXPECT_EQ(shape({1, 32, 14, 14}, {4, 32, 3, 3, 16},
                  {{"pads", Ints{1, 1, 1, 1}}, {"strides", Ints{2, 2}}}),
            (Ints{1, 64, 7, 7}));
  EXPECT_EQ(shape({1, 8, 9}, {1, 8, 1, 16}), (Ints{1, 16, 9}));
  expect_infer_error("packed W must have rank 5", "ConvNCHWc",
                     {f32({1, 32, 7, 7}), f32({64, 32, 3, 3})});
  expect_infer_error("X has 8 channels but W expects 32", "ConvNCHWc",
                     {f32({1, 8, 7, 7}), f32({2, 32, 3, 3, 16})});
  // A padded last block: output_channels keeps the true count.
  EXPECT_EQ(infer("ConvNCHWc", {f32({1, 8, 9, 9}), f32({63, 8, 1, 1, 16})},
                  {{"output_channels", Attr(int64_t{1000})}})[0]
                .shape,
            (Ints{1, 1000, 9, 9}));
  expect_infer_error("output_channels 984 does not fit packed W", "ConvNCHWc",
                     {f32({1, 8, 9, 9}), f32({63, 8, 1, 1, 16})},
                     {{"output_channels", Attr(int64_t{984})}});
  // Internal: no ONNX opset imports it.
  EXPECT_EQ(find_op("ConvNCHWc")->since_opset, kInternalOp);
}

// Activations blocked by channel (passes/alter_op_layout): ConvNCHWc and the windowed pools read
// and write [N, C / b, s..., b], the global pools read it and write NCHW; anything else is an error
// that names the node (passes/infer_type checks the ops without a layout of their own).
TEST(NnInferTest, ChannelBlockedShapesAndErrors) {
  Attr b16(int64_t{16});
  EXPECT_EQ(infer("ConvNCHWc", {f32({1, 2, 7, 7, 16}), f32({4, 32, 3, 3, 16})},
                  {{"pads", Ints{1, 1, 1, 1}}, {"input_block", b16}, {"output_block", b16}})[0]
                .shape,
            (Ints{1, 4, 7, 7, 16}));
  EXPECT_EQ(
      infer("ConvNCHWc", {f32({1, 2, 7, 7, 16}), f32({4, 32, 1, 1, 16})}, {{"input_block", b16}})[0]
          .shape,
      (Ints{1, 64, 7, 7}));
  EXPECT_EQ(infer("MaxPool", {f32({1, 3, 8, 8, 16})},
                  {{"kernel_shape", Ints{2, 2}},
                   {"strides", Ints{2, 2}},
                   {"input_block", b16},
                   {"output_block", b16}})[0]
                .shape,
            (Ints{1, 3, 4, 4, 16}));
  EXPECT_EQ(infer("GlobalAveragePool", {f32({1, 3, 8, 8, 16})}, {{"input_block", b16}})[0].shape,
            (Ints{1, 48, 1, 1}));
  expect_infer_error("input_block 16 needs X as [N, C / 16, spatial..., 16]", "ConvNCHWc",
                     {f32({1, 32, 7, 7}), f32({4, 32, 3, 3, 16})}, {{"input_block", b16}});
  // A padded last block written blocked: Y keeps it whole, and the bias must cover it.
  EXPECT_EQ(infer("ConvNCHWc", {f32({1, 8, 9, 9}), f32({63, 8, 1, 1, 16}), f32({1008})},
                  {{"output_channels", Attr(int64_t{1000})}, {"output_block", b16}})[0]
                .shape,
            (Ints{1, 63, 9, 9, 16}));
  expect_infer_error(
      "output_channels 1000 needs B padded to the 1008 packed channels, got "
      "float32[1000]",
      "ConvNCHWc", {f32({1, 8, 9, 9}), f32({63, 8, 1, 1, 16}), f32({1000})},
      {{"output_channels", Attr(int64_t{1000})}, {"output_block", b16}});
  // A global pool over it pools the first output_channels.
  EXPECT_EQ(infer("GlobalAveragePool", {f32({1, 63, 9, 9, 16})},
                  {{"input_block", b16}, {"output_channels", Attr(int64_t{1000})}})[0]
                .shape,
            (Ints{1, 1000, 1, 1}));
  expect_infer_error("output_channels 992 does not fit X float32[1, 63, 9, 9, 16]", "GlobalMaxPool",
                     {f32({1, 63, 9, 9, 16})},
                     {{"input_block", b16}, {"output_channels", Attr(int64_t{992})}});
  expect_infer_error("it needs X blocked (input_block)", "GlobalAveragePool",
                     {f32({1, 1000, 9, 9})}, {{"output_channels", Attr(int64_t{1000})}});
  expect_infer_error("input_block is for ops that read blocked channels, not LpPool", "LpPool",
                     {f32({1, 2, 7, 7, 16})}, {{"kernel_shape", Ints{2, 2}}, {"input_block", b16}});
  expect_infer_error("output_block 8 differs from packed W's block of 16", "ConvNCHWc",
                     {f32({1, 32, 7, 7}), f32({4, 32, 3, 3, 16})},
                     {{"output_block", Attr(int64_t{8})}});
  expect_infer_error("input_block is 16 and output_block 0", "AveragePool", {f32({1, 1, 4, 4, 16})},
                     {{"kernel_shape", Ints{2, 2}}, {"input_block", b16}});
  // A depthwise packed conv: group = C = M, W [M / 16, 1, k..., 16].
  EXPECT_EQ(infer("ConvNCHWc", {f32({1, 2, 8, 8, 16}), f32({2, 1, 3, 3, 16})},
                  {{"group", Attr(int64_t{32})},
                   {"strides", Ints{2, 2}},
                   {"pads", Ints{1, 1, 1, 1}},
                   {"input_block", b16},
                   {"output_block", b16}})[0]
                .shape,
            (Ints{1, 2, 4, 4, 16}));
  expect_infer_error("a packed conv with group 2 must be depthwise", "ConvNCHWc",
                     {f32({1, 32, 7, 7}), f32({2, 16, 3, 3, 16})}, {{"group", Attr(int64_t{2})}});
  expect_infer_error("output_block is for ops that write blocked channels, not GlobalMaxPool",
                     "GlobalMaxPool", {f32({1, 1, 4, 4, 16})},
                     {{"input_block", b16}, {"output_block", b16}});
}

TEST(ConvPackingTest, PackingBlocksOutputChannelsAndUnpackingInvertsIt) {
  TensorData w(DataType::f32(), {32, 3, 2, 1});
  for (int64_t i = 0; i < w.numel(); ++i) w.data<float>()[i] = static_cast<float>(i);
  TensorData packed = ops::pack_output_channels(w, 16);
  EXPECT_EQ(packed.shape(), (Ints{2, 3, 2, 1, 16}));
  // Output channel 16 * ob + b at (c, kh, kw) sits at [ob, c, kh, kw, b].
  auto plain_at = [](Ints i) { return ((i[0] * 3 + i[1]) * 2 + i[2]) * 1 + i[3]; };
  auto packed_at = [](int64_t ob, int64_t c, int64_t kh, int64_t b) {
    return ((ob * 3 + c) * 2 + kh) * 16 + b;
  };
  EXPECT_EQ(packed.get_double(packed_at(1, 2, 1, 5)), w.get_double(plain_at({21, 2, 1, 0})));
  EXPECT_EQ(packed.get_double(packed_at(0, 1, 0, 15)), w.get_double(plain_at({15, 1, 0, 0})));
  TensorData back = ops::unpack_output_channels(packed);
  ASSERT_EQ(back.shape(), w.shape());
  for (int64_t i = 0; i < w.numel(); ++i) EXPECT_EQ(back.get_double(i), w.get_double(i));
  // 32 channels in blocks of 12: three blocks, the last 4 channels zero; unpacking takes the 32.
  TensorData padded = ops::pack_output_channels(w, 12);
  EXPECT_EQ(padded.shape(), (Ints{3, 3, 2, 1, 12}));
  EXPECT_EQ(padded.get_double(((2 * 3 + 2) * 2 + 1) * 12 + 7),
            w.get_double(plain_at({31, 2, 1, 0})));
  for (int64_t b = 8; b < 12; ++b) EXPECT_EQ(padded.get_double(((2 * 3 + 1) * 2 + 0) * 12 + b), 0);
  TensorData trimmed = ops::unpack_output_channels(padded, 32);
  ASSERT_EQ(trimmed.shape(), w.shape());
  for (int64_t i = 0; i < w.numel(); ++i) EXPECT_EQ(trimmed.get_double(i), w.get_double(i));
  EXPECT_EQ(ops::unpack_output_channels(padded).shape(), (Ints{36, 3, 2, 1}));
  EXPECT_THROW(ops::unpack_output_channels(padded, 37), InternalError);
}

TEST(NnInferTest, ConvTransposeShapes) {
  auto ct = [](Ints x, Ints w, std::map<std::string, Attr> attrs) {
    return infer("ConvTranspose", {f32(x), f32(w)}, std::move(attrs))[0].shape;
  };
  EXPECT_EQ(ct({1, 1, 3, 3}, {1, 2, 3, 3}, {}), (Ints{1, 2, 5, 5}));
  EXPECT_EQ(
      ct({1, 1, 3, 3}, {1, 2, 3, 3}, {{"strides", Ints{3, 2}}, {"output_padding", Ints{1, 1}}}),
      (Ints{1, 2, 10, 8}));
  EXPECT_EQ(ct({1, 1, 3, 3}, {1, 2, 3, 3}, {{"strides", Ints{3, 2}}, {"pads", Ints{1, 2, 1, 2}}}),
            (Ints{1, 2, 7, 3}));
  EXPECT_EQ(
      ct({1, 1, 3, 3}, {1, 2, 3, 3}, {{"output_shape", Ints{10, 8}}, {"strides", Ints{3, 2}}}),
      (Ints{1, 2, 10, 8}));
  EXPECT_EQ(ct({1, 1, 3, 3}, {1, 2, 3, 3},
               {{"auto_pad", std::string("SAME_UPPER")}, {"strides", Ints{2, 2}}}),
            (Ints{1, 2, 6, 6}));
  EXPECT_EQ(ct({1, 4, 3}, {4, 3, 2}, {{"group", int64_t{2}}, {"dilations", Ints{2}}}),
            (Ints{1, 6, 5}));
}

TEST(NnInferTest, PoolShapes) {
  auto pool = [](const std::string& op, Ints x, std::map<std::string, Attr> attrs,
                 size_t outs = 1) { return infer(op, {f32(x)}, std::move(attrs), outs); };
  EXPECT_EQ(
      pool("MaxPool", {1, 3, 32, 32}, {{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}}})[0]
          .shape,
      (Ints{1, 3, 16, 16}));
  EXPECT_EQ(
      pool("MaxPool", {1, 1, 4, 4},
           {{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"ceil_mode", int64_t{1}}})[0]
          .shape,
      (Ints{1, 1, 2, 2}));
  // ceil_mode drops a last window that would start in the end padding: ceil((6 + 2 - 3) / 3) + 1 =
  // 3 -> 2.
  EXPECT_EQ(pool("AveragePool", {1, 1, 6, 6},
                 {{"kernel_shape", Ints{3, 3}},
                  {"strides", Ints{3, 3}},
                  {"pads", Ints{0, 0, 2, 2}},
                  {"ceil_mode", int64_t{1}}})[0]
                .shape,
            (Ints{1, 1, 2, 2}));
  EXPECT_EQ(
      pool("MaxPool", {1, 1, 8, 8}, {{"kernel_shape", Ints{3, 3}}, {"dilations", Ints{2, 2}}})[0]
          .shape,
      (Ints{1, 1, 4, 4}));
  auto with_indices = pool("MaxPool", {1, 1, 5},
                           {{"kernel_shape", Ints{2}}, {"auto_pad", std::string("SAME_UPPER")}}, 2);
  EXPECT_EQ(with_indices[0].shape, (Ints{1, 1, 5}));
  EXPECT_EQ(with_indices[1].dtype, DataType::i64());
  EXPECT_EQ(pool("GlobalAveragePool", {2, 3, 7, 5}, {})[0].shape, (Ints{2, 3, 1, 1}));
  EXPECT_EQ(pool("LpPool", {2, 3, 7}, {{"kernel_shape", Ints{3}}})[0].shape, (Ints{2, 3, 5}));
  expect_infer_error("kernel_shape has 1 entries", "MaxPool", {f32({1, 1, 4, 4})},
                     {{"kernel_shape", Ints{2}}});
  expect_infer_error("rank >= 3", "GlobalMaxPool", {f32({4, 4})});
}

TEST(NnInferTest, GemmAndMatMul) {
  EXPECT_EQ(infer("Gemm", {f32({4, 3}), f32({5, 4}), f32({5})},
                  {{"transA", int64_t{1}}, {"transB", int64_t{1}}})[0]
                .shape,
            (Ints{3, 5}));
  EXPECT_EQ(infer("Gemm", {f32({2, 3}), f32({3, 4}), f32({2, 1})})[0].shape, (Ints{2, 4}));
  expect_infer_error("inner dims", "Gemm", {f32({2, 3}), f32({4, 4})});
  expect_infer_error("broadcast", "Gemm", {f32({2, 3}), f32({3, 4}), f32({3, 4})});
  EXPECT_EQ(infer("MatMul", {f32({2, 1, 3, 4}), f32({5, 4, 6})})[0].shape, (Ints{2, 5, 3, 6}));
  EXPECT_EQ(infer("MatMul", {f32({4}), f32({2, 4, 6})})[0].shape, (Ints{2, 6}));
  EXPECT_EQ(infer("MatMul", {f32({3, 4}), f32({4})})[0].shape, (Ints{3}));
  EXPECT_EQ(infer("MatMul", {f32({4}), f32({4})})[0].shape, (Ints{}));
  EXPECT_EQ(infer("MatMul", {f32({kU, 3, 4}), f32({4, kU})})[0].shape, (Ints{kU, 3, kU}));
  expect_infer_error("inner dims 4 and 5", "MatMul", {f32({3, 4}), f32({5, 6})});
  expect_infer_error("do not broadcast", "MatMul", {f32({2, 3, 4}), f32({3, 4, 6})});
}

TEST(NnInferTest, NormalizationsAndSoftmax) {
  TensorType x = f32({2, 3, 4, 4}), c = f32({3});
  EXPECT_EQ(infer("BatchNormalization", {x, c, c, c, c})[0], x);
  auto training = infer("BatchNormalization", {x, c, c, c, c}, {{"training_mode", int64_t{1}}}, 3);
  EXPECT_EQ(training[2].shape, (Ints{3}));
  expect_infer_error("channels", "BatchNormalization", {x, f32({4}), c, c, c});
  EXPECT_EQ(infer("InstanceNormalization", {x, c, c})[0], x);
  auto ln = infer("LayerNormalization", {x, f32({4, 4}), f32({4})}, {{"axis", int64_t{-2}}}, 3);
  EXPECT_EQ(ln[0], x);
  EXPECT_EQ(ln[1].shape, (Ints{2, 3, 1, 1}));
  EXPECT_EQ(ln[2].dtype, DataType::f32());
  expect_infer_error("axis 4 is out of range", "LayerNormalization", {x, f32({4})},
                     {{"axis", int64_t{4}}});
  // Scale is a required input (a graph without one crashed the te lowering).
  expect_infer_error("input 1 is required", "LayerNormalization", {x});
  EXPECT_EQ(infer("LRN", {x}, {{"size", int64_t{3}}})[0], x);
  expect_infer_error("size", "LRN", {x});
  EXPECT_EQ(infer("Softmax", {x}, {{"axis", int64_t{-3}}})[0], x);
  expect_infer_error("axis 5", "LogSoftmax", {x}, {{"axis", int64_t{5}}});
  expect_infer_error("float", "Hardmax", {TensorType{DataType::i32(), {2}, {}}});
}

TEST(NnInferTest, PatternsFollowTvm) {
  EXPECT_EQ(find_op("Conv")->pattern, OpPattern::kOutEWiseFusable);
  EXPECT_EQ(find_op("MatMul")->pattern, OpPattern::kOutEWiseFusable);
  EXPECT_EQ(find_op("Softmax")->pattern, OpPattern::kOpaque);
}

}  // namespace
}  // namespace tessel::graph::nn_testing
