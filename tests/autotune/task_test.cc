// Task extraction: one task per distinct Conv/MatMul/Gemm workload, weighted by occurrences.
#include "autotune/task.h"

#include <gtest/gtest.h>

#include "passes/pipeline.h"
#include "tests/passes/graph_builder.h"

namespace tessel::autotune {
namespace {

using passes::testing::Builder;
using passes::testing::random_tensor;
using passes::testing::ints;

// x -> conv(3x3, s1) -> relu -> conv(3x3, s1, same weights shape) -> relu -> conv(3x3, s2) -> flatten -> matmul
graph::Graph model() {
  Builder b;
  graph::ValueId x = b.input("x", {1, 4, 8, 8});
  auto conv = [&](graph::ValueId in, int64_t stride, const std::string& name) {
    graph::ValueId w = b.constant(name + "_w", random_tensor({4, 4, 3, 3}, 1));
    return b.op("Relu", {b.op("Conv", {in, w},
                              {{"kernel_shape", ints({3, 3})}, {"pads", ints({1, 1, 1, 1})}, {"strides", ints({stride, stride})}},
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
            "Conv|float32[1, 4, 8, 8]|float32[4, 4, 3, 3]|kernel_shape=[3, 3];pads=[1, 1, 1, 1];strides=[1, 1]");
  EXPECT_NE(tasks[1].workload.find("strides=[2, 2]"), std::string::npos) << tasks[1].workload;
}

TEST(TaskTest, KeysAreStableAcrossRunsAndModels) {
  graph::Graph a = model(), b = model();
  auto ta = extract_tasks(a, passes::run_graph_pipeline(a).groups);
  auto tb = extract_tasks(b, passes::run_graph_pipeline(b).groups);
  ASSERT_EQ(ta.size(), tb.size());
  for (size_t i = 0; i < ta.size(); ++i) EXPECT_EQ(ta[i].workload, tb[i].workload);
  EXPECT_TRUE(is_tunable("Gemm"));
  EXPECT_FALSE(is_tunable("Relu"));
}

}  // namespace
}  // namespace tessel::autotune
