#include "passes/fuse_ops.h"

#include <gtest/gtest.h>

#include "graph_builder.h"
#include "passes/infer_type.h"

namespace tessel::passes {
namespace {
using testing::Builder;
using testing::ints;
using testing::random_tensor;

// Group membership by node name, for golden partitions.
std::vector<std::vector<std::string>> partition(const graph::Graph& g,
                                                const std::vector<FusedGroup>& groups) {
  std::vector<std::vector<std::string>> out;
  for (const auto& grp : groups) {
    std::vector<std::string> names;
    for (auto n : grp.nodes) names.push_back(g.nodes[n].name);
    out.push_back(names);
  }
  return out;
}

using Partition = std::vector<std::vector<std::string>>;

TEST(FuseOpsTest, ConvAbsorbsBiasAndActivation) {
  Builder b;
  auto x = b.input("x", {1, 3, 8, 8});
  auto w = b.constant("w", random_tensor({4, 3, 3, 3}, 1));
  auto bias = b.constant("bias", random_tensor({1, 4, 1, 1}, 2));
  auto c = b.op("Conv", {x, w}, {{"kernel_shape", ints({3, 3})}}, "conv");
  auto a = b.op("Add", {c, bias}, {}, "add");
  auto r = b.op("Relu", {a}, {}, "relu");
  graph::Graph g = b.finish({r});
  infer_type(g);
  auto groups = fuse_ops(g);
  EXPECT_EQ(partition(g, groups), (Partition{{"conv", "add", "relu"}})) << to_string(g, groups);
  EXPECT_EQ(g.nodes[groups[0].master].name, "conv");
  EXPECT_EQ(groups[0].pattern, graph::OpPattern::kOutEWiseFusable);
}

TEST(FuseOpsTest, ResidualAddFusesIntoTheSecondConv) {
  Builder b;
  auto x = b.input("x", {1, 4, 8, 8});
  auto w1 = b.constant("w1", random_tensor({4, 4, 3, 3}, 1));
  auto w2 = b.constant("w2", random_tensor({4, 4, 3, 3}, 2));
  graph::Attr pads = ints({1, 1, 1, 1});
  auto c1 = b.op("Conv", {x, w1}, {{"pads", pads}}, "conv1");
  auto r1 = b.op("Relu", {c1}, {}, "relu1");
  auto c2 = b.op("Conv", {r1, w2}, {{"pads", pads}}, "conv2");
  auto add = b.op("Add", {c2, r1}, {}, "add");
  auto r2 = b.op("Relu", {add}, {}, "relu2");
  graph::Graph g = b.finish({r2});
  infer_type(g);
  auto groups = fuse_ops(g);
  EXPECT_EQ(partition(g, groups), (Partition{{"conv1", "relu1"}, {"conv2", "add", "relu2"}}))
      << to_string(g, groups);
  // The residual is an input of the second group.
  EXPECT_EQ(groups[1].inputs.size(), 2u);
}

TEST(FuseOpsTest, ElementwiseDiamondFusesWhole) {
  Builder b;
  auto x = b.input("x", {16});
  auto e = b.op("Exp", {x}, {}, "exp");
  auto n = b.op("Neg", {e}, {}, "neg");
  auto a = b.op("Abs", {e}, {}, "abs");
  auto s = b.op("Add", {n, a}, {}, "add");
  graph::Graph g = b.finish({s});
  infer_type(g);
  auto groups = fuse_ops(g);
  EXPECT_EQ(partition(g, groups), (Partition{{"exp", "neg", "abs", "add"}}))
      << to_string(g, groups);
}

TEST(FuseOpsTest, ElementwiseFusesIntoAReductionButNotAfterIt) {
  Builder b;
  auto x = b.input("x", {4, 16});
  auto e = b.op("Exp", {x}, {}, "exp");
  graph::TensorData axes(DataType::i64(), {1});
  axes.data<int64_t>()[0] = 1;
  auto r = b.op("ReduceSum", {e, b.constant("axes", axes)}, {{"keepdims", int64_t{1}}}, "sum");
  auto l = b.op("Log", {r}, {}, "log");
  graph::Graph g = b.finish({l});
  infer_type(g);
  auto groups = fuse_ops(g);
  EXPECT_EQ(partition(g, groups), (Partition{{"exp", "sum"}, {"log"}})) << to_string(g, groups);
}

TEST(FuseOpsTest, InjectiveChainsFuseAndOpaqueOpsStayAlone) {
  Builder b;
  auto x = b.input("x", {2, 3, 4});
  auto t = b.op("Transpose", {x}, {{"perm", ints({0, 2, 1})}}, "transpose");
  auto shape = b.constant("shape", [] {
    graph::TensorData s(DataType::i64(), {2});
    s.data<int64_t>()[0] = 2;
    s.data<int64_t>()[1] = 12;
    return s;
  }());
  auto r = b.op("Reshape", {t, shape}, {}, "reshape");
  auto k = b.constant("k", [] {
    graph::TensorData s(DataType::i64(), {1});
    s.data<int64_t>()[0] = 2;
    return s;
  }());
  auto topk = b.node("TopK", {r, k}, {}, 2, "topk");
  graph::Graph g = b.finish({topk[0]});
  infer_type(g);
  auto groups = fuse_ops(g);
  EXPECT_EQ(partition(g, groups), (Partition{{"transpose", "reshape"}, {"topk"}}))
      << to_string(g, groups);
}

TEST(FuseOpsTest, GroupSizeLimit) {
  Builder b;
  auto v = b.input("x", {8});
  for (int i = 0; i < 6; ++i) v = b.op("Relu", {v}, {}, "r" + std::to_string(i));
  graph::Graph g = b.finish({v});
  infer_type(g);
  EXPECT_EQ(fuse_ops(g).size(), 1u);
  auto limited = fuse_ops(g, {.max_fused_ops = 2});
  EXPECT_GE(limited.size(), 3u) << to_string(g, limited);
  for (const auto& grp : limited) EXPECT_LE(grp.nodes.size(), 2u);
}

// A node whose post-dominator is 300,000 nodes down a chain (an unrolled recurrence is such a
// graph): the path walks must not recurse once per node, which overflowed the stack.
TEST(FuseOpsTest, PathsDeeperThanTheCallStack) {
  constexpr int kChain = 300000;
  Builder b;
  auto x = b.input("x", {4});
  auto head = b.op("Relu", {x}, {}, "head");
  auto v = head;
  for (int i = 0; i < kChain; ++i) v = b.op("Neg", {v});
  auto out = b.op("Add", {head, v}, {}, "join");
  graph::Graph g = b.finish({out});
  infer_type(g);
  auto groups = fuse_ops(g);
  size_t nodes = 0;
  for (const auto& grp : groups) {
    nodes += grp.nodes.size();
    EXPECT_LE(grp.nodes.size(), 256u);
  }
  EXPECT_EQ(nodes, g.nodes.size());
}

TEST(FuseOpsTest, GroupsWithOnlyEmptyOutputsComputeNothing) {
  Builder b;
  auto x = b.input("x", {2, 0});
  auto y = b.input("y", {2, 3});
  auto g = b.finish({b.op("Relu", {x}), b.op("Relu", {y})});
  infer_type(g);
  auto groups = fuse_ops(g);
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_TRUE(computes_nothing(g, groups[0]));
  EXPECT_FALSE(computes_nothing(g, groups[1]));
}

}  // namespace
}  // namespace tessel::passes
