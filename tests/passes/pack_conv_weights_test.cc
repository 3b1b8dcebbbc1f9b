// pack_conv_weights: a Conv with rows of partial vectors and a long reduction becomes ConvNCHWc
// reading weights packed by output channel, and computes the same values (reference and compiled);
// other convs are left alone.
#include "passes/pack_conv_weights.h"

#include <gtest/gtest.h>

#include <map>

#include "driver/compile.h"
#include "graph_builder.h"
#include "passes/infer_type.h"
#include "reference/reference.h"
#include "tests/common/compare.h"

namespace tessel::passes {
namespace {

using tessel::testing::expect_all_close;
using testing::Builder;
using testing::ints;
using testing::random_tensor;

// The rule differs by register file: these tests fix the target rather than take the host's.
const CpuModel kAvx512 =
    CpuModel::of(Target::parse("llvm -mtriple=x86_64-linux-gnu -mcpu=skylake-avx512"));
const CpuModel kAvx2 = CpuModel::of(Target::parse("llvm -mtriple=x86_64-linux-gnu -mcpu=haswell"));

struct ConvSpec {
  std::vector<int64_t> x, w;
  int64_t group = 1;
  bool constant_w = true;
  std::vector<int64_t> dilations = {};  // none when empty
  bool conv_is_output = false;          // the Conv's result is a graph output too
  int64_t last_stride = 2;
};

// Conv(x, w, bias) with pads 1 and strides [1, ..., last_stride], then Relu.
graph::Graph conv_model(const ConvSpec& c) {
  Builder b;
  graph::ValueId x = b.input("x", c.x);
  graph::ValueId w = c.constant_w ? b.constant("w", random_tensor(c.w, 1)) : b.input("w", c.w);
  graph::ValueId bias = b.constant("bias", random_tensor({c.w[0]}, 2));
  std::vector<int64_t> pads(2 * (c.w.size() - 2), 1), strides(c.w.size() - 2, 1);
  strides.back() = c.last_stride;
  std::map<std::string, graph::Attr> attrs{
      {"pads", ints(pads)}, {"strides", ints(strides)}, {"group", c.group}};
  if (!c.dilations.empty()) attrs["dilations"] = ints(c.dilations);
  graph::ValueId y = b.op("Conv", {x, w, bias}, attrs, "conv");
  graph::ValueId relu = b.op("Relu", {y});
  return c.conv_is_output ? b.finish({relu, y}) : b.finish({relu});
}

TEST(PackConvWeights, NarrowRowsAndALongReductionUseChannelVectors) {
  EXPECT_TRUE(prefers_channel_vectors(7, 512, 9, 1, kAvx512));
  EXPECT_TRUE(prefers_channel_vectors(14, 256, 9, 1, kAvx512));
  EXPECT_TRUE(prefers_channel_vectors(56, 64, 9, 1, kAvx512));
  EXPECT_TRUE(prefers_channel_vectors(28, 256, 1, 1, kAvx512));
  EXPECT_TRUE(prefers_channel_vectors(28, 128, 1, 1, kAvx512));
  // A 1x1 conv from 16 channels, rows of whole vectors or not.
  EXPECT_TRUE(prefers_channel_vectors(56, 64, 1, 1, kAvx512));
  EXPECT_TRUE(prefers_channel_vectors(112, 16, 1, 1, kAvx512));
  EXPECT_TRUE(prefers_channel_vectors(56, 144, 1, 1, kAvx512));
  EXPECT_FALSE(prefers_channel_vectors(56, 8, 1, 1, kAvx512));
  EXPECT_FALSE(prefers_channel_vectors(7, 8, 9, 1, kAvx512));     // too short to pay for unpacking
  EXPECT_FALSE(prefers_channel_vectors(32, 512, 9, 1, kAvx512));  // whole vectors
  EXPECT_TRUE(prefers_channel_vectors(16, 16, 1, 2, kAvx512));    // strided: the direct template
                                                                  // splits phases
}

// With 16 registers the direct tile is too small: channel vectors from a reduction of 24, rows of
// whole vectors or not; a 1x1 conv's direct tile is wider, and it packs from 64 channels.
TEST(PackConvWeights, SixteenRegistersPackFromAShortReduction) {
  EXPECT_TRUE(prefers_channel_vectors(14, 96, 1, 1, kAvx2));
  EXPECT_TRUE(prefers_channel_vectors(56, 64, 1, 1, kAvx2));
  EXPECT_FALSE(prefers_channel_vectors(56, 32, 1, 1, kAvx2));
  EXPECT_TRUE(prefers_channel_vectors(56, 3, 9, 1, kAvx2));
  EXPECT_TRUE(prefers_channel_vectors(32, 512, 9, 1, kAvx2));
  EXPECT_FALSE(prefers_channel_vectors(112, 2, 8, 1, kAvx2));
  EXPECT_TRUE(prefers_channel_vectors(16, 16, 1, 2, kAvx2));
  graph::Graph g = conv_model({{1, 32, 6, 32}, {32, 32, 3, 3}, 1, true, {}, false, 1});
  infer_type(g);
  EXPECT_TRUE(rule_prefers_packed(g, g.nodes[0], kAvx2));
  EXPECT_FALSE(rule_prefers_packed(g, g.nodes[0], kAvx512));
}

// The packed conv against Conv on the reference, and compiled (the pass runs in the compiler)
// against the reference on the original graph.
void expect_packed_matches_conv(const ConvSpec& spec) {
  SCOPED_TRACE(::testing::Message()
               << "W [" << spec.w[0] << ", " << spec.w[1] << ", ...] rank " << spec.w.size());
  graph::Graph g = conv_model(spec);
  infer_type(g);
  graph::Graph before = g;
  pack_conv_weights(g, kAvx512);
  const graph::Node& conv = g.nodes[0];
  ASSERT_EQ(conv.op, graph::OpKind::ConvNCHWc);
  EXPECT_FALSE(conv.has_attr("group"));
  const graph::Value& w = g.value(conv.inputs[1]);
  ASSERT_TRUE(w.constant);
  const int64_t block = conv_channel_block(kAvx512);
  std::vector<int64_t> packed_shape{(spec.w[0] + block - 1) / block};
  packed_shape.insert(packed_shape.end(), spec.w.begin() + 1, spec.w.end());
  packed_shape.push_back(block);
  EXPECT_EQ(w.constant->shape(), packed_shape);
  infer_type(g);
  EXPECT_EQ(g.value(conv.outputs[0]).type, before.value(before.nodes[0].outputs[0]).type);

  graph::TensorData x = random_tensor(spec.x, 3);
  std::vector<graph::TensorData> want = reference::run(before, {{"x", x}}),
                                 got = reference::run(g, {{"x", x}});
  CompiledModel m = compile_graph(before);
  EXPECT_NE(m.fusion_summary().find("ConvNCHWc"), std::string::npos) << m.fusion_summary();
  m.set_input("x", to_ndarray(x));
  m.run();
  std::vector<graph::TensorData> compiled;
  for (int o = 0; o < m.num_outputs(); ++o) compiled.push_back(to_tensor_data(m.get_output(o)));
  expect_all_close(got, want, {1e-9, 0});
  expect_all_close(compiled, want, {1e-4, 0});
}

TEST(PackConvWeights, PackedConvComputesTheSameAsConv) {
  expect_packed_matches_conv({{1, 32, 6, 13}, {32, 32, 3, 3}});       // 2-D, 7 wide, two blocks
  expect_packed_matches_conv({{2, 48, 19}, {48, 48, 7}});             // 1-D, batch 2, three blocks
  expect_packed_matches_conv({{1, 16, 3, 4, 9}, {16, 16, 2, 3, 3}});  // 3-D
  expect_packed_matches_conv({{1, 32, 9, 17}, {32, 32, 3, 3}, 1, true, {2, 2}});  // dilated
  // The Conv's result is a graph output too: its kernel ends at the unpacking, the Relu is another.
  expect_packed_matches_conv({{1, 32, 6, 13}, {32, 32, 3, 3}, 1, true, {}, true});
  // Output channels that do not fill the last block: it is padded, the unpacking drops the padding.
  expect_packed_matches_conv({{1, 8, 5, 13}, {130, 8, 3, 3}});  // 2 of 16 in the last
  expect_packed_matches_conv({{1, 16, 4, 13}, {136, 16, 1, 1}, 1, true, {}, true});
  // 10 blocks: the AVX-512 tile's two blocks end in a partly padded one.
  expect_packed_matches_conv({{1, 8, 3, 13}, {152, 8, 3, 3}});
  // A quarter of the computed channels padding (MobileNetV2's 24-channel projections), rows of
  // whole vectors, the Conv an output too.
  expect_packed_matches_conv({{1, 144, 3, 16}, {24, 144, 1, 1}, 1, true, {}, true});
  // A 1x1 conv over 128 channels to four blocks: AVX-512's tile of four blocks by 6 columns, 13
  // wide (a tail of one), and by 7.
  expect_packed_matches_conv({{1, 128, 3, 13}, {64, 128, 1, 1}});
  expect_packed_matches_conv({{1, 160, 2, 7}, {128, 160, 1, 1}, 1, true, {}, true});
}

TEST(PackConvWeights, APaddedLastBlockKeepsTheChannelCount) {
  graph::Graph g = conv_model({{1, 8, 5, 13}, {130, 8, 3, 3}});
  infer_type(g);
  pack_conv_weights(g, kAvx512);
  ASSERT_EQ(g.nodes[0].op, graph::OpKind::ConvNCHWc);
  EXPECT_EQ(g.nodes[0].attr_int("output_channels", 0), 130);
  EXPECT_EQ(g.value(g.nodes[0].outputs[0]).type.shape[1], 130);
  // A quarter of the channels computed padding: 24 of 32.
  graph::Graph quarter = conv_model({{1, 8, 5, 13}, {24, 8, 3, 3}});
  infer_type(quarter);
  pack_conv_weights(quarter, kAvx512);
  ASSERT_EQ(quarter.nodes[0].op, graph::OpKind::ConvNCHWc);
  EXPECT_EQ(quarter.nodes[0].attr_int("output_channels", 0), 24);
  // Whole blocks need no attribute.
  graph::Graph whole = conv_model({{1, 8, 5, 13}, {128, 8, 3, 3}});
  infer_type(whole);
  pack_conv_weights(whole, kAvx512);
  EXPECT_FALSE(whole.nodes[0].has_attr("output_channels"));
}

TEST(PackConvWeights, ConvsSharingWeightsShareThePackedCopy) {
  Builder b;
  graph::ValueId w = b.constant("w", random_tensor({32, 32, 3, 3}, 1));
  std::vector<graph::ValueId> outs;
  for (const char* x : {"x1", "x2"}) {
    outs.push_back(b.op("Conv", {b.input(x, {1, 32, 7, 7}), w}, {{"pads", ints({1, 1, 1, 1})}}));
  }
  graph::Graph g = b.finish(outs);
  infer_type(g);
  size_t values = g.values.size();
  pack_conv_weights(g, kAvx512);
  ASSERT_EQ(g.nodes[0].op, graph::OpKind::ConvNCHWc);
  ASSERT_EQ(g.nodes[1].op, graph::OpKind::ConvNCHWc);
  EXPECT_EQ(g.nodes[0].inputs[1], g.nodes[1].inputs[1]);
  EXPECT_EQ(g.values.size(), values + 1);
}

TEST(PackConvWeights, OtherConvsAreLeftAlone) {
  std::vector<ConvSpec> alone = {
      {{1, 32, 6, 32}, {32, 32, 3, 3}, 1, true, {}, false, 1},  // unstrided output rows of whole
                                                                // vectors
      {{1, 32, 6, 13}, {32, 16, 3, 3}, 2},                      // grouped
      {{1, 32, 6, 13}, {32, 32, 3, 3}, 1, false},               // weights are a graph input
      {{1, 32, 6, 13}, {20, 32, 3, 3}},  // padded, 12 of 32 channels would be padding
      {{1, 8, 6, 13}, {32, 8, 3, 3}, 1, true, {}, false, 1},  // unstrided, a short reduction
  };
  for (const ConvSpec& c : alone) {
    graph::Graph g = conv_model(c);
    infer_type(g);
    pack_conv_weights(g, kAvx512);
    EXPECT_EQ(g.nodes[0].op, graph::OpKind::Conv)
        << c.w[0] << "x" << c.w[1] << " over width " << c.x.back();
  }
}

// Tuning records overrule the rule through the choice, both ways; convs the pass cannot rewrite
// are never offered.
TEST(PackConvWeights, AChoiceOverrulesTheRule) {
  const std::vector<ConvSpec> packable = {
      {{1, 32, 6, 32}, {32, 32, 3, 3}, 1, true, {}, false, 1},   // kept direct
      {{1, 32, 6, 13}, {32, 32, 3, 3}, 1, true, {}, false, 1}};  // packed
  for (const ConvSpec& c : packable) {
    graph::Graph g = conv_model(c);
    infer_type(g);
    ASSERT_TRUE(is_packable(g, g.nodes[0], 16));
    bool rule = rule_prefers_packed(g, g.nodes[0], kAvx512);
    EXPECT_EQ(rule, c.x.back() == 13);
    int offered = 0;
    pack_conv_weights(g, kAvx512, [&](const graph::Graph&, const graph::Node& conv, bool told) {
      EXPECT_EQ(conv.name, "conv");
      EXPECT_EQ(told, rule);  // the choice is told the rule's answer for the pass's target
      ++offered;
      return !rule;
    });
    EXPECT_EQ(offered, 1);
    EXPECT_EQ(g.nodes[0].op, rule ? graph::OpKind::Conv : graph::OpKind::ConvNCHWc)
        << "width " << c.x.back();
  }

  graph::Graph g = conv_model({{1, 32, 6, 13}, {32, 16, 3, 3}, 2});  // grouped
  infer_type(g);
  EXPECT_FALSE(is_packable(g, g.nodes[0], 16));
  pack_conv_weights(g, kAvx512, [](const graph::Graph&, const graph::Node& conv, bool) -> bool {
    ADD_FAILURE() << "offered " << conv.name;
    return true;
  });
  EXPECT_EQ(g.nodes[0].op, graph::OpKind::Conv);
}

// A block is whole vectors of the target: one of AVX-512's 16 lanes or NEON's 4 (32 registers),
// two of AVX2's 8 or SSE's 4 (16 registers). The packed weights and the padded last block follow.
TEST(PackConvWeights, BlocksAreWholeVectorsOfTheTarget) {
  const CpuModel neon = CpuModel::of(Target::parse("llvm -mtriple=aarch64-linux-gnu"));
  const CpuModel sse = CpuModel::of(Target::parse("llvm -mtriple=x86_64-linux-gnu -mcpu=x86-64"));
  EXPECT_EQ(conv_channel_block(kAvx512), 16);
  EXPECT_EQ(conv_channel_block(kAvx2), 16);
  EXPECT_EQ(conv_channel_block(neon), 4);
  EXPECT_EQ(conv_channel_block(sse), 8);

  // 68 output channels: 17 whole blocks of 4; on SSE 9 blocks of 8, the last padded (4 channels of
  // 72 wasted, at most one block in 8).
  ConvSpec spec{{1, 8, 6, 13}, {68, 8, 3, 3}};
  for (auto [cpu, block] : {std::pair{neon, int64_t{4}}, std::pair{sse, int64_t{8}}}) {
    SCOPED_TRACE(::testing::Message() << "block " << block);
    graph::Graph g = conv_model(spec);
    infer_type(g);
    graph::Graph before = g;
    pack_conv_weights(g, cpu, [](const graph::Graph&, const graph::Node&, bool) { return true; });
    const graph::Node& conv = g.nodes[0];
    ASSERT_EQ(conv.op, graph::OpKind::ConvNCHWc);
    EXPECT_EQ(g.value(conv.inputs[1]).constant->shape(),
              (std::vector<int64_t>{(68 + block - 1) / block, 8, 3, 3, block}));
    EXPECT_EQ(conv.has_attr("output_channels"), 68 % block != 0);
    infer_type(g);
    graph::TensorData x = random_tensor(spec.x, 5);
    expect_all_close(reference::run(g, {{"x", x}}), reference::run(before, {{"x", x}}),
                     {1e-9, 1e-12});
  }
}

}  // namespace
}  // namespace tessel::passes
