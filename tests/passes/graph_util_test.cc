// node_flops: 2 x multiply-adds of the ops whose OpDef counts them (convolutions and matrix
// products), counted by hand here from the shapes; 0 for the others.
#include "passes/graph_util.h"

#include <gtest/gtest.h>

#include "passes/infer_type.h"
#include "tests/passes/graph_builder.h"

namespace tessel::passes {
namespace {

using testing::Builder;
using testing::ints;
using testing::random_tensor;

// The flops of each node of `g` (typed here), in order.
std::vector<double> flops_of(graph::Graph g) {
  infer_type(g);
  std::vector<double> out;
  for (const graph::Node& node : g.nodes) out.push_back(node_flops(g, node));
  return out;
}

TEST(NodeFlopsTest, Convolutions) {
  Builder b;
  graph::ValueId x = b.input("x", {1, 8, 10, 10});
  std::map<std::string, graph::Attr> k3 = {{"kernel_shape", ints({3, 3})},
                                           {"pads", ints({1, 1, 1, 1})}};
  graph::ValueId y = b.op("Conv", {x, b.constant("w", random_tensor({16, 8, 3, 3}, 1))}, k3);
  std::map<std::string, graph::Attr> grouped = k3;
  grouped["group"] = int64_t{4};
  graph::ValueId z = b.op("Conv", {y, b.constant("wg", random_tensor({16, 4, 3, 3}, 2))}, grouped);
  // Packed by blocks of 8 output channels: [16 / 8, 16, 3, 3, 8].
  graph::ValueId p =
      b.op("ConvNCHWc", {z, b.constant("wp", random_tensor({2, 16, 3, 3, 8}, 3))}, k3);
  graph::Graph g = b.finish({b.op("Relu", {p})});
  // Outputs x (input channels per group x 3 x 3) multiply-adds, twice.
  EXPECT_EQ(flops_of(g), (std::vector<double>{2.0 * (16 * 10 * 10) * (8 * 3 * 3),
                                              2.0 * (16 * 10 * 10) * (4 * 3 * 3),
                                              2.0 * (16 * 10 * 10) * (16 * 3 * 3), 0}));
}

TEST(NodeFlopsTest, MatrixProducts) {
  Builder b;
  graph::ValueId x = b.input("x", {3, 5, 7});
  graph::ValueId y = b.op("MatMul", {x, b.constant("w", random_tensor({7, 2}, 1))});  // [3, 5, 2]
  graph::ValueId a = b.input("a", {6, 4});
  // A is transposed: K is its first dim, 6; the output is [4, 9].
  graph::ValueId gemm = b.op("Gemm", {a, b.constant("bt", random_tensor({9, 6}, 2))},
                             {{"transA", int64_t{1}}, {"transB", int64_t{1}}});
  graph::ValueId v = b.op("MatMul", {b.input("v", {7}), b.constant("m", random_tensor({7, 3}, 3))});
  graph::Graph g = b.finish({y, gemm, v});
  EXPECT_EQ(flops_of(g),
            (std::vector<double>{2.0 * (3 * 5 * 2) * 7, 2.0 * (4 * 9) * 6, 2.0 * 3 * 7}));
}

// ConvTranspose is not counted (it is not tuned either).
TEST(NodeFlopsTest, OpsWithoutACountAreZero) {
  Builder b;
  graph::ValueId x = b.input("x", {1, 4, 8, 8});
  graph::ValueId t = b.op("ConvTranspose", {x, b.constant("w", random_tensor({4, 4, 3, 3}, 1))},
                          {{"kernel_shape", ints({3, 3})}});
  graph::ValueId p = b.op("MaxPool", {t}, {{"kernel_shape", ints({2, 2})}});
  graph::Graph g = b.finish({b.op("Softmax", {b.op("Add", {p, p})})});
  EXPECT_EQ(flops_of(g), (std::vector<double>{0, 0, 0, 0}));
}

}  // namespace
}  // namespace tessel::passes
