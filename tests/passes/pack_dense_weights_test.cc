// pack_dense_weights: MatMul and plain Gemm with a constant B become MatMulPacked with B in panels
// as wide as the target's GEMM register tile (AVX-512, AVX2 and NEON models), and compute the same
// values (the reference on the packed graph, and compiled against the reference on the original
// graph): batch-1 rows, rank-3 activations, column counts that leave the last panel partly padded,
// Gemm's C as an Add. Products whose B one panel covers, transposed or scaled Gemms and variable B
// are left alone; bad MatMulPacked nodes are errors that name the node.
#include "passes/pack_dense_weights.h"

#include <gtest/gtest.h>

#include <map>
#include <source_location>

#include "codegen/target.h"
#include "driver/compile.h"
#include "graph_builder.h"
#include "ir/error.h"
#include "passes/infer_type.h"
#include "reference/reference.h"
#include "tests/common/compare.h"
#include "tests/common/expect_error.h"

namespace tessel::passes {
namespace {

using tessel::testing::expect_all_close;
using testing::Builder;
using testing::random_tensor;

const CpuModel kAvx512 =
    CpuModel::of(Target::parse("llvm -mtriple=x86_64-linux-gnu -mcpu=skylake-avx512"));
const CpuModel kAvx2 = CpuModel::of(Target::parse("llvm -mtriple=x86_64-linux-gnu -mcpu=haswell"));
const CpuModel kNeon =
    CpuModel::of(Target::parse("llvm -mtriple=aarch64-linux-gnu -mcpu=neoverse-n1"));

struct DenseSpec {
  std::string op = "MatMul";
  std::vector<int64_t> a, b;  // A, and B as the op reads it ([K, N], or [N, K] with transB)
  std::map<std::string, graph::Attr> attrs = {};
  std::vector<int64_t> c = {};  // Gemm's C; none when empty
  bool constant_b = true;
};

// The product, then Relu (an epilogue that fuses into the kernel).
graph::Graph dense_model(const DenseSpec& d) {
  Builder b;
  std::vector<graph::ValueId> in{
      b.input("a", d.a), d.constant_b ? b.constant("b", random_tensor(d.b, 1)) : b.input("b", d.b)};
  if (!d.c.empty()) in.push_back(b.constant("c", random_tensor(d.c, 2)));
  return b.finish({b.op("Relu", {b.op(d.op, in, d.attrs, "dense")})});
}

graph::Graph packed(const DenseSpec& d, const CpuModel& cpu) {
  graph::Graph g = dense_model(d);
  infer_type(g);
  pack_dense_weights(g, cpu);
  infer_type(g);
  return g;
}

TEST(PackDenseWeights, PanelsAreTheTargetsGemmTileColumns) {
  // Batch-1 rows: eight vectors of columns (128 AVX-512 lanes, 64 AVX2 or 32 NEON ones); B's 512
  // KiB are at most twice each model's L2 (Haswell's 256 KiB).
  DenseSpec step{"MatMul", {1, 256}, {256, 512}};
  const std::vector<std::pair<const CpuModel*, int64_t>> targets = {
      {&kAvx512, 128}, {&kAvx2, 64}, {&kNeon, 32}};
  for (const auto& [cpu, block] : targets) {
    graph::Graph g = packed(step, *cpu);
    const graph::Node& mm = g.nodes[0];
    ASSERT_EQ(mm.op, graph::OpKind::MatMulPacked) << block;
    EXPECT_EQ(g.value(mm.inputs[1]).type.shape, (std::vector<int64_t>{512 / block, 256, block}));
    EXPECT_FALSE(mm.has_attr("columns"));
  }
  // Enough rows for the micro-kernel: its two vectors of columns.
  graph::Graph g = packed({"MatMul", {128, 1, 256}, {256, 768}}, kAvx512);
  EXPECT_EQ(g.value(g.nodes[0].inputs[1]).type.shape, (std::vector<int64_t>{24, 256, 32}));
  EXPECT_EQ(g.value(g.nodes[0].outputs[0]).type.shape, (std::vector<int64_t>{128, 1, 768}));
  // As many rows as the micro-kernel's: panels however large B is.
  g = packed({"MatMul", {12, 1280}, {1280, 1000}}, kAvx512);
  EXPECT_EQ(g.nodes[0].op, graph::OpKind::MatMulPacked);
  // 1000 columns: the last of 8 panels is padded and "columns" keeps N.
  g = packed({"Gemm", {1, 512}, {512, 1000}, {}, {1000}}, kAvx512);
  ASSERT_EQ(g.nodes.size(), 3u);
  EXPECT_EQ(g.nodes[0].op, graph::OpKind::MatMulPacked);
  EXPECT_EQ(g.nodes[0].attr_int("columns", 0), 1000);
  EXPECT_EQ(g.value(g.nodes[0].inputs[1]).type.shape, (std::vector<int64_t>{8, 512, 128}));
  EXPECT_EQ(g.nodes[1].op, graph::OpKind::Add);  // C
}

TEST(PackDenseWeights, OtherProductsAreLeftAlone) {
  const std::vector<std::pair<const char*, DenseSpec>> alone = {
      {"one panel covers B", {"MatMul", {4, 64}, {64, 10}}},
      {"variable B", {"MatMul", {4, 64}, {64, 512}, {}, {}, false}},
      {"vector A", {"MatMul", {64}, {64, 512}}},
      {"batched B", {"MatMul", {2, 4, 64}, {2, 64, 512}}},
      {"transposed A", {"Gemm", {64, 4}, {64, 512}, {{"transA", graph::Attr(int64_t{1})}}}},
      {"alpha", {"Gemm", {4, 64}, {64, 512}, {{"alpha", graph::Attr(0.5)}}}},
      {"beta", {"Gemm", {4, 64}, {64, 512}, {{"beta", graph::Attr(2.0)}}, {512}}},
      {"a matrix-vector product with B beyond twice the L2", {"MatMul", {1, 1280}, {1280, 1000}}},
  };
  for (const auto& [what, spec] : alone) {
    graph::Graph g = packed(spec, kAvx512);
    EXPECT_EQ(graph::op_kind_name(g.nodes[0].op), spec.op) << what;
  }
}

// The packed product against the original on the reference, and compiled (the pass runs in the
// compiler, for this machine's CPU) against the reference on the original graph.
void expect_packed_matches(const DenseSpec& spec) {
  SCOPED_TRACE(::testing::Message()
               << spec.op << " A [" << spec.a.size() << "-D, K " << spec.a.back() << "], B ["
               << spec.b[0] << ", " << spec.b[1] << "]");
  graph::Graph before = dense_model(spec);
  infer_type(before);
  graph::Graph g = packed(spec, CpuModel::of(Target::host()));
  ASSERT_EQ(g.nodes[0].op, graph::OpKind::MatMulPacked);
  std::map<std::string, graph::TensorData> feeds{{"a", random_tensor(spec.a, 3)}};
  std::vector<graph::TensorData> want = reference::run(before, feeds),
                                 got = reference::run(g, feeds);
  expect_all_close(got, want, {1e-6, 1e-6});
  CompiledModel model = compile_graph(before);
  EXPECT_NE(model.fusion_summary().find("MatMulPacked"), std::string::npos)
      << model.fusion_summary();
  model.set_input("a", to_ndarray(feeds["a"]));
  model.run();
  expect_all_close({to_tensor_data(model.get_output(0))}, want, {1e-4, 1e-4});
}

TEST(PackDenseWeights, PackedProductsComputeTheSame) {
  // B of at most 512 KiB where A has one row: packed whatever the host's L2.
  expect_packed_matches({"MatMul", {1, 256}, {256, 512}});             // an LSTM step
  expect_packed_matches({"MatMul", {3, 5, 70}, {70, 200}});            // rank 3, a padded panel
  expect_packed_matches({"MatMul", {64, 1, 96}, {96, 100}});           // rows along a leading dim
  expect_packed_matches({"Gemm", {1, 128}, {128, 1000}, {}, {1000}});  // a classifier
  expect_packed_matches({"Gemm", {13, 64}, {64, 300}, {}, {13, 1}});   // C per row
  // transB cleared by pretranspose_weights in the compiler; the pass sees B [K, N].
  expect_packed_matches({"Gemm", {40, 33}, {33, 520}});
}

TEST(PackDenseWeights, ProductsSharingBShareThePanels) {
  Builder b;
  graph::ValueId w = b.constant("w", random_tensor({64, 512}, 1));
  std::vector<graph::ValueId> outs;
  for (const char* x : {"x1", "x2"}) outs.push_back(b.op("MatMul", {b.input(x, {2, 64}), w}));
  graph::Graph g = b.finish(outs);
  infer_type(g);
  size_t values = g.values.size();
  pack_dense_weights(g, kAvx512);
  ASSERT_EQ(g.nodes[0].op, graph::OpKind::MatMulPacked);
  EXPECT_EQ(g.nodes[0].inputs[1], g.nodes[1].inputs[1]);
  EXPECT_EQ(g.values.size(), values + 1);
}

// A MatMulPacked node whose panels do not fit A or its "columns" is an error naming the node.
TEST(PackDenseWeights, BadPackedNodesAreErrors) {
  graph::Graph good = packed({"MatMul", {2, 64}, {64, 1000}}, kAvx512);
  ASSERT_EQ(good.nodes[0].op, graph::OpKind::MatMulPacked);
  // The spoiled graph's types are an error naming the node.
  auto expect_error = [&](const std::function<void(graph::Graph&)>& spoil, const std::string& msg,
                          std::source_location at = std::source_location::current()) {
    graph::Graph g = good;
    spoil(g);
    tessel::testing::expect_error([&] { infer_type(g); }, {msg, "'dense'"}, at);
  };
  expect_error([](graph::Graph& g) { g.nodes[0].attrs["columns"] = graph::Attr(int64_t{1025}); },
               "columns 1025 does not fit packed B float32[8, 64, 128]");
  expect_error([](graph::Graph& g) { g.nodes[0].attrs["columns"] = graph::Attr(int64_t{896}); },
               "columns 896 does not fit");
  expect_error([](graph::Graph& g) { g.value(g.nodes[0].inputs[0]).type.shape = {2, 63}; },
               "inner dims 63 and 64 differ");
  expect_error([](graph::Graph& g) { g.value(g.nodes[0].inputs[0]).type.shape = {64}; },
               "must have rank >= 2");
}

}  // namespace
}  // namespace tessel::passes
