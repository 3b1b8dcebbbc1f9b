// alter_op_layout: chains of packed and Winograd convs keep their activations blocked by channel
// (golden layouts per node), the layout changes only inside ConvNCHWc and the global pools, every
// class with a reader or writer that needs NCHW stays NCHW, and the blocked graph computes what the
// original does (on the reference executor and compiled).
#include "passes/alter_op_layout.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>

#include "driver/compile.h"
#include "graph_builder.h"
#include "ir/op_table.h"
#include "ir/ops/conv_packing.h"
#include "passes/infer_type.h"
#include "passes/pack_conv_weights.h"
#include "passes/winograd_conv.h"
#include "reference/reference.h"
#include "tests/common/compare.h"
#include "tests/common/expect_error.h"

namespace tessel::passes {
namespace {

using tessel::testing::expect_all_close;
using testing::Builder;
using testing::ints;
using testing::random_tensor;

const CpuModel kAvx2 = CpuModel::of(Target::parse("llvm -mtriple=x86_64-linux-gnu -mcpu=haswell"));
const int64_t kB = conv_channel_block(kAvx2);

// A k x k conv with pads k / 2 (packed by the test's pack_conv_weights whatever the rule says),
// its weights scaled by the fan-in so that values keep their scale through a chain.
graph::ValueId conv(Builder& b, graph::ValueId x, int64_t in, int64_t out, int64_t stride = 1,
                    const std::string& name = "", int64_t k = 3) {
  double r = 1.0 / std::sqrt(static_cast<double>(in * k * k));
  uint32_t seed = static_cast<uint32_t>(b.g.values.size());
  graph::ValueId w = b.constant(name + "_w", random_tensor({out, in, k, k}, seed, -r, r));
  graph::ValueId bias = b.constant(name + "_b", random_tensor({out}, seed + 1, -0.1, 0.1));
  int64_t p = k / 2;
  return b.op("Conv", {x, w, bias},
              {{"pads", ints({p, p, p, p})}, {"strides", ints({stride, stride})}}, name);
}

// Each node as "name: Op in_block out_block", its layout attributes 0 when absent.
std::vector<std::string> layouts(const graph::Graph& g) {
  std::vector<std::string> lines;
  for (const graph::Node& n : g.nodes) {
    lines.push_back(n.name + ": " + std::string(graph::op_kind_name(n.op)) + " " +
                    std::to_string(graph::ops::input_block(n)) + " " +
                    std::to_string(graph::ops::output_block(n)));
  }
  return lines;
}

// Packs every packable conv (but those named from `keep_direct` on), runs the pass, and checks the
// rewritten graph against the original on the reference executor and compiled (Winograd off, so
// that 3x3 convs stay packed, unless `winograd`).
graph::Graph altered(const graph::Graph& original, std::vector<graph::TensorData> inputs,
                     const std::string& keep_direct = "", bool winograd = false) {
  graph::Graph g = original;
  infer_type(g);
  graph::Graph before = g;
  if (winograd) winograd_conv(g, kAvx2);
  pack_conv_weights(g, kAvx2, [&](const graph::Graph&, const graph::Node& conv, bool) {
    return conv.name.rfind(keep_direct, 0) != 0 || keep_direct.empty();
  });
  alter_op_layout(g, kAvx2);
  std::map<std::string, graph::TensorData> feed;
  for (size_t i = 0; i < inputs.size(); ++i) feed[before.value(before.inputs[i]).name] = inputs[i];
  std::vector<graph::TensorData> want = reference::run(before, feed), got = reference::run(g, feed);
  // Exact rearrangements, but the Winograd weights, transformed and rounded to float32.
  expect_all_close(
      got, want,
      winograd ? tessel::testing::Tolerance{1e-5, 1e-5} : tessel::testing::Tolerance{1e-9, 1e-12});

  CompileOptions opt;
  if (!winograd) opt.disabled_passes = {"winograd_conv"};
  CompiledModel m = compile_graph(before, opt);
  for (const auto& [name, t] : feed) m.set_input(name, to_ndarray(t));
  m.run();
  std::vector<graph::TensorData> compiled;
  for (int o = 0; o < m.num_outputs(); ++o) compiled.push_back(to_tensor_data(m.get_output(o)));
  expect_all_close(compiled, want, {1e-5, 1e-4});
  return g;
}

// ResNet's shape in small: a stem, a residual block, a strided block with a 1x1 shortcut, pools,
// per-channel affine ops, a channel Concat (negative axis) and the classifier. Every activation
// between the stem and the global pool is blocked; the graph's input and output stay NCHW.
TEST(AlterOpLayout, ResidualChainStaysBlocked) {
  Builder b;
  graph::ValueId x = b.input("x", {1, 3, 14, 13});
  graph::ValueId stem = b.op("Relu", {conv(b, x, 3, 32, 1, "stem")}, {}, "stem_relu");
  graph::ValueId pool = b.op(
      "MaxPool", {stem},
      {{"kernel_shape", ints({3, 3})}, {"pads", ints({1, 1, 1, 1})}, {"strides", ints({1, 1})}},
      "maxpool");
  graph::ValueId r1 = b.op("Relu", {conv(b, pool, 32, 32, 1, "c1")}, {}, "relu1");
  graph::ValueId sum = b.op("Add", {conv(b, r1, 32, 32, 1, "c2"), pool}, {}, "add");
  graph::ValueId r2 = b.op("Relu", {sum}, {}, "relu2");
  graph::ValueId down = conv(b, r2, 32, 48, 2, "down");
  graph::ValueId scale =
      b.op("Mul", {down, b.constant("scale", random_tensor({48, 1, 1}, 7))}, {}, "scale");
  graph::ValueId shift =
      b.op("Add", {scale, b.constant("shift", random_tensor({1, 48, 1, 1}, 8))}, {}, "shift");
  graph::ValueId half = b.op("Mul", {shift, b.constant("half", random_tensor({1}, 9))}, {}, "half");
  graph::ValueId shortcut = conv(b, r2, 32, 16, 2, "shortcut");
  graph::ValueId cat = b.op("Concat", {half, shortcut}, {{"axis", int64_t{-3}}}, "concat");
  graph::ValueId avg = b.op("AveragePool", {cat},
                            {{"kernel_shape", ints({2, 2})}, {"strides", ints({1, 1})}}, "avgpool");
  graph::ValueId gap = b.op("GlobalAveragePool", {b.op("Relu", {avg}, {}, "relu3")}, {}, "gap");
  graph::ValueId flat = b.op("Flatten", {gap}, {}, "flatten");
  graph::Graph g = altered(b.finish({flat}), {random_tensor({1, 3, 14, 13}, 1)});

  const std::string in = " 16 0", out = " 0 16", both = " 16 16", none = " 0 0";
  std::vector<std::string> want = {"stem: ConvNCHWc" + out,
                                   "stem_relu: Relu" + none,
                                   "maxpool: MaxPool" + both,
                                   "c1: ConvNCHWc" + both,
                                   "relu1: Relu" + none,
                                   "c2: ConvNCHWc" + both,
                                   "add: Add" + none,
                                   "relu2: Relu" + none,
                                   "down: ConvNCHWc" + both,
                                   "scale: Mul" + none,
                                   "shift: Add" + none,
                                   "half: Mul" + none,
                                   "shortcut: ConvNCHWc" + both,
                                   "concat: Concat" + none,
                                   "avgpool: AveragePool" + both,
                                   "relu3: Relu" + none,
                                   "gap: GlobalAveragePool" + in,
                                   "flatten: Flatten" + none};
  EXPECT_EQ(layouts(g), want);
  auto type_of = [&](const std::string& node) {
    for (const graph::Node& n : g.nodes) {
      if (n.name == node) return g.value(n.outputs[0]).type.shape;
    }
    return std::vector<int64_t>{};
  };
  EXPECT_EQ(type_of("stem"), (std::vector<int64_t>{1, 2, 14, 13, kB}));
  EXPECT_EQ(type_of("concat"), (std::vector<int64_t>{1, 4, 7, 7, kB}));
  EXPECT_EQ(type_of("gap"), (std::vector<int64_t>{1, 64, 1, 1}));
  for (const graph::Node& n : g.nodes) {
    if (n.name == "concat") {
      EXPECT_EQ(n.attr_int("axis", 0), 1);
    }
    if (n.name == "scale") {  // one value per channel: blocked like the activations
      EXPECT_EQ(g.value(n.inputs[1]).type.shape, (std::vector<int64_t>{3, 1, 1, kB}));
    }
    if (n.name == "half") {  // a scalar stays as it is
      EXPECT_EQ(g.value(n.inputs[1]).type.shape, (std::vector<int64_t>{1}));
    }
  }
}

// A class stays NCHW when any member needs it: a grouped conv reads it, a conv that does not pack
// writes it (20 channels), a constant operand varies along the width, it is a graph output, or a
// MaxPool also returns Indices. Convs still convert where one side can be blocked.
TEST(AlterOpLayout, ClassesThatNeedNchwStayNchw) {
  Builder b;
  graph::ValueId x = b.input("x", {1, 16, 8, 13});
  graph::ValueId a = b.op("Relu", {conv(b, x, 16, 32, 1, "a")}, {}, "relu_a");
  graph::ValueId dw =
      b.op("Conv", {a, b.constant("gw", random_tensor({32, 16, 3, 3}, 3, -0.1, 0.1))},
           {{"group", int64_t{2}}, {"pads", ints({1, 1, 1, 1})}}, "grouped");
  graph::ValueId c = conv(b, dw, 32, 20, 1, "c");  // 20 channels: 12 of 32 padding, not packable
  graph::ValueId d = conv(b, c, 20, 32, 1, "d");
  graph::ValueId row = b.op("Add", {d, b.constant("row", random_tensor({13}, 4))}, {}, "row");
  graph::ValueId e = conv(b, row, 32, 32, 1, "e");
  graph::ValueId f = conv(b, e, 32, 32, 1, "f");  // e's output is also a graph output
  std::vector<graph::ValueId> pooled =
      b.node("MaxPool", {f}, {{"kernel_shape", ints({2, 2})}}, 2, "argmax");
  graph::Graph g = altered(b.finish({e, pooled[0], pooled[1]}), {random_tensor({1, 16, 8, 13}, 2)});
  const std::string none = " 0 0";
  std::vector<std::string> want = {
      "a: ConvNCHWc" + none, "relu_a: Relu" + none, "grouped: Conv" + none,
      "c: Conv" + none,      "d: ConvNCHWc" + none, "row: Add" + none,
      "e: ConvNCHWc" + none, "f: ConvNCHWc" + none, "argmax: MaxPool" + none};
  EXPECT_EQ(layouts(g), want);
}

// A conv whose channels leave its last block padded (40 of 48) writes the block whole, zeros past
// channel 40 (its bias padded too), for a Relu and a scalar Add and a global pool, which pools the
// first 40 ("output_channels"); a padded class that another conv, a MaxPool, a per-channel
// constant or a Concat reads, or that is a graph output, stays NCHW.
TEST(AlterOpLayout, PaddedBlocksFlowIntoGlobalPools) {
  Builder b;
  graph::ValueId x = b.input("x", {1, 32, 7, 9});
  graph::ValueId a = b.op("Relu", {conv(b, x, 32, 32, 1, "a")}, {}, "relu_a");
  graph::ValueId cls = b.op("Relu", {conv(b, a, 32, 40, 1, "cls", 1)}, {}, "relu_cls");
  graph::ValueId shifted =
      b.op("Add", {cls, b.constant("one", random_tensor({1}, 5))}, {}, "shift");
  graph::ValueId gap = b.op("GlobalAveragePool", {shifted}, {}, "gap");
  graph::ValueId flat = b.op("Flatten", {gap}, {}, "flatten");
  graph::Graph g = altered(b.finish({flat}), {random_tensor({1, 32, 7, 9}, 6)});
  const std::string in = " 16 0", both = " 16 16", none = " 0 0";
  std::vector<std::string> want = {"a: ConvNCHWc 0 16",      "relu_a: Relu" + none,
                                   "cls: ConvNCHWc" + both,  "relu_cls: Relu" + none,
                                   "shift: Add" + none,      "gap: GlobalAveragePool" + in,
                                   "flatten: Flatten" + none};
  ASSERT_EQ(kB, 16);
  EXPECT_EQ(layouts(g), want);
  for (const graph::Node& n : g.nodes) {
    if (n.name == "cls") {
      EXPECT_EQ(n.attr_int("output_channels", 0), 40);
      EXPECT_EQ(g.value(n.outputs[0]).type.shape, (std::vector<int64_t>{1, 3, 7, 9, 16}));
      EXPECT_EQ(g.value(n.inputs[2]).type.shape, (std::vector<int64_t>{48}));
    }
    if (n.name == "gap") {
      EXPECT_EQ(n.attr_int("output_channels", 0), 40);
      EXPECT_EQ(g.value(n.outputs[0]).type.shape, (std::vector<int64_t>{1, 40, 1, 1}));
    }
  }

  for (const std::string reader : {"Conv", "MaxPool", "Mul", "Concat", "Output"}) {
    SCOPED_TRACE(reader);
    Builder r;
    graph::ValueId y = r.input("x", {1, 32, 7, 9});
    y = r.op("Relu", {conv(r, y, 32, 32, 1, "a")}, {}, "relu_a");
    y = conv(r, y, 32, 40, 1, "cls", 1);
    if (reader == "Conv") y = conv(r, y, 40, 32, 1, "next");
    if (reader == "MaxPool") y = r.op("MaxPool", {y}, {{"kernel_shape", ints({2, 2})}}, "next");
    if (reader == "Mul") y = r.op("Mul", {y, r.constant("s", random_tensor({40, 1, 1}, 7))});
    if (reader == "Concat") y = r.op("Concat", {y, y}, {{"axis", int64_t{1}}});
    graph::ValueId cls = y;
    y = r.op("Flatten", {r.op("GlobalMaxPool", {y}, {}, "gap")});
    graph::Graph nchw = altered(reader == "Output" ? r.finish({y, cls}) : r.finish({y}),
                                {random_tensor({1, 32, 7, 9}, 8)});
    for (const graph::Node& n : nchw.nodes) {
      if (n.name == "cls") {
        EXPECT_EQ(graph::ops::output_block(n), 0);
        EXPECT_EQ(nchw.value(n.inputs[2]).type.shape, (std::vector<int64_t>{40}));
      }
      if (n.name == "gap") {
        EXPECT_FALSE(n.has_attr("output_channels"));
      }
    }
  }
}

// A depthwise Conv whose input is blocked becomes a depthwise ConvNCHWc (its weights packed
// [C/16, 1, 3, 3, 16], group kept) that reads and writes vectors of a block, strided or not; one
// that reads the graph's NCHW input stays a Conv, and so does its output's class.
TEST(AlterOpLayout, DepthwiseConvsOnBlocks) {
  Builder b;
  auto depthwise = [&](graph::ValueId in, int64_t channels, int64_t stride,
                       const std::string& name) {
    graph::ValueId w = b.constant(name + "_w", random_tensor({channels, 1, 3, 3}, 20, -0.3, 0.3));
    return b.op(
        "Conv", {in, w, b.constant(name + "_b", random_tensor({channels}, 21, -0.1, 0.1))},
        {{"group", channels}, {"pads", ints({1, 1, 1, 1})}, {"strides", ints({stride, stride})}},
        name);
  };
  graph::ValueId x = b.input("x", {1, 32, 9, 11});
  graph::ValueId y = b.op("Relu", {conv(b, x, 32, 32, 1, "expand")}, {}, "relu");
  y = depthwise(y, 32, 1, "dw1");
  y = b.op("Clip",
           {y, b.constant("lo", random_tensor({}, 1, 0, 0)),
            b.constant("hi", random_tensor({}, 1, 6, 6))},
           {}, "clip");
  y = conv(b, y, 32, 48, 1, "project", 1);
  y = depthwise(y, 48, 2, "dw2");
  y = conv(b, y, 48, 16, 1, "last");
  graph::ValueId x2 = b.input("x2", {1, 16, 6, 7});
  graph::ValueId z = conv(b, depthwise(x2, 16, 1, "dw_input"), 16, 16, 1, "after");
  graph::Graph g = altered(b.finish({y, z}),
                           {random_tensor({1, 32, 9, 11}, 1), random_tensor({1, 16, 6, 7}, 2)});
  const std::string none = " 0 0", out = " 0 16", both = " 16 16", in = " 16 0";
  std::vector<std::string> want = {
      "expand: ConvNCHWc" + out, "relu: Relu" + none,         "dw1: ConvNCHWc" + both,
      "clip: Clip" + none,       "project: ConvNCHWc" + both, "dw2: ConvNCHWc" + both,
      "last: ConvNCHWc" + in,    "dw_input: Conv" + none,     "after: ConvNCHWc" + none};
  EXPECT_EQ(layouts(g), want);
  const graph::Node& dw2 = g.nodes[5];
  EXPECT_EQ(dw2.attr_int("group", 0), 48);
  EXPECT_EQ(g.value(dw2.inputs[1]).type.shape, (std::vector<int64_t>{3, 1, 3, 3, kB}));
  EXPECT_EQ(g.value(dw2.outputs[0]).type.shape, (std::vector<int64_t>{1, 3, 5, 6, kB}));
}

// A conv that pack_conv_weights left direct packs once it reads and writes blocks (its rule and
// records weigh NCHW neighbours); with one side NCHW it stays direct, and the other side too.
TEST(AlterOpLayout, DirectConvsPackBetweenBlocks) {
  Builder b;
  graph::ValueId x = b.input("x", {1, 32, 6, 9});
  graph::ValueId y = b.op("Relu", {conv(b, x, 32, 32, 1, "p")}, {}, "relu");
  y = b.op("Relu", {conv(b, y, 32, 32, 1, "direct_mid")}, {}, "relu2");
  y = conv(b, conv(b, y, 32, 32, 1, "r"), 32, 32, 1, "direct_end");
  graph::Graph g = altered(b.finish({y}), {random_tensor({1, 32, 6, 9}, 3)}, "direct");
  std::vector<std::string> want = {"p: ConvNCHWc 0 16",           "relu: Relu 0 0",
                                   "direct_mid: ConvNCHWc 16 16", "relu2: Relu 0 0",
                                   "r: ConvNCHWc 16 0",           "direct_end: Conv 0 0"};
  EXPECT_EQ(layouts(g), want);
  EXPECT_FALSE(g.nodes[2].has_attr("group"));
  EXPECT_EQ(g.value(g.nodes[2].inputs[1]).type.shape, (std::vector<int64_t>{2, 32, 3, 3, kB}));
}

// Packed convs in a row with nothing else, batch 2: the first writes blocks, the second (1x1,
// strided: it reads a subsampled copy of the blocks) reads them.
TEST(AlterOpLayout, ConvToConvAndBatches) {
  Builder b;
  graph::ValueId x = b.input("x", {2, 32, 5, 7});
  graph::ValueId y = conv(b, conv(b, x, 32, 128, 1, "p"), 128, 16, 2, "q", 1);
  graph::Graph g = altered(b.finish({y}), {random_tensor({2, 32, 5, 7}, 5)});
  EXPECT_EQ(layouts(g), (std::vector<std::string>{"p: ConvNCHWc 0 16", "q: ConvNCHWc 16 0"}));
  EXPECT_EQ(g.value(g.nodes[0].outputs[0]).type.shape, (std::vector<int64_t>{2, 8, 5, 7, kB}));
}

// A Winograd conv between packed ones reads and writes blocks: its input transform takes vectors of
// a block's channels, its output tiles store whole vectors. Tiles that overhang the output (m = 2
// at 13 x 14, m = 4 at 27 x 26), input channels of one block, and the Winograd conv's result a
// graph output too (blocked input, NCHW output).
TEST(AlterOpLayout, WinogradConvsOnBlocks) {
  for (std::vector<int64_t> shape : {std::vector<int64_t>{1, 16, 13, 14}, {1, 16, 27, 26}}) {
    SCOPED_TRACE(::testing::Message() << shape[2] << " x " << shape[3]);
    Builder b;
    graph::ValueId x = b.input("x", shape);
    graph::ValueId a = b.op("Relu", {conv(b, x, 16, 64, 1, "a", 1)}, {}, "relu_a");
    graph::ValueId w = b.op("Relu", {conv(b, a, 64, 64, 1, "wino")}, {}, "relu_w");
    graph::ValueId y = conv(b, w, 64, 32, 1, "c", 1);
    graph::Graph g = altered(b.finish({y}), {random_tensor(shape, 6)}, "", true);
    EXPECT_EQ(layouts(g), (std::vector<std::string>{"a: ConvNCHWc 0 16", "relu_a: Relu 0 0",
                                                    "wino: ConvWinograd 16 16", "relu_w: Relu 0 0",
                                                    "c: ConvNCHWc 16 0"}));
  }
  Builder b;
  graph::ValueId x = b.input("x", {1, 32, 13, 14});
  graph::ValueId a = conv(b, x, 32, 64, 1, "a", 1);
  graph::ValueId w = conv(b, a, 64, 64, 1, "wino");
  graph::Graph g = altered(b.finish({b.op("Relu", {w}, {}, "relu")}),
                           {random_tensor({1, 32, 13, 14}, 7)}, "", true);
  EXPECT_EQ(layouts(g), (std::vector<std::string>{"a: ConvNCHWc 0 16", "wino: ConvWinograd 16 0",
                                                  "relu: Relu 0 0"}));
}

// Only ConvNCHWc and the pools take the block attributes; infer_type names any other node.
// The block is the target's (passes::conv_channel_block): NEON's 4 lanes block 12 channels, which
// AVX2's 16 do not. Checked on the reference executor (this machine cannot run NEON code).
TEST(AlterOpLayout, BlocksFollowTheTarget) {
  Builder b;
  graph::ValueId x = b.input("x", {1, 8, 7, 9});
  graph::ValueId y = b.op("Relu", {conv(b, x, 8, 12, 1, "first")}, {}, "relu");
  y = b.op(
      "MaxPool", {y},
      {{"kernel_shape", ints({2, 2})}, {"strides", ints({2, 2})}, {"pads", ints({0, 0, 1, 1})}},
      "pool");
  y = conv(b, y, 12, 12, 1, "second", 1);
  graph::Graph original = b.finish({conv(b, y, 12, 8, 1, "last")});
  infer_type(original);
  graph::TensorData input = random_tensor({1, 8, 7, 9}, 3);
  const CpuModel neon = CpuModel::of(Target::parse("llvm -mtriple=aarch64-linux-gnu"));
  auto pack_all = [](const graph::Graph&, const graph::Node&, bool) { return true; };
  graph::Graph g = original;
  pack_conv_weights(g, neon, pack_all);
  alter_op_layout(g, neon);
  EXPECT_EQ(layouts(g),
            (std::vector<std::string>{"first: ConvNCHWc 0 4", "relu: Relu 0 0", "pool: MaxPool 4 4",
                                      "second: ConvNCHWc 4 4", "last: ConvNCHWc 4 0"}));
  expect_all_close(reference::run(g, {{"x", input}}), reference::run(original, {{"x", input}}),
                   {1e-9, 1e-12});
  // 12 channels are not whole blocks of 16: the convs to 12 pad their weights to one block (a
  // quarter padding) but the activations stay NCHW, a MaxPool and a conv reading the padded
  // block; 8 channels would be half padding.
  graph::Graph avx2 = original;
  pack_conv_weights(avx2, kAvx2, pack_all);
  alter_op_layout(avx2, kAvx2);
  EXPECT_EQ(layouts(avx2),
            (std::vector<std::string>{"first: ConvNCHWc 0 0", "relu: Relu 0 0", "pool: MaxPool 0 0",
                                      "second: ConvNCHWc 0 0", "last: Conv 0 0"}));
  expect_all_close(reference::run(avx2, {{"x", input}}), reference::run(original, {{"x", input}}),
                   {1e-9, 1e-12});
}

TEST(AlterOpLayout, OtherOpsRejectBlockAttributes) {
  Builder b;
  graph::ValueId x = b.input("x", {1, 2, 3, 3, kB});
  graph::Graph g = b.finish({b.op("Relu", {x}, {{"input_block", kB}}, "relu")});
  tessel::testing::expect_error([&] { infer_type(g); },
                                {"relu", "input_block is for ops that read blocked channels"});
}

TEST(AlterOpLayout, BlockingAndUnblockingActivationsAreInverse) {
  graph::TensorData x = random_tensor({2, 32, 3, 5}, 11);
  graph::TensorData blocked = graph::ops::block_channels(x, kB);
  EXPECT_EQ(blocked.shape(), (std::vector<int64_t>{2, 2, 3, 5, kB}));
  // Element [n, c, h, w] lands at [n, c / b, h, w, c % b].
  const float* p = x.data<float>();
  const float* q = blocked.data<float>();
  EXPECT_EQ(q[((((1 * 2 + 1) * 3 + 2) * 5 + 4) * kB) + 3], p[((1 * 32 + 19) * 3 + 2) * 5 + 4]);
  expect_all_close({graph::ops::unblock_channels(blocked)}, {x}, {0, 0});
  // 20 channels fill one block and pad the next with zeros; resize_channels takes them back.
  graph::TensorData odd = random_tensor({2, 20, 3, 5}, 12);
  graph::TensorData padded = graph::ops::block_channels(odd, kB);
  EXPECT_EQ(padded.shape(), (std::vector<int64_t>{2, 2, 3, 5, kB}));
  graph::TensorData whole = graph::ops::unblock_channels(padded);
  for (int64_t n = 0; n < 2; ++n) {
    for (int64_t i = 20 * 15; i < 32 * 15; ++i) EXPECT_EQ(whole.data<float>()[n * 32 * 15 + i], 0);
  }
  expect_all_close({graph::ops::resize_channels(whole, 20)}, {odd}, {0, 0});
}

}  // namespace
}  // namespace tessel::passes
