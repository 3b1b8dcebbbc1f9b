// nn graph ops lowered through topi (topi/compute_nn*.cc) with their default CPU schedules
// (topi/schedule_nn.cc), compiled with compile_graph and checked against the reference executor
// (1e-4 relative: the kernels accumulate in float32, the reference in double).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "ir/printer.h"
#include "lowering_test_util.h"
#include "passes/lower_to_te.h"
#include "passes/pipeline.h"
#include "te/lower.h"

namespace tessel::topi {
namespace {

using namespace testing;  // NOLINT
TensorData f32(std::vector<int64_t> shape, uint32_t seed) {
  return random_data(DataType::f32(), std::move(shape), seed, -1, 1);
}

void expect_close(const graph::Graph& g, const std::map<std::string, TensorData>& feeds,
                  const CompiledModel& m) {
  std::vector<TensorData> want = reference::run(g, feeds);
  ASSERT_EQ(m.num_outputs(), static_cast<int>(want.size()));
  for (size_t o = 0; o < want.size(); ++o) {
    TensorData got = to_tensor_data(m.get_output(static_cast<int>(o)));
    const std::string& what = g.value(g.outputs[o]).name;
    ASSERT_EQ(got.shape(), want[o].shape()) << what;
    int mismatches = 0;
    for (int64_t i = 0; i < got.numel() && mismatches < 5; ++i) {
      double x = got.get_double(i), y = want[o].get_double(i);
      if (std::abs(x - y) > 1e-4 * (1 + std::abs(y))) {
        ++mismatches;
        ADD_FAILURE() << what << " element " << i << ": got " << x << ", reference " << y;
      }
    }
  }
}

// Compiles the OpGraph's graph and compares every output with the reference.
void check(const OpGraph& m) {
  CompiledModel model = compile_graph(m.b.g);
  for (const auto& [name, value] : m.feeds) model.set_input(name, to_ndarray(value));
  model.run();
  expect_close(m.b.g, m.feeds, model);
}

TEST(ComputeNnTest, Conv2dAttributeVariants) {
  OpGraph m;
  auto x = m.input("x", f32({2, 4, 9, 11}, 1));
  auto w = m.constant("w", f32({6, 4, 3, 3}, 2));
  auto bias = m.constant("b", f32({6}, 3));
  m.op("pad1_bias", "Conv", {x, w, bias}, {{"pads", ints_attr({1, 1, 1, 1})}});
  m.op("stride2", "Conv", {x, w},
       {{"strides", ints_attr({2, 2})}, {"pads", ints_attr({0, 1, 2, 1})}});
  m.op("dilated", "Conv", {x, w},
       {{"dilations", ints_attr({2, 3})}, {"pads", ints_attr({2, 1, 0, 3})}});
  m.op("same_upper", "Conv", {x, w},
       {{"auto_pad", str_attr("SAME_UPPER")}, {"strides", ints_attr({2, 3})}});
  m.op("same_lower", "Conv", {x, w},
       {{"auto_pad", str_attr("SAME_LOWER")}, {"strides", ints_attr({2, 2})}});
  m.op("valid", "Conv", {x, w, bias}, {{"auto_pad", str_attr("VALID")}});
  m.op("grouped", "Conv", {x, m.constant("wg", f32({6, 2, 3, 1}, 4))}, {{"group", int_attr(2)}});
  m.op("depthwise", "Conv",
       {x, m.constant("wd", f32({8, 1, 3, 3}, 5)), m.constant("bd", f32({8}, 6))},
       {{"group", int_attr(4)}, {"pads", ints_attr({1, 1, 1, 1})}});
  auto w1 = m.constant("w1", f32({16, 4, 1, 1}, 7));
  m.op("pointwise", "Conv", {x, w1});
  // A strided 1x1 conv reads a subsampled copy of its input, padded or not; strided last axes of
  // other convs read the input phase by phase: two of three, all with dilation.
  m.op("pointwise_stride2", "Conv", {x, w1}, {{"strides", ints_attr({2, 2})}});
  m.op("pointwise_stride3x2_padded", "Conv", {x, w1},
       {{"strides", ints_attr({3, 2})}, {"pads", ints_attr({1, 0, 2, 1})}});
  m.op("narrow_stride3", "Conv", {x, m.constant("wn", f32({6, 4, 3, 2}, 13))},
       {{"strides", ints_attr({1, 3})}});
  m.op("dilated_stride2", "Conv", {x, w},
       {{"dilations", ints_attr({1, 2})},
        {"strides", ints_attr({2, 2})},
        {"pads", ints_attr({1, 2, 1, 2})}});
  check(m);
}

// Grouped convs pad their input rows per row of tiles (topi/schedule_nn.cc) and read strided
// columns directly: rows that do not fill a 4-row tile, widths with vector tails, strides 2 and
// 3, dilation, asymmetric pads, a channel multiplier of 2, 1-D.
TEST(ComputeNnTest, GroupedConvsPadTheirRowsPerTile) {
  OpGraph m;
  auto x = m.input("x", f32({1, 6, 13, 37}, 40));
  auto wd = m.constant("wd", f32({6, 1, 3, 3}, 41));
  auto bd = m.constant("bd", f32({6}, 42));
  Attrs depthwise{{"group", int_attr(6)}, {"pads", ints_attr({1, 1, 1, 1})}};
  m.op("dw", "Conv", {x, wd, bd}, depthwise);
  Attrs s2 = depthwise;
  s2["strides"] = ints_attr({2, 2});
  m.op("dw_stride2", "Conv", {x, wd, bd}, s2);
  m.op("dw_stride3_asym", "Conv", {x, wd},
       {{"group", int_attr(6)}, {"strides", ints_attr({3, 3})}, {"pads", ints_attr({0, 2, 1, 0})}});
  m.op("dw_dilated_stride2", "Conv", {x, wd},
       {{"group", int_attr(6)},
        {"strides", ints_attr({2, 2})},
        {"dilations", ints_attr({2, 2})},
        {"pads", ints_attr({2, 2, 2, 2})}});
  m.op("multiplier2_stride2", "Conv", {x, m.constant("wm", f32({12, 1, 5, 5}, 43))},
       {{"group", int_attr(6)}, {"strides", ints_attr({2, 2})}, {"pads", ints_attr({2, 2, 2, 2})}});
  m.op("groups3_stride2", "Conv", {x, m.constant("wg", f32({9, 2, 3, 3}, 44))},
       {{"group", int_attr(3)}, {"strides", ints_attr({2, 2})}, {"pads", ints_attr({1, 1, 1, 1})}});
  m.op("dw1d_stride2", "Conv",
       {m.input("x1", f32({2, 4, 45}, 45)), m.constant("w1", f32({4, 1, 3}, 46))},
       {{"group", int_attr(4)}, {"strides", ints_attr({2})}, {"pads", ints_attr({1, 1})}});
  // The column and row tiles of MobileNetV2's shapes (col_block, local_input_rows): 14 output
  // rows in tiles of 2; strided rows of 28 columns as one tile of two vectors (AVX-512) and of
  // 56 columns in half vectors.
  auto wq = m.constant("wq", f32({4, 1, 3, 3}, 47));
  Attrs dw4{{"group", int_attr(4)}, {"pads", ints_attr({1, 1, 1, 1})}};
  m.op("dw_14_rows", "Conv", {m.input("x14", f32({1, 4, 14, 20}, 48)), wq}, dw4);
  Attrs dw4_s2 = dw4;
  dw4_s2["strides"] = ints_attr({2, 2});
  m.op("dw_stride2_28_columns", "Conv", {m.input("x28", f32({1, 4, 28, 56}, 49)), wq}, dw4_s2);
  m.op("dw_stride2_56_columns", "Conv", {m.input("x56", f32({1, 4, 27, 112}, 50)), wq}, dw4_s2);
  check(m);
}

TEST(ComputeNnTest, Conv1dAnd3dAndRuntimeWeights) {
  OpGraph m;
  auto x1 = m.input("x1", f32({1, 3, 70}, 8));
  auto x3 = m.input("x3", f32({1, 2, 5, 6, 7}, 9));
  auto w = m.input("w", f32({5, 3, 4}, 10));
  m.op("conv1d", "Conv", {x1, w}, {{"pads", ints_attr({2, 1})}, {"strides", ints_attr({3})}});
  m.op("conv1d_wide", "Conv", {x1, w, m.input("b", f32({5}, 11))}, {{"dilations", ints_attr({2})}});
  m.op("conv3d", "Conv", {x3, m.constant("w3", f32({4, 2, 3, 2, 3}, 12))},
       {{"pads", ints_attr({1, 0, 1, 1, 1, 0})}, {"strides", ints_attr({1, 2, 1})}});
  check(m);
}

TEST(ComputeNnTest, ConvTransposeVariants) {
  OpGraph m;
  auto x = m.input("x", f32({1, 4, 5, 6}, 13));
  auto w = m.constant("w", f32({4, 3, 3, 3}, 14));
  m.op("plain", "ConvTranspose", {x, w, m.constant("b", f32({3}, 15))});
  m.op("stride2_pads", "ConvTranspose", {x, w},
       {{"strides", ints_attr({2, 2})},
        {"pads", ints_attr({1, 0, 1, 2})},
        {"output_padding", ints_attr({1, 1})}});
  m.op("dilated", "ConvTranspose", {x, w},
       {{"dilations", ints_attr({2, 1})}, {"strides", ints_attr({1, 3})}});
  m.op("grouped", "ConvTranspose", {x, m.constant("wg", f32({4, 2, 2, 3}, 16))},
       {{"group", int_attr(2)}, {"strides", ints_attr({2, 1})}});
  m.op("output_shape", "ConvTranspose", {x, w},
       {{"strides", ints_attr({2, 2})}, {"output_shape", ints_attr({10, 12})}});
  m.op("same_upper", "ConvTranspose", {x, w},
       {{"strides", ints_attr({2, 2})}, {"auto_pad", str_attr("SAME_UPPER")}});
  m.op("conv1d_t", "ConvTranspose",
       {m.input("x1", f32({2, 2, 7}, 17)), m.constant("w1", f32({2, 3, 4}, 18))},
       {{"strides", ints_attr({3})}, {"pads", ints_attr({1, 2})}});
  check(m);
}

TEST(ComputeNnTest, PoolVariants) {
  OpGraph m;
  auto x = m.input("x", f32({2, 3, 10, 13}, 19));
  Attrs k3s2{{"kernel_shape", ints_attr({3, 3})},
             {"strides", ints_attr({2, 2})},
             {"pads", ints_attr({1, 1, 1, 1})}};
  Attrs ceil = k3s2;
  ceil["ceil_mode"] = int_attr(1);
  ceil["pads"] = ints_attr({0, 1, 1, 0});
  Attrs dilated{{"kernel_shape", ints_attr({2, 3})},
                {"dilations", ints_attr({2, 2})},
                {"pads", ints_attr({1, 0, 0, 2})}};
  m.op("max", "MaxPool", {x}, k3s2);
  m.op("max_ceil", "MaxPool", {x}, ceil);
  m.op("max_dilated", "MaxPool", {x}, dilated);
  m.op("max_same", "MaxPool", {x},
       {{"kernel_shape", ints_attr({3, 2})}, {"auto_pad", str_attr("SAME_UPPER")}});
  m.op("avg", "AveragePool", {x}, k3s2);
  Attrs include = k3s2;
  include["count_include_pad"] = int_attr(1);
  m.op("avg_include_pad", "AveragePool", {x}, include);
  m.op("avg_ceil", "AveragePool", {x}, ceil);
  ceil["count_include_pad"] = int_attr(1);
  m.op("avg_ceil_include_pad", "AveragePool", {x}, ceil);
  m.op("lp2", "LpPool", {x}, k3s2);
  Attrs lp3 = dilated;
  lp3["p"] = int_attr(3);
  m.op("lp3", "LpPool", {x}, lp3);
  m.op("global_avg", "GlobalAveragePool", {x});
  m.op("global_max", "GlobalMaxPool", {x});
  m.op("global_lp", "GlobalLpPool", {x}, {{"p", int_attr(3)}});
  // Rows of whole lane groups: the global pools reduce lanes of partials, then combine them.
  for (auto [name, shape] :
       std::vector<std::pair<std::string, std::vector<int64_t>>>{{"wide", {2, 3, 5, 32}},
                                                                 {"eight", {1, 4, 3, 24}},
                                                                 {"flat1d", {1, 2, 48}},
                                                                 {"deep3d", {1, 2, 2, 3, 16}}}) {
    auto xl = m.input("x_" + name, f32(shape, 23));
    m.op("global_avg_" + name, "GlobalAveragePool", {xl});
    m.op("global_max_" + name, "GlobalMaxPool", {xl});
    m.op("global_lp_" + name, "GlobalLpPool", {xl}, {{"p", int_attr(3)}});
  }
  auto x1 = m.input("x1", f32({1, 2, 17}, 20));
  m.op("max1d", "MaxPool", {x1}, {{"kernel_shape", ints_attr({4})}, {"strides", ints_attr({3})}});
  auto x3 = m.input("x3", f32({1, 2, 4, 5, 6}, 21));
  m.op("avg3d", "AveragePool", {x3},
       {{"kernel_shape", ints_attr({2, 2, 3})}, {"pads", ints_attr({0, 1, 1, 1, 0, 1})}});
  check(m);
}

// MaxPool's Indices output: flat positions row-major (storage_order 0) or column-major over the
// spatial dims (1), through pads, strides, dilations, ceil mode, 1-D and 3-D; ties take the first.
TEST(ComputeNnTest, MaxPoolIndices) {
  OpGraph m;
  auto x = m.input("x", f32({2, 3, 7, 8}, 64));
  Attrs k3s2{{"kernel_shape", ints_attr({3, 3})},
             {"strides", ints_attr({2, 2})},
             {"pads", ints_attr({1, 1, 1, 1})}};
  m.op("rows", "MaxPool", {x}, k3s2, 2);
  k3s2["storage_order"] = int_attr(1);
  m.op("cols", "MaxPool", {x}, k3s2, 2);
  m.op("dilated_ceil", "MaxPool", {x},
       {{"kernel_shape", ints_attr({2, 3})},
        {"dilations", ints_attr({2, 1})},
        {"strides", ints_attr({2, 3})},
        {"ceil_mode", int_attr(1)},
        {"storage_order", int_attr(1)}},
       2);
  auto ties = m.input("ties", make_tensor(DataType::f32(), {1, 1, 3, 3},
                                          std::vector<double>{1, 2, 2, 2, 0, 2, 1, 1, 1}));
  m.op("ties", "MaxPool", {ties}, {{"kernel_shape", ints_attr({2, 2})}}, 2);
  m.op("ties_cols", "MaxPool", {ties},
       {{"kernel_shape", ints_attr({2, 2})}, {"storage_order", int_attr(1)}}, 2);
  m.op("pool1d", "MaxPool", {m.input("x1", f32({2, 2, 9}, 65))},
       {{"kernel_shape", ints_attr({4})}, {"strides", ints_attr({2})}}, 2);
  m.op("pool3d", "MaxPool", {m.input("x3", f32({1, 2, 4, 5, 3}, 66))},
       {{"kernel_shape", ints_attr({2, 2, 2})},
        {"pads", ints_attr({0, 1, 0, 1, 0, 1})},
        {"storage_order", int_attr(1)}},
       2);
  check(m);
}

TEST(ComputeNnTest, GemmVariants) {
  OpGraph m;
  auto a = m.input("a", f32({7, 19}, 22));
  auto at = m.input("at", f32({19, 7}, 23));
  auto b = m.constant("b", f32({19, 37}, 24));
  auto bt = m.constant("bt", f32({37, 19}, 25));
  m.op("plain", "Gemm", {a, b});
  m.op("trans_b_bias", "Gemm", {a, bt, m.constant("c_n", f32({37}, 26))},
       {{"transB", int_attr(1)}});
  m.op("trans_both", "Gemm", {at, bt, m.constant("c_m1", f32({7, 1}, 27))},
       {{"transA", int_attr(1)},
        {"transB", int_attr(1)},
        {"alpha", float_attr(0.5)},
        {"beta", float_attr(2)}});
  m.op("full_c", "Gemm", {at, b, m.input("c", f32({7, 37}, 28))},
       {{"transA", int_attr(1)}, {"beta", float_attr(-1)}});
  m.op("scalar_c", "Gemm", {a, b, m.constant("c0", f32({1}, 29))}, {{"alpha", float_attr(3)}});
  // One row: the column tiles run in parallel instead.
  m.op("row", "Gemm", {m.input("a1", f32({1, 19}, 30)), m.constant("wide", f32({300, 19}, 31))},
       {{"transB", int_attr(1)}});
  check(m);
}

TEST(ComputeNnTest, MatMulShapes) {
  OpGraph m;
  auto a = m.input("a", f32({5, 7}, 32));
  m.op("mm2d", "MatMul", {a, m.constant("b", f32({7, 40}, 33))});
  m.op("batched", "MatMul",
       {m.input("a3", f32({2, 3, 5, 7}, 34)), m.input("b3", f32({2, 3, 7, 4}, 35))});
  m.op("broadcast", "MatMul",
       {m.input("ab", f32({2, 1, 5, 7}, 36)), m.constant("bb", f32({3, 7, 9}, 37))});
  m.op("shared_b", "MatMul",
       {m.input("a4", f32({3, 6, 7}, 38)), m.constant("b2", f32({7, 6}, 39))});
  m.op("vec_mat", "MatMul", {m.input("v", f32({7}, 40)), m.constant("bv", f32({2, 7, 3}, 41))});
  m.op("mat_vec", "MatMul", {a, m.constant("u", f32({7}, 42))});
  check(m);
}

// GEMMs on the micro-kernel's tile (two vectors of columns, topi::matmul_cpu_config's rows) with
// rows and columns that leave tails, and activations whose rows are a leading axis ([L, 1, K] x
// [K, N], as exported attention projects its inputs), with a fused bias epilogue; and one row on
// the wide column tile.
TEST(ComputeNnTest, MatMulGemmTilesWithTailsAndLeadingRowAxes) {
  OpGraph m;
  m.op("tails", "MatMul", {m.input("a", f32({37, 19}, 50)), m.constant("b", f32({19, 83}, 51))});
  auto lead =
      m.b.node("MatMul", {m.input("x", f32({29, 1, 24}, 52)), m.constant("w", f32({24, 70}, 53))});
  m.op("lead_bias", "Add", {lead[0], m.constant("bias", f32({70}, 54))});
  m.op("lead_3d", "MatMul",
       {m.input("x3", f32({3, 13, 2, 16}, 55)), m.constant("w3", f32({16, 40}, 56))});
  m.op("wide", "Gemm", {m.input("g", f32({64, 48}, 57)), m.constant("gw", f32({48, 100}, 58))});
  m.op("one_row", "MatMul", {m.input("r", f32({1, 45}, 59)), m.constant("rw", f32({45, 300}, 60))});
  check(m);
}

// te buffers have at least one dim: a rank-0 MatMul result is a clear error, not a crash; Gemm's
// rank-0 C broadcasts like any other.
TEST(ComputeNnTest, RankZeroOperands) {
  OpGraph dot;
  dot.op("dot", "MatMul", {dot.input("v", f32({7}, 43)), dot.constant("u", f32({7}, 44))});
  expect_compile_error(dot.b.g, "rank-0 result has no te lowering");
  OpGraph gemm;
  gemm.op("g", "Gemm",
          {gemm.input("a", f32({2, 3}, 1)), gemm.constant("b", f32({3, 4}, 2)),
           gemm.constant("c", f32({}, 3))},
          {{"beta", float_attr(0.5)}});
  check(gemm);
}

TEST(ComputeNnTest, SoftmaxFamilyAxes) {
  OpGraph m;
  auto x = m.input("x", f32({2, 3, 5}, 45));
  for (const char* op : {"Softmax", "LogSoftmax", "Hardmax"}) {
    m.op(std::string(op) + "_default", op, {x});
    m.op(std::string(op) + "_axis0", op, {x}, {{"axis", int_attr(0)}});
    m.op(std::string(op) + "_axis1", op, {x}, {{"axis", int_attr(-2)}});
  }
  // Ties: Hardmax marks the first maximum only.
  m.op("hardmax_ties", "Hardmax",
       {m.input("t", make_tensor(DataType::f32(), {2, 3}, std::vector<double>{1, 3, 3, 2, 2, 0}))});
  check(m);
}

TEST(ComputeNnTest, Normalizations) {
  OpGraph m;
  auto x = m.input("x", f32({2, 3, 4, 5}, 46));
  m.op("instance", "InstanceNormalization",
       {x, m.constant("s3", f32({3}, 47)), m.constant("b3", f32({3}, 48))},
       {{"epsilon", float_attr(1e-3)}});
  m.op("layer_last", "LayerNormalization",
       {x, m.constant("s5", f32({5}, 49)), m.constant("b5", f32({5}, 50))}, {}, 3);
  m.op("layer_axis1", "LayerNormalization", {x, m.constant("s45", f32({3, 4, 5}, 51))},
       {{"axis", int_attr(1)}});
  m.op("batch_norm", "BatchNormalization",
       {x, m.constant("g", f32({3}, 52)), m.constant("beta", f32({3}, 53)),
        m.constant("mean", f32({3}, 54)),
        m.constant("var", random_data(DataType::f32(), {3}, 55, 0.5, 2))});
  m.op("lrn", "LRN", {x},
       {{"size", int_attr(3)}, {"alpha", float_attr(0.1)}, {"beta", float_attr(0.6)}});
  m.op("lrn_even", "LRN", {x}, {{"size", int_attr(4)}, {"bias", float_attr(2)}});
  check(m);
}

// training_mode=1: Y from the batch statistics, and the updated running mean and variance.
TEST(ComputeNnTest, BatchNormTraining) {
  OpGraph m;
  m.op("bn4d", "BatchNormalization",
       {m.input("x", f32({2, 3, 4, 5}, 56)), m.constant("g", f32({3}, 57)),
        m.constant("b", f32({3}, 58)), m.input("mean", f32({3}, 59)),
        m.input("var", random_data(DataType::f32(), {3}, 60, 0.5, 2))},
       {{"training_mode", int_attr(1)},
        {"momentum", float_attr(0.7)},
        {"epsilon", float_attr(1e-2)}},
       3);
  m.op("bn3d_defaults", "BatchNormalization",
       {m.input("x3", f32({4, 2, 6}, 61)), m.constant("g2", f32({2}, 62)),
        m.constant("b2", f32({2}, 63)), m.constant("mean2", f32({2}, 64)),
        m.constant("var2", random_data(DataType::f32(), {2}, 65, 0.5, 2))},
       {{"training_mode", int_attr(1)}}, 3);
  check(m);
}

// Conv + bias Add + Relu + residual Add: one fused group, so one kernel with the epilogue applied
// to the register tile.
graph::Graph conv_block(int64_t channels, int64_t size) {
  passes::testing::Builder b;
  auto x = b.input("x", {1, channels, size, size});
  auto conv = b.op("Conv", {x, b.constant("w", f32({channels, channels, 3, 3}, 56))},
                   {{"pads", ints_attr({1, 1, 1, 1})}}, "conv");
  auto add = b.op("Add", {conv, b.constant("bias", f32({channels, 1, 1}, 57))}, {}, "bias_add");
  auto relu = b.op("Relu", {add}, {}, "relu");
  return b.finish({b.op("Add", {relu, x}, {}, "residual")});
}

TEST(ComputeNnTest, ConvBiasReluResidualIsOneKernel) {
  graph::Graph g = conv_block(8, 37);
  CompiledModel model = compile_graph(g);
  EXPECT_NE(model.fusion_summary().find("[Conv+Add+Relu+Add]"), std::string::npos)
      << model.fusion_summary();
  EXPECT_EQ(model.executor().ops().size(), 1u) << model.fusion_summary();
  std::map<std::string, TensorData> feeds{{"x", f32({1, 8, 37, 37}, 58)}};
  model.set_input("x", to_ndarray(feeds["x"]));
  model.run();
  expect_close(g, feeds, model);
}

TEST(ComputeNnTest, DenseAndPoolEpiloguesAndPreActivationsMatchTheReference) {
  passes::testing::Builder b;
  auto x = b.input("x", {3, 40});
  auto fc = b.op("MatMul", {x, b.constant("w", f32({40, 50}, 59))}, {}, "fc");
  auto fc_out = b.op("Relu", {b.op("Add", {fc, b.constant("bias", f32({50}, 60))}, {}, "fc_bias")},
                     {}, "fc_relu");
  auto img = b.input("img", {1, 4, 12, 20});
  auto pre = b.op("Relu", {img}, {}, "pre_relu");
  auto conv = b.op("Conv", {pre, b.constant("cw", f32({4, 4, 3, 3}, 61))},
                   {{"pads", ints_attr({1, 1, 1, 1})}}, "conv");
  auto pool = b.op("MaxPool", {conv},
                   {{"kernel_shape", ints_attr({2, 2})}, {"strides", ints_attr({2, 2})}}, "pool");
  auto pool_out = b.op("Sigmoid", {pool}, {}, "pool_sigmoid");
  graph::Graph g = b.finish({fc_out, pool_out});
  CompiledModel model = compile_graph(g);
  EXPECT_NE(model.fusion_summary().find("[MatMul+Add+Relu]"), std::string::npos)
      << model.fusion_summary();
  std::map<std::string, TensorData> feeds{{"x", f32({3, 40}, 62)},
                                          {"img", f32({1, 4, 12, 20}, 63)}};
  for (const auto& [name, value] : feeds) model.set_input(name, to_ndarray(value));
  model.run();
  expect_close(g, feeds, model);
}

TEST(ComputeNnTest, ConvScheduleIsParallelVectorizedAndComputesTheTileInPlace) {
  graph::Graph g = conv_block(16, 32);
  passes::GraphPipelineOptions opt;
  opt.disabled_passes = {"winograd_conv", "pack_conv_weights"};  // the direct tiled template
  passes::GraphPipelineResult plan = passes::run_graph_pipeline(g, opt);
  ASSERT_EQ(plan.groups.size(), 1u);
  CpuModel avx2 = CpuModel::of(Target::parse("llvm -mtriple=x86_64-linux-gnu -mcpu=haswell"));
  passes::LoweredGroup lg = passes::lower_to_te(g, plan.groups[0], 0, avx2);
  std::string tir = to_string(te::lower(lg.schedule, lg.args, lg.name));
  EXPECT_NE(tir.find("parallel"), std::string::npos) << tir;
  EXPECT_NE(tir.find("ramp("), std::string::npos) << tir;
  // The conv is computed per tile inside the output's loops: an 8 x 8 accumulator (one 8-lane
  // vector of columns times 8 unrolled channels), not a full-size buffer.
  EXPECT_NE(tir.find("allocate conv: float32[64]"), std::string::npos) << tir;
}

// The only fused group of `m`'s last node, lowered for AVX-512: the TIR text and its config.
std::pair<std::string, ConfigEntity> lowered_last_node(const OpGraph& m) {
  graph::Graph g = m.b.g;
  g.outputs = {g.nodes.back().outputs[0]};
  passes::GraphPipelineResult plan = passes::run_graph_pipeline(g, {});
  EXPECT_EQ(plan.groups.size(), 1u);
  CpuModel avx512 =
      CpuModel::of(Target::parse("llvm -mtriple=x86_64-linux-gnu -mcpu=skylake-avx512"));
  passes::LoweredGroup lg = passes::lower_to_te(g, plan.groups.at(0), 0, avx512);
  return {to_string(te::lower(lg.schedule, lg.args, lg.name)), *lg.config};
}

// The padded input is allocated inside the parallel loop, `elements` of it: the rows that one row
// of tiles reads, not the whole input before the reduction.
void expect_rows_padded_per_tile(const std::string& tir, int64_t elements) {
  const std::string allocation = "_pad: float32[";
  size_t parallel = tir.find("parallel for"), pad = tir.find(allocation);
  ASSERT_NE(parallel, std::string::npos) << tir;
  ASSERT_NE(pad, std::string::npos) << tir;
  EXPECT_LT(parallel, pad) << tir;
  EXPECT_EQ(std::stoll(tir.substr(pad + allocation.size())), elements) << tir;
}

// A depthwise conv pads a few rows of one channel (cache-resident) per row of tiles; its tile is
// 4 output rows of one vector.
TEST(ComputeNnTest, DepthwiseConvPadsRowsInsideItsTiles) {
  OpGraph m;
  auto x = m.input("x", f32({1, 32, 56, 56}, 47));
  m.op(
      "dw", "Conv", {x, m.constant("w", f32({32, 1, 3, 3}, 48))},
      {{"group", int_attr(32)}, {"strides", ints_attr({2, 2})}, {"pads", ints_attr({1, 1, 1, 1})}});
  auto [tir, config] = lowered_last_node(m);
  // AVX-512: one tile spans the 28 columns (col_block) and 2 output rows, which at stride 2 read
  // 5 padded rows of 57 columns.
  expect_rows_padded_per_tile(tir, 5 * 57);
  EXPECT_EQ(config.split("tile_y")[1], 2);
  EXPECT_EQ(config.split("tile_col")[1], 28);
  check(m);
}

// So does a depthwise conv on blocked activations (a depthwise ConvNCHWc between two packed
// 1x1 convs; AVX2's blocks of 16 channels): one row of tiles, one output row of one block, pads
// the 3 input rows it reads, of one block. Its tiles of 4 columns span 16 output columns at
// stride 1 (14 and a ragged tile) and 8 at stride 2 (7), which read 18 and 17 padded columns.
TEST(ComputeNnTest, BlockedDepthwiseConvPadsRowsInsideItsTiles) {
  for (int64_t stride : {1, 2}) {
    OpGraph m;
    auto x = m.input("x", f32({1, 64, 14, 14}, 50));
    auto one_by_one = [&](ValueId in, const std::string& name, uint32_t seed) {
      return m.b.op("Conv", {in, m.constant(name + "_w", f32({64, 64, 1, 1}, seed))}, {}, name);
    };
    ValueId y = m.b.op("Relu", {one_by_one(x, "expand", 51)}, {}, "relu");
    y = m.b.op("Conv", {y, m.constant("dw_w", f32({64, 1, 3, 3}, 52))},
               {{"group", int_attr(64)},
                {"strides", ints_attr({stride, stride})},
                {"pads", ints_attr({1, 1, 1, 1})}},
               "dw");
    m.b.g.outputs = {one_by_one(y, "project", 53)};
    graph::Graph g = m.b.g;
    passes::GraphPipelineOptions opt;
    opt.cpu = CpuModel::of(Target::parse("llvm -mtriple=x86_64-linux-gnu -mcpu=haswell"));
    passes::GraphPipelineResult plan = passes::run_graph_pipeline(g, opt);
    auto dw = std::find_if(plan.groups.begin(), plan.groups.end(),
                           [&](const auto& group) { return g.nodes[group.master].name == "dw"; });
    ASSERT_NE(dw, plan.groups.end());
    ASSERT_EQ(g.nodes[dw->master].op, graph::OpKind::ConvNCHWc);
    passes::LoweredGroup lg = passes::lower_to_te(g, *dw, 0, *opt.cpu);
    expect_rows_padded_per_tile(to_string(te::lower(lg.schedule, lg.args, lg.name)),
                                3 * (stride == 1 ? 18 : 17) * 16);
    check(m);
  }
}

// A DenseNet layer on blocked activations: a Concat, a batch norm (Mul, Add) and Relu before a
// packed 1x1 conv, then a 3x3 conv. Where the conv's weights are no larger than its input, its
// threads share out the map by rows (channel blocks inside) and it computes its input stage one row
// at a time inside that loop, before the row's tiles (one parallel loop, the stage's buffer one row
// of every input block), unchunked over 512 channels too (with AVX2's tiles its weights would have
// it chunked without the stage); with under 4 rows per core (9 rows on 4 cores) the stage is
// computed first, rows outermost, split the same way. Where the weights outweigh the input (512 ->
// 64 channels at 7x7), both split by channel blocks. So too where the conv unpacks its output to
// NCHW (the graph's output). The parallel loops, for AVX-512 and AVX2; all match the reference on
// the host, with the map's height odd and even, and over a batch of two.
TEST(ComputeNnTest, PackedConvAndItsInputStageShareOutRows) {
  struct Case {
    int64_t channels, size;
    // The conv's parallel loop, and the stage's before it; none when the conv computes the stage.
    std::string stage_loop, conv_loop;
    bool unpacked = false;  // the 1x1 conv's output is the graph's (NCHW), no 3x3 conv
    int cores = 0;          // the target's -num-cores
    int64_t batch = 1;
  };
  const std::string rows = "parallel for (i0.i2.fused, 0, ";
  const Case cases[] = {
      {64, 14, "", rows + "14)"},
      {64, 9, "", rows + "9)"},
      {64, 9, "", rows + "9)", true},
      {512, 14, "", rows + "14)"},
      {64, 9, "", rows + "18)", false, 0, 2},
      {64, 9, rows + "9)", "parallel for (i0.i2.fused.i1.outer.fused", false, 4},
      {64, 9, rows + "9)", "parallel for (i0.i2.fused.i1.outer.outer", true, 4},
      {512, 7, "parallel for (i0.i1.fused.i2.fused", "parallel for (i0.i1.outer.fused.i2"},
  };
  for (const Case& c : cases) {
    for (std::string target : {"llvm -mtriple=x86_64-linux-gnu -mcpu=skylake-avx512",
                               "llvm -mtriple=x86_64-linux-gnu -mcpu=haswell"}) {
      if (c.cores > 0) target += " -num-cores=" + std::to_string(c.cores);
      SCOPED_TRACE(std::to_string(c.batch) + " x " + std::to_string(c.channels) + " channels at " +
                   std::to_string(c.size) + ", " + target);
      OpGraph m;
      int64_t ch = c.channels;
      // Weights of +-1/sqrt(fan-in), so that activations stay near 1 through the four layers.
      auto weights = [](std::vector<int64_t> shape, uint32_t seed) {
        double bound = 1 / std::sqrt(static_cast<double>(shape[1] * shape[2] * shape[3]));
        return random_data(DataType::f32(), std::move(shape), seed, -bound, bound);
      };
      auto x = m.input("x", f32({c.batch, ch, c.size, c.size}, 70));
      ValueId a = m.b.op("Conv", {x, m.constant("a_w", weights({ch / 2, ch, 1, 1}, 71))}, {}, "a");
      ValueId b = m.b.op("Conv", {x, m.constant("b_w", weights({ch / 2, ch, 1, 1}, 76))}, {}, "b");
      ValueId y = m.b.op("Concat", {a, b}, {{"axis", int_attr(1)}}, "concat");
      y = m.b.op("Mul", {y, m.constant("scale", f32({ch, 1, 1}, 72))}, {}, "scale");
      y = m.b.op("Add", {y, m.constant("shift", f32({ch, 1, 1}, 73))}, {}, "shift");
      y = m.b.op("Relu", {y}, {}, "relu");
      y = m.b.op("Conv", {y, m.constant("w", weights({64, ch, 1, 1}, 74))}, {}, "bottleneck");
      y = m.b.op("Relu", {y}, {}, "relu2");
      m.b.g.outputs = {c.unpacked
                           ? y
                           : m.b.op("Conv", {y, m.constant("w3", weights({32, 64, 3, 3}, 75))},
                                    {{"pads", ints_attr({1, 1, 1, 1})}}, "growth")};
      graph::Graph g = m.b.g;
      passes::GraphPipelineOptions opt;
      opt.disabled_passes = {"winograd_conv"};
      opt.cpu = CpuModel::of(Target::parse(target));
      passes::GraphPipelineResult plan = passes::run_graph_pipeline(g, opt);
      auto conv = std::find_if(plan.groups.begin(), plan.groups.end(), [&](const auto& group) {
        return g.nodes[group.master].name == "bottleneck";
      });
      ASSERT_NE(conv, plan.groups.end());
      ASSERT_EQ(g.nodes[conv->master].op, graph::OpKind::ConvNCHWc);
      passes::LoweredGroup lg = passes::lower_to_te(g, *conv, 0, *opt.cpu);
      std::string tir = to_string(te::lower(lg.schedule, lg.args, lg.name));
      size_t first = tir.find("parallel for ("), second = tir.find("parallel for (", first + 1);
      if (c.stage_loop.empty()) {
        EXPECT_EQ(tir.substr(first, c.conv_loop.size()), c.conv_loop) << tir;
        EXPECT_EQ(second, std::string::npos) << tir;
        // The stage's buffer is allocated in the task, which computes one row of it: the row's
        // columns in each input block.
        size_t buffer = tir.find("allocate relu: float32[");
        EXPECT_NE(buffer, std::string::npos) << tir;
        EXPECT_GT(buffer, first) << tir;
        EXPECT_NE(
            tir.find(fmt::format("for (i1, 0, {}) {{\n      for (i3, 0, {})", ch / 16, c.size),
                     buffer),
            std::string::npos)
            << tir;
      } else {
        ASSERT_NE(second, std::string::npos) << tir;
        EXPECT_EQ(tir.substr(first, c.stage_loop.size()), c.stage_loop) << tir;
        EXPECT_EQ(tir.substr(second, c.conv_loop.size()), c.conv_loop) << tir;
      }
      // Where the rows are shared out, a config that runs the conv serially runs its input stage
      // serially too (split by channel blocks, the stage keeps schedule_injective's own rule).
      if (c.conv_loop.find("(i0.i2.fused") != std::string::npos) {
        passes::LoweredGroup serial =
            passes::lower_to_te(g, *conv, 0, *opt.cpu, [](const ConfigSpace& space) {
              nlohmann::ordered_json config =
                  nlohmann::ordered_json::parse(space.fallback().to_json());
              config["parallel"] = 0;
              return ConfigEntity::from_json(space, config.dump(), true);
            });
        std::string serial_tir = to_string(te::lower(serial.schedule, serial.args, serial.name));
        EXPECT_EQ(serial_tir.find("parallel"), std::string::npos) << serial_tir;
      }
      check(m);
    }
  }
}

// A Winograd conv pads its input rows under the input transform's parallel loop, the m + 2 rows
// that each task's row of tiles reads (not the whole map at root in a launch of its own): three
// parallel loops (transform, GEMM, output), the padded rows' buffer allocated in the first. On
// blocked activations (after a 1x1 conv) and on NCHW ones (the layout pass off), odd and even
// maps; all against the reference.
TEST(ComputeNnTest, WinogradConvPadsTheRowsOfEachRowOfTiles) {
  for (bool blocked : {true, false}) {
    for (int64_t size : {28, 17}) {
      SCOPED_TRACE(std::string(blocked ? "blocked" : "NCHW") + " at " + std::to_string(size));
      OpGraph m;
      auto x = m.input("x", f32({1, 32, size, size}, 90));
      // A 1x1 conv first, whose blocked output the Winograd conv reads (the graph's input is NCHW).
      // Weights of +-1/sqrt(fan-in), so that activations stay near 1 (Winograd's roundings grow
      // with them).
      auto weights = [](std::vector<int64_t> shape, uint32_t seed) {
        double bound = 1 / std::sqrt(static_cast<double>(shape[1] * shape[2] * shape[3]));
        return random_data(DataType::f32(), std::move(shape), seed, -bound, bound);
      };
      ValueId pre = m.b.op("Conv", {x, m.constant("w0", weights({32, 32, 1, 1}, 92))}, {}, "pre");
      ValueId y = m.b.op("Conv", {pre, m.constant("w", weights({64, 32, 3, 3}, 91))},
                         {{"pads", ints_attr({1, 1, 1, 1})}}, "conv");
      m.b.g.outputs = {m.b.op("Relu", {y}, {}, "relu")};
      graph::Graph g = m.b.g;
      passes::GraphPipelineOptions opt;
      if (!blocked) opt.disabled_passes = {"alter_op_layout"};
      opt.cpu = CpuModel::of(Target::host());
      passes::GraphPipelineResult plan = passes::run_graph_pipeline(g, opt);
      auto conv = std::find_if(plan.groups.begin(), plan.groups.end(), [&](const auto& group) {
        return g.nodes[group.master].op == graph::OpKind::ConvWinograd;
      });
      ASSERT_NE(conv, plan.groups.end());
      passes::LoweredGroup lg = passes::lower_to_te(g, *conv, 0, *opt.cpu);
      std::string tir = to_string(te::lower(lg.schedule, lg.args, lg.name));
      // The buffer: m + 2 padded rows of the tiles' width (and of one block's 16 channels).
      int64_t tile = g.nodes[conv->master].attr_int("tile_size", 0);
      int64_t width = (size + tile - 1) / tile * tile + 2;
      std::string buffer =
          fmt::format("_pad: float32[{}]", (tile + 2) * width * (blocked ? 16 : 1));
      size_t first = tir.find("parallel for (");
      size_t pad = tir.find(buffer);
      ASSERT_NE(first, std::string::npos) << tir;
      EXPECT_NE(pad, std::string::npos) << buffer << "\n" << tir;
      EXPECT_GT(pad, first) << tir;
      size_t loops = 0;
      for (size_t at = tir.find("parallel for ("); at != std::string::npos;
           at = tir.find("parallel for (", at + 1))
        ++loops;
      EXPECT_EQ(loops, 3u) << tir;
      check(m);
    }
  }
}

// So does a padded pool, one output row a tile (more rows ran slower).
TEST(ComputeNnTest, PaddedPoolPadsRowsInsideItsTiles) {
  OpGraph m;
  auto x = m.input("x", f32({1, 8, 40, 40}, 49));
  m.op("max", "MaxPool", {x},
       {{"kernel_shape", ints_attr({3, 3})},
        {"strides", ints_attr({2, 2})},
        {"pads", ints_attr({1, 1, 1, 1})}});
  auto [tir, config] = lowered_last_node(m);
  expect_rows_padded_per_tile(tir, 3 * 65);  // 1 output row: 3 rows, 2 tiles of the 20 columns
  EXPECT_EQ(config.split("tile_y")[1], 1);
  check(m);
}

}  // namespace
}  // namespace tessel::topi
