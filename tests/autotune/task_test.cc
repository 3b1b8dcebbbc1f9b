// Task extraction: one task per distinct Conv/MatMul/Gemm workload, weighted by occurrences.
#include "autotune/task.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "passes/alter_op_layout.h"
#include "passes/infer_type.h"
#include "passes/pipeline.h"
#include "tests/passes/graph_builder.h"

namespace tessel::autotune {
namespace {

using passes::testing::Builder;
using passes::testing::ints;
using passes::testing::random_tensor;

// x -> conv(3x3, s1) -> relu -> conv(3x3, s1, same weights shape) -> relu -> conv(3x3, s2) ->
// flatten -> matmul
graph::Graph model() {
  Builder b;
  graph::ValueId x = b.input("x", {1, 4, 8, 8});
  auto conv = [&](graph::ValueId in, int64_t stride, const std::string& name) {
    graph::ValueId w = b.constant(name + "_w", random_tensor({4, 4, 3, 3}, 1));
    return b.op("Relu", {b.op("Conv", {in, w},
                              {{"kernel_shape", ints({3, 3})},
                               {"pads", ints({1, 1, 1, 1})},
                               {"strides", ints({stride, stride})}},
                              name)});
  };
  graph::ValueId h = conv(conv(x, 1, "c1"), 1, "c2");
  h = conv(h, 2, "c3");  // [1, 4, 4, 4]
  h = b.op("Flatten", {h}, {{"axis", int64_t{1}}});
  h = b.op("MatMul", {h, b.constant("fc", random_tensor({64, 10}, 2))});
  return b.finish({h});
}

TEST(TaskTest, OneTaskPerDistinctWorkloadWithItsWeight) {
  graph::Graph g = model();
  passes::GraphPipelineResult plan = passes::run_graph_pipeline(g);
  std::vector<Task> tasks = extract_tasks(g, plan.groups);
  ASSERT_EQ(tasks.size(), 3u);
  EXPECT_EQ(tasks[0].op, "Conv");
  EXPECT_EQ(tasks[0].weight, 2);  // c1 and c2 share a workload
  EXPECT_EQ(tasks[1].op, "Conv");
  EXPECT_EQ(tasks[1].weight, 1);  // c3 has stride 2
  EXPECT_EQ(tasks[2].op, "MatMul");
  EXPECT_EQ(tasks[2].weight, 1);
  EXPECT_DOUBLE_EQ(tasks[0].flops, 2.0 * (4 * 8 * 8) * (4 * 3 * 3));
  EXPECT_DOUBLE_EQ(tasks[2].flops, 2.0 * 10 * 64);
  EXPECT_EQ(tasks[0].workload,
            "Conv|float32[1, 4, 8, 8]|float32[4, 4, 3, 3]|kernel_shape=[3, 3];pads=[1, 1, 1, "
            "1];strides=[1, 1]");
  EXPECT_NE(tasks[1].workload.find("strides=[2, 2]"), std::string::npos) << tasks[1].workload;
}

TEST(TaskTest, KeysAreStableAcrossRunsAndModels) {
  graph::Graph a = model(), b = model();
  auto ta = extract_tasks(a, passes::run_graph_pipeline(a).groups);
  auto tb = extract_tasks(b, passes::run_graph_pipeline(b).groups);
  ASSERT_EQ(ta.size(), tb.size());
  for (size_t i = 0; i < ta.size(); ++i) EXPECT_EQ(ta[i].workload, tb[i].workload);
  EXPECT_TRUE(graph::op_def(graph::OpKind::Gemm).tuned);
  EXPECT_FALSE(graph::op_def(graph::OpKind::Relu).tuned);
}

// Two convs: one the rule packs (13 columns out of stride 1: partial vectors) and one it keeps
// direct (32 columns), both 32 -> 32 channels.
graph::Graph packable_model() {
  Builder b;
  std::vector<graph::ValueId> outs;
  for (int64_t width : {13, 32}) {
    graph::ValueId x = b.input(fmt::format("x{}", width), {1, 32, 4, width});
    graph::ValueId w = b.constant(fmt::format("w{}", width),
                                  random_tensor({32, 32, 3, 3}, static_cast<uint32_t>(width)));
    outs.push_back(b.op(
        "Relu", {b.op("Conv", {x, w}, {{"pads", ints({1, 1, 1, 1})}, {"group", int64_t{1}}})}));
  }
  return b.finish(outs);
}

// pack_conv_weights' rule differs by register file: these tests take AVX-512's, whatever the host.
const CpuModel kAvx512 =
    CpuModel::of(Target::parse("llvm -mtriple=x86_64-linux-gnu -mcpu=skylake-avx512"));

graph::Graph planned(graph::Graph g, const passes::ConvLayoutChoice& layout,
                     std::vector<passes::FusedGroup>& groups) {
  passes::GraphPipelineOptions opt;
  opt.conv_layout = layout;
  opt.cpu = kAvx512;
  groups = passes::run_graph_pipeline(g, opt).groups;
  return g;
}

TEST(TaskTest, ThePackedKeyIsTheKeyOfTheConvOncePacked) {
  graph::Graph g = packable_model();
  passes::infer_type(g);
  std::vector<std::string> predicted;
  const std::vector<size_t> convs = {0, 2};  // the Relus are 1 and 3
  for (size_t i : convs) predicted.push_back(packed_workload_key(g, g.nodes[i], kAvx512));
  passes::pack_conv_weights(g, kAvx512,
                            [](const graph::Graph&, const graph::Node&, bool) { return true; });
  for (size_t k = 0; k < convs.size(); ++k) {
    ASSERT_EQ(g.nodes[convs[k]].op, graph::OpKind::ConvNCHWc);
    EXPECT_EQ(workload_key(g, g.nodes[convs[k]]), predicted[k]);
  }
  EXPECT_EQ(predicted[0],
            "ConvNCHWc|float32[1, 32, 4, 13]|float32[2, 32, 3, 3, 16]|pads=[1, 1, 1, 1]");
}

// alter_op_layout may block a packed conv's input, output or both: a Conv's packed_workload_keys
// are those four forms (NCHW first, its packed_workload_key), and once packed and laid out, the
// node's layout_workload_keys are the same list, its own key among them.
TEST(TaskTest, PackedKeysCoverEveryActivationLayout) {
  Builder b;
  auto conv = [&](graph::ValueId in, uint32_t seed) {
    graph::ValueId w = b.constant(fmt::format("w{}", seed), random_tensor({32, 32, 3, 3}, seed));
    return b.op("Conv", {in, w}, {{"pads", ints({1, 1, 1, 1})}});
  };
  graph::ValueId x = b.input("x", {1, 32, 4, 13});
  graph::Graph g = b.finish({conv(b.op("Relu", {conv(conv(x, 1), 2)}), 3)});
  passes::infer_type(g);
  const std::vector<size_t> convs = {0, 1, 3};
  std::vector<std::vector<std::string>> predicted;
  for (size_t i : convs) {
    predicted.push_back(packed_workload_keys(g, g.nodes[i], kAvx512));
    ASSERT_EQ(predicted.back().size(), 4u);
    EXPECT_EQ(predicted.back()[0], packed_workload_key(g, g.nodes[i], kAvx512));
  }
  passes::pack_conv_weights(g, kAvx512,
                            [](const graph::Graph&, const graph::Node&, bool) { return true; });
  passes::alter_op_layout(g, kAvx512);
  const std::vector<std::string> blocks = {"output_block=16", "input_block=16", "input_block=16"};
  for (size_t k = 0; k < convs.size(); ++k) {
    const graph::Node& n = g.nodes[convs[k]];
    std::string key = workload_key(g, n);
    EXPECT_NE(key.find(blocks[k]), std::string::npos) << key;
    EXPECT_EQ(layout_workload_keys(g, n), predicted[k]);
    EXPECT_NE(std::find(predicted[k].begin(), predicted[k].end(), key), predicted[k].end()) << key;
  }
}

// A conv whose last block is padded (40 channels) and that alter_op_layout lets write blocks (a
// global pool reads them) has its padded bias in its key, one of its packed_workload_keys.
TEST(TaskTest, PaddedBlockedConvKeysCarryThePaddedBias) {
  Builder b;
  graph::ValueId x = b.input("x", {1, 32, 4, 13});
  graph::ValueId a = b.op("Conv", {x, b.constant("wa", random_tensor({32, 32, 3, 3}, 1))},
                          {{"pads", ints({1, 1, 1, 1})}});
  graph::ValueId c = b.op("Conv", {a, b.constant("wc", random_tensor({40, 32, 1, 1}, 2)),
                                   b.constant("bc", random_tensor({40}, 3))});
  graph::Graph g = b.finish({b.op("GlobalAveragePool", {c})});
  passes::infer_type(g);
  std::vector<std::string> predicted = packed_workload_keys(g, g.nodes[1], kAvx512);
  passes::pack_conv_weights(g, kAvx512,
                            [](const graph::Graph&, const graph::Node&, bool) { return true; });
  passes::alter_op_layout(g, kAvx512);
  std::string key = workload_key(g, g.nodes[1]);
  EXPECT_NE(key.find("float32[48]"), std::string::npos) << key;
  EXPECT_NE(key.find("output_block=16"), std::string::npos) << key;
  EXPECT_NE(std::find(predicted.begin(), predicted.end(), key), predicted.end()) << key;
  // Laid out, its keys are the same list: its NCHW-output forms read the unpadded bias.
  EXPECT_EQ(layout_workload_keys(g, g.nodes[1]), predicted);
}

TEST(TaskTest, BothLayoutsGiveEachPackableConvItsOtherForm) {
  std::vector<passes::FusedGroup> groups, other_groups;
  graph::Graph g = planned(packable_model(), {}, groups);
  graph::Graph other = planned(
      packable_model(), [](const graph::Graph&, const graph::Node&, bool rule) { return !rule; },
      other_groups);
  std::vector<Task> tasks = extract_tasks_both_layouts(g, groups, other, other_groups);
  ASSERT_EQ(tasks.size(), 4u);
  EXPECT_EQ(tasks[0].op, "ConvNCHWc");
  EXPECT_EQ(tasks[1].op, "Conv");
  for (int i : {0, 1}) {
    EXPECT_EQ(tasks[i].graph, 0);
    EXPECT_EQ(tasks[i].layout_of, "");
  }
  EXPECT_EQ(tasks[2].op, "Conv");  // the first conv, direct
  EXPECT_EQ(tasks[2].layout_of, tasks[0].workload);
  EXPECT_EQ(tasks[3].op, "ConvNCHWc");
  EXPECT_EQ(tasks[3].layout_of, tasks[1].workload);
  for (int i : {2, 3}) {
    EXPECT_EQ(tasks[i].graph, 1);
    EXPECT_EQ(tasks[i].weight, 1);
    EXPECT_DOUBLE_EQ(tasks[i].flops, tasks[i - 2].flops);
    EXPECT_EQ(graph::op_kind_name(other.nodes[other_groups[tasks[i].group].master].op),
              tasks[i].op);
  }
}

}  // namespace
}  // namespace tessel::autotune
