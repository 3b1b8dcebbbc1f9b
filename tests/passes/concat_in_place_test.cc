// concat_in_place: a Concat whose inputs are contiguous ranges of its output (every dim before
// the axis 1) runs no kernel: the kernels computing its inputs write them at their offsets in the
// output's buffer. Checked on fire modules (SqueezeNet's conv, conv, concat), a value in two
// Concats, a Concat of a Concat, DenseNet's block (Concats of prefixes of the last one's parts:
// views of its output), and the cases left as kernels; compiled results against the reference
// executor on the same graph.
#include "passes/concat_in_place.h"

#include <gtest/gtest.h>

#include <map>

#include "driver/compile.h"
#include "graph_builder.h"
#include "passes/pipeline.h"
#include "reference/reference.h"
#include "tests/common/compare.h"

namespace tessel::passes {
namespace {

using tessel::testing::expect_all_close;
using testing::Builder;
using testing::ints;
using testing::random_tensor;

// Relu(Conv(x, w)) with `channels` output channels, 3x3 with padding 1 or 1x1.
graph::ValueId conv_relu(Builder& b, graph::ValueId x, int64_t in, int64_t channels, int64_t k,
                         uint64_t seed) {
  graph::ValueId w =
      b.constant("w" + std::to_string(seed), random_tensor({channels, in, k, k}, seed));
  int64_t p = k / 2;
  return b.op("Relu", {b.op("Conv", {x, w}, {{"pads", ints({p, p, p, p})}})});
}

graph::ValueId concat(Builder& b, std::vector<graph::ValueId> parts, int64_t axis = 1) {
  return b.op("Concat", std::move(parts), {{"axis", graph::Attr(axis)}},
              "cat" + std::to_string(b.counter));
}

// The plan of the compiler's passes on `g`.
GraphPipelineResult planned(graph::Graph& g) { return run_graph_pipeline(g); }

// Compiled against the reference, and how many Concat kernels the compiled model runs.
int compiled_concat_kernels(const graph::Graph& g, const std::vector<int64_t>& x_shape) {
  std::map<std::string, graph::TensorData> feeds{{"x", random_tensor(x_shape, 7)}};
  std::vector<graph::TensorData> want = reference::run(g, feeds);
  CompiledModel model = compile_graph(g);
  model.set_input("x", to_ndarray(feeds["x"]));
  model.run();
  std::vector<graph::TensorData> got;
  for (int o = 0; o < model.num_outputs(); ++o) got.push_back(to_tensor_data(model.get_output(o)));
  expect_all_close(got, want, {1e-4, 1e-4});
  int kernels = 0;
  for (const auto& k : model.plan().kernels) kernels += k.ops.find("Concat") != std::string::npos;
  return kernels;
}

// A fire module: squeeze 1x1, then expand 1x1 and 3x3 concatenated, then a 1x1 conv reading it.
graph::Graph fire(std::vector<int64_t> x_shape, int64_t expand = 16) {
  Builder b;
  graph::ValueId x = b.input("x", x_shape);
  graph::ValueId s = conv_relu(b, x, x_shape[1], 8, 1, 1);
  graph::ValueId cat =
      concat(b, {conv_relu(b, s, 8, expand, 1, 2), conv_relu(b, s, 8, expand, 3, 3)});
  return b.finish({conv_relu(b, cat, 2 * expand, 4, 1, 4)});
}

TEST(ConcatInPlace, FireModulesWriteTheirExpandConvsIntoTheConcat) {
  graph::Graph g = fire({1, 8, 12, 12});
  GraphPipelineResult plan = planned(g);
  ASSERT_EQ(plan.in_place.groups.size(), 1u);
  ASSERT_EQ(plan.in_place.aliases.size(), 2u);
  std::vector<int64_t> offsets;
  for (const auto& [part, alias] : plan.in_place.aliases) offsets.push_back(alias.offset);
  std::sort(offsets.begin(), offsets.end());
  EXPECT_EQ(offsets, (std::vector<int64_t>{0, 16 * 12 * 12 * 4}));
  EXPECT_EQ(compiled_concat_kernels(fire({1, 8, 12, 12}), {1, 8, 12, 12}), 0);
}

TEST(ConcatInPlace, OtherConcatsStayKernels) {
  // A batch of 2: each part is two ranges of the output.
  EXPECT_EQ(compiled_concat_kernels(fire({2, 8, 12, 12}), {2, 8, 12, 12}), 1);
  // 3 channels of 5 x 5: the second part would start 300 bytes in, not at a 64-byte boundary.
  EXPECT_EQ(compiled_concat_kernels(fire({1, 8, 5, 5}, 3), {1, 8, 5, 5}), 1);
  const std::vector<std::pair<const char*, std::function<graph::Graph()>>> cases = {
      {"along the height",
       [] {
         Builder b;
         graph::ValueId x = b.input("x", {1, 8, 8, 8});
         graph::ValueId cat =
             concat(b, {conv_relu(b, x, 8, 16, 1, 1), conv_relu(b, x, 8, 16, 1, 2)}, 2);
         return b.finish({conv_relu(b, cat, 16, 4, 1, 9)});
       }},
      {"a graph input as a part",
       [] {
         Builder b;
         graph::ValueId x = b.input("x", {1, 16, 8, 8});
         return b.finish(
             {conv_relu(b, concat(b, {x, conv_relu(b, x, 16, 16, 1, 1)}), 32, 4, 1, 9)});
       }},
      {"a part twice",
       [] {
         Builder b;
         graph::ValueId x = b.input("x", {1, 16, 8, 8});
         graph::ValueId y = conv_relu(b, x, 16, 16, 1, 1);
         return b.finish({conv_relu(b, concat(b, {y, y}), 32, 4, 1, 9)});
       }},
      {"the output a graph output",
       [] {
         Builder b;
         graph::ValueId x = b.input("x", {1, 16, 8, 8});
         return b.finish(
             {concat(b, {conv_relu(b, x, 16, 16, 1, 1), conv_relu(b, x, 16, 16, 1, 2)})});
       }},
      {"a part a graph output",
       [] {
         Builder b;
         graph::ValueId x = b.input("x", {1, 16, 8, 8});
         graph::ValueId y = conv_relu(b, x, 16, 16, 1, 1);
         return b.finish(
             {conv_relu(b, concat(b, {y, conv_relu(b, x, 16, 16, 1, 2)}), 32, 4, 1, 9), y});
       }},
  };
  for (const auto& [what, make] : cases) {
    SCOPED_TRACE(what);
    graph::Graph g = make();
    EXPECT_TRUE(planned(g).in_place.groups.empty());
    EXPECT_EQ(compiled_concat_kernels(make(), g.value(g.inputs[0]).type.shape), 1);
  }
}

// x0 in two Concats (only the first takes it), and a Concat of a Concat (both in place: the inner
// one's parts live in the outer one's output, at the inner one's offset there).
TEST(ConcatInPlace, AValueInTwoConcatsAndNestedConcats) {
  Builder b;
  graph::ValueId x = b.input("x", {1, 16, 8, 8});
  graph::ValueId x0 = conv_relu(b, x, 16, 16, 3, 1);
  graph::ValueId c1 = concat(b, {x0, conv_relu(b, x0, 16, 16, 3, 2)});
  graph::ValueId c2 = concat(b, {x0, conv_relu(b, c1, 32, 16, 3, 3)});
  graph::ValueId c3 = concat(b, {c1, conv_relu(b, c2, 32, 16, 1, 4)});
  graph::Graph g = b.finish({conv_relu(b, c3, 48, 4, 1, 5)});
  graph::Graph copy = g;
  GraphPipelineResult plan = planned(g);
  EXPECT_EQ(plan.in_place.groups.size(), 2u);
  // x0, the first layer's features and c1 itself all in c3, the root of the chain.
  int in_c3 = 0;
  for (const auto& [value, alias] : plan.in_place.aliases) in_c3 += alias.host == c3;
  EXPECT_EQ(in_c3, 4);
  EXPECT_EQ(compiled_concat_kernels(copy, {1, 16, 8, 8}), 1);
}

// DenseNet's block: after every layer a Concat of the block's input and all features so far.
// The last Concat hosts the parts, the earlier ones are views of its prefixes, and none runs a
// kernel. A Concat of a run in the middle is a view too.
TEST(ConcatInPlace, ConcatsOfARunOfAnotherConcatsPartsAreViews) {
  auto block = [](bool middle) {
    Builder b;
    graph::ValueId x = b.input("x", {1, 16, 8, 8});
    std::vector<graph::ValueId> features{conv_relu(b, x, 16, 16, 3, 1)};
    graph::ValueId cat = features[0];
    for (uint64_t layer = 0; layer < 3; ++layer) {
      int64_t channels = 16 * static_cast<int64_t>(features.size());
      features.push_back(conv_relu(b, cat, channels, 16, layer % 2 ? 1 : 3, 2 + layer));
      cat = concat(b, features);
    }
    std::vector<graph::ValueId> outputs{conv_relu(b, cat, 64, 8, 1, 9)};
    if (middle)
      outputs.push_back(conv_relu(b, concat(b, {features[1], features[2]}), 32, 8, 1, 10));
    return b.finish(outputs);
  };
  for (bool middle : {false, true}) {
    SCOPED_TRACE(middle ? "and a Concat of the middle parts" : "the block");
    graph::Graph g = block(middle);
    GraphPipelineResult plan = planned(g);
    EXPECT_EQ(plan.in_place.groups.size(), middle ? 4u : 3u);
    // 4 parts, 2 prefixes (and the middle run, 16 x 8 x 8 floats in).
    EXPECT_EQ(plan.in_place.aliases.size(), middle ? 7u : 6u);
    std::map<int64_t, int> offsets;
    for (const auto& [value, alias] : plan.in_place.aliases) ++offsets[alias.offset];
    EXPECT_EQ(offsets[0], 3);  // the first part and the two prefixes
    EXPECT_EQ(offsets[16 * 8 * 8 * 4], middle ? 2 : 1);
    EXPECT_EQ(compiled_concat_kernels(block(middle), {1, 16, 8, 8}), 0);
  }
}

TEST(ConcatInPlace, DisabledItRunsTheConcat) {
  graph::Graph g = fire({1, 8, 12, 12});
  GraphPipelineOptions opt;
  opt.disabled_passes = {"concat_in_place"};
  EXPECT_TRUE(run_graph_pipeline(g, opt).in_place.groups.empty());
}

}  // namespace
}  // namespace tessel::passes
