// winograd_conv: 3x3 stride-1 Convs with enough channels and tiles become ConvWinograd with
// weights transformed at compile time, and compute the same values as the Conv (the reference's
// Winograd against its direct conv, and compiled against the reference on the original graph):
// tiles that overhang the output, batches, padding on some sides only, fused epilogues and the
// conv's result as a graph output; other convs are left alone; bad ConvWinograd nodes are errors
// that name the node. (Blocked activations: tests/passes/alter_op_layout_test.cc.)
#include "passes/winograd_conv.h"

#include <gtest/gtest.h>

#include <map>
#include <source_location>

#include "driver/compile.h"
#include "graph_builder.h"
#include "ir/error.h"
#include "ir/ops/winograd.h"
#include "passes/infer_type.h"
#include "passes/pack_conv_weights.h"
#include "reference/reference.h"
#include "tests/common/compare.h"
#include "tests/common/expect_error.h"

namespace tessel::passes {
namespace {

using tessel::testing::expect_all_close;
using testing::Builder;
using testing::ints;
using testing::random_tensor;

// Blocks of 16 output channels on AVX2 and AVX-512 alike (conv_channel_block).
const CpuModel kCpu = CpuModel::of(Target::parse("llvm -mtriple=x86_64-linux-gnu -mcpu=haswell"));
const int64_t kBlock = conv_channel_block(kCpu);

struct ConvSpec {
  std::vector<int64_t> x, w;
  std::vector<int64_t> pads = {1, 1, 1, 1};
  bool bias = true;
  bool residual = false;        // the conv's result + a second input, then Relu
  bool conv_is_output = false;  // the Conv's result is a graph output too
  std::map<std::string, graph::Attr> extra = {};
};

graph::Graph conv_model(const ConvSpec& c) {
  Builder b;
  graph::ValueId x = b.input("x", c.x);
  std::vector<graph::ValueId> in{x, b.constant("w", random_tensor(c.w, 1))};
  if (c.bias) in.push_back(b.constant("bias", random_tensor({c.w[0]}, 2)));
  std::map<std::string, graph::Attr> attrs{{"pads", ints(c.pads)}};
  for (const auto& [k, v] : c.extra) attrs[k] = v;
  graph::ValueId y = b.op("Conv", in, attrs, "conv");
  graph::ValueId out = y;
  if (c.residual)
    out = b.op("Add", {out, b.input("r", {c.x[0], c.w[0], c.x[2] + c.pads[0] + c.pads[2] - 2,
                                          c.x[3] + c.pads[1] + c.pads[3] - 2})});
  graph::ValueId relu = b.op("Relu", {out});
  return c.conv_is_output ? b.finish({relu, y}) : b.finish({relu});
}

int64_t tile_size_of(const ConvSpec& c) {
  graph::Graph g = conv_model(c);
  infer_type(g);
  return winograd_tile_size(g, g.nodes[0], kBlock);
}

TEST(WinogradConv, TileSizesFollowTheOverhangAndTheTileCount) {
  EXPECT_EQ(tile_size_of({{1, 64, 56, 56}, {64, 64, 3, 3}}), 4);
  EXPECT_EQ(tile_size_of({{1, 32, 27, 27}, {128, 32, 3, 3}}), 4);  // 28 x 28 covered by both
  EXPECT_EQ(tile_size_of({{1, 64, 13, 13}, {256, 64, 3, 3}}), 2);  // 4's tiles cover 16 x 16
  EXPECT_EQ(tile_size_of({{1, 256, 14, 14}, {256, 256, 3, 3}}), 2);
  EXPECT_EQ(tile_size_of({{1, 16, 12, 12}, {16, 16, 3, 3}, {0, 0, 0, 0}}), 0);  // 25 tiles
}

TEST(WinogradConv, OtherConvsAreLeftAlone) {
  const std::vector<std::pair<const char*, ConvSpec>> alone = {
      {"strided",
       {{1, 32, 56, 56},
        {64, 32, 3, 3},
        {1, 1, 1, 1},
        true,
        false,
        false,
        {{"strides", ints({2, 2})}}}},
      {"dilated",
       {{1, 32, 56, 56},
        {64, 32, 3, 3},
        {2, 2, 2, 2},
        true,
        false,
        false,
        {{"dilations", ints({2, 2})}}}},
      {"grouped",
       {{1, 32, 56, 56},
        {64, 16, 3, 3},
        {1, 1, 1, 1},
        true,
        false,
        false,
        {{"group", int64_t{2}}}}},
      {"5x5", {{1, 32, 56, 56}, {64, 32, 5, 5}, {2, 2, 2, 2}}},
      {"output channels not whole blocks", {{1, 32, 56, 56}, {72, 32, 3, 3}}},
      {"32 output channels", {{1, 128, 56, 56}, {32, 128, 3, 3}}},
      {"3 input channels", {{1, 3, 56, 56}, {64, 3, 3, 3}}},
      {"7 x 7: few tiles", {{1, 512, 7, 7}, {512, 512, 3, 3}}},
  };
  for (const auto& [what, spec] : alone) {
    graph::Graph g = conv_model(spec);
    infer_type(g);
    winograd_conv(g, kCpu);
    EXPECT_EQ(g.nodes[0].op, graph::OpKind::Conv) << what;
  }
}

// The Winograd conv against Conv on the reference, and compiled (the pass runs in the compiler)
// against the reference on the original graph.
void expect_winograd_matches_conv(const ConvSpec& spec, int64_t m) {
  SCOPED_TRACE(::testing::Message() << "X [" << spec.x[0] << ", " << spec.x[1] << ", " << spec.x[2]
                                    << ", " << spec.x[3] << "], " << spec.w[0] << " channels");
  graph::Graph g = conv_model(spec);
  infer_type(g);
  graph::Graph before = g;
  winograd_conv(g, kCpu);
  const graph::Node& conv = g.nodes[0];
  ASSERT_EQ(conv.op, graph::OpKind::ConvWinograd);
  EXPECT_EQ(conv.attr_int("tile_size", 0), m);
  int64_t a = m + 2;
  EXPECT_EQ(g.value(conv.inputs[1]).constant->shape(),
            (std::vector<int64_t>{a * a, spec.w[0] / kBlock, spec.w[1], kBlock}));
  infer_type(g);
  EXPECT_EQ(g.value(conv.outputs[0]).type, before.value(before.nodes[0].outputs[0]).type);

  std::map<std::string, graph::TensorData> feeds{{"x", random_tensor(spec.x, 3)}};
  if (spec.residual) {
    feeds["r"] = random_tensor(before.value(before.nodes[0].outputs[0]).type.shape, 4);
  }
  std::vector<graph::TensorData> want = reference::run(before, feeds),
                                 got = reference::run(g, feeds);
  CompiledModel model = compile_graph(before);
  EXPECT_NE(model.fusion_summary().find("ConvWinograd"), std::string::npos)
      << model.fusion_summary();
  for (const auto& [name, value] : feeds) model.set_input(name, to_ndarray(value));
  model.run();
  std::vector<graph::TensorData> compiled;
  for (int o = 0; o < model.num_outputs(); ++o)
    compiled.push_back(to_tensor_data(model.get_output(o)));
  // The transformed weights are rounded to float32; the transforms add a few roundings more.
  expect_all_close(got, want, {1e-5, 1e-5});
  expect_all_close(compiled, want, {1e-4, 1e-4});
}

TEST(WinogradConv, WinogradConvComputesTheSameAsConv) {
  expect_winograd_matches_conv({{1, 16, 32, 32}, {64, 16, 3, 3}}, 4);
  // Tiles that overhang the output on both axes, a batch of 2, input channels not a block.
  expect_winograd_matches_conv({{2, 20, 27, 26}, {64, 20, 3, 3}}, 4);
  expect_winograd_matches_conv({{1, 16, 13, 13}, {80, 16, 3, 3}}, 2);
  // Padding on some sides only (the output 25 x 29: 4's tiles would overhang it by 15%), no bias.
  expect_winograd_matches_conv({{1, 16, 26, 30}, {64, 16, 3, 3}, {0, 1, 1, 0}, false}, 2);
  // A residual Add fused into the output tiles, and the conv's result as a graph output.
  expect_winograd_matches_conv({{1, 32, 28, 28}, {64, 32, 3, 3}, {1, 1, 1, 1}, true, true}, 4);
  expect_winograd_matches_conv({{1, 16, 14, 14}, {64, 16, 3, 3}, {1, 1, 1, 1}, true, false, true},
                               2);
}

TEST(WinogradConv, ConvsSharingWeightsShareTheTransformedCopy) {
  Builder b;
  graph::ValueId w = b.constant("w", random_tensor({64, 32, 3, 3}, 1));
  std::vector<graph::ValueId> outs;
  for (const char* x : {"x1", "x2"}) {
    outs.push_back(b.op("Conv", {b.input(x, {1, 32, 32, 32}), w}, {{"pads", ints({1, 1, 1, 1})}}));
  }
  graph::Graph g = b.finish(outs);
  infer_type(g);
  size_t values = g.values.size();
  winograd_conv(g, kCpu);
  ASSERT_EQ(g.nodes[0].op, graph::OpKind::ConvWinograd);
  EXPECT_EQ(g.nodes[0].inputs[1], g.nodes[1].inputs[1]);
  EXPECT_EQ(g.values.size(), values + 1);
}

// A ConvWinograd node that does not fit its weights or asks for a tile size that does not exist
// is an error naming the node.
TEST(WinogradConv, BadWinogradNodesAreErrors) {
  graph::Graph good = conv_model({{1, 16, 32, 32}, {64, 16, 3, 3}});
  infer_type(good);
  winograd_conv(good, kCpu);
  ASSERT_EQ(good.nodes[0].op, graph::OpKind::ConvWinograd);
  // The spoiled graph's types are an error naming the node.
  auto expect_error = [&](const std::function<void(graph::Graph&)>& spoil, const std::string& msg,
                          std::source_location at = std::source_location::current()) {
    graph::Graph g = good;
    spoil(g);
    tessel::testing::expect_error([&] { infer_type(g); }, {msg, "'conv'"}, at);
  };
  expect_error([](graph::Graph& g) { g.nodes[0].attrs["tile_size"] = graph::Attr(int64_t{3}); },
               "Winograd tile size 3 is not implemented");
  expect_error([](graph::Graph& g) { g.nodes[0].attrs["tile_size"] = graph::Attr(int64_t{2}); },
               "does not fit X");
  expect_error(
      [](graph::Graph& g) {
        g.nodes[0].attrs["strides"] = graph::Attr(std::vector<int64_t>{2, 2});
      },
      "unit strides and dilations");
  // Blocked activations: the output's block is W's, the input [N, C / b, H, W, b].
  expect_error([](graph::Graph& g) { g.nodes[0].attrs["output_block"] = graph::Attr(int64_t{8}); },
               "output_block 8 differs from W's block of 16");
  expect_error([](graph::Graph& g) { g.nodes[0].attrs["input_block"] = graph::Attr(int64_t{16}); },
               "input_block 16 needs X as [N, C / 16, spatial..., 16]");
  EXPECT_THROW(graph::ops::winograd_matrices(6), Error);
}

}  // namespace
}  // namespace tessel::passes
