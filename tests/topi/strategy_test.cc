// The strategy tables: every op family has a schedule on every CPU kind, GPU kinds say they have
// none yet, and the CPU strategies' fallback configs are pinned per target (moving the x86
// constants into the CPU model kept them on AVX-512 and AVX2).
#include "topi/strategy.h"

#include <gtest/gtest.h>

#include "../passes/graph_builder.h"
#include "codegen/target.h"
#include "passes/lower_to_te.h"
#include "passes/pipeline.h"
#include "tests/common/expect_error.h"

namespace tessel::topi {
namespace {

using passes::testing::Builder;
using passes::testing::ints;
using passes::testing::random_tensor;

using graph::OpFamily;

constexpr const char* kAvx512 = "llvm -mtriple=x86_64-linux-gnu -mcpu=skylake-avx512";
constexpr const char* kAvx2 = "llvm -mtriple=x86_64-linux-gnu -mcpu=haswell";
constexpr const char* kNeon = "llvm -mtriple=aarch64-linux-gnu -mcpu=neoverse-n1";

constexpr TargetKind kCpuKinds[] = {TargetKind::kX86Avx2, TargetKind::kX86Avx512,
                                    TargetKind::kAArch64Neon, TargetKind::kGenericCpu};

TEST(StrategyTest, EveryFamilyHasACpuSchedule) {
  for (TargetKind kind : kCpuKinds) {
    for (int f = 0; f < graph::kNumOpFamilies; ++f) {
      auto family = static_cast<OpFamily>(f);
      SCOPED_TRACE(std::string(target_kind_name(kind)) + ", " + graph::op_family_name(family));
      const Strategy& s = strategy_for(kind, family);
      EXPECT_NE(s.schedule, nullptr);
      bool tiled = family == OpFamily::kConv || family == OpFamily::kConvNCHWc ||
                   family == OpFamily::kDense || family == OpFamily::kPool;
      EXPECT_EQ(s.space != nullptr, tiled);
      EXPECT_EQ(s.fallback != nullptr, tiled);
    }
  }
}

OpFamily family_of(const std::string& op) { return graph::op_family(*graph::find_op(op)); }

// The nn ops state their family; the others take their pattern's.
TEST(StrategyTest, OpFamiliesOfTheOpDefs) {
  for (const char* op : {"Conv", "ConvTranspose"}) EXPECT_EQ(family_of(op), OpFamily::kConv) << op;
  EXPECT_EQ(family_of("ConvNCHWc"), OpFamily::kConvNCHWc);
  for (const char* op : {"Gemm", "MatMul"}) EXPECT_EQ(family_of(op), OpFamily::kDense) << op;
  for (const char* op :
       {"MaxPool", "AveragePool", "LpPool", "GlobalMaxPool", "GlobalAveragePool", "GlobalLpPool"}) {
    EXPECT_EQ(family_of(op), OpFamily::kPool) << op;
  }
  for (const char* op :
       {"Softmax", "LogSoftmax", "Hardmax", "LRN", "LayerNormalization", "InstanceNormalization"}) {
    EXPECT_EQ(family_of(op), OpFamily::kSoftmaxLike) << op;
  }
  for (const char* op : {"Relu", "Add", "Reshape", "Transpose"})
    EXPECT_EQ(family_of(op), OpFamily::kInjective) << op;
  for (const char* op : {"ReduceSum", "ArgMax"})
    EXPECT_EQ(family_of(op), OpFamily::kReduction) << op;
  for (const char* op : {"TopK", "BatchNormalization", "Einsum"})
    EXPECT_EQ(family_of(op), OpFamily::kOpaque) << op;
}

// Exactly the convolutions and matrix products are tuned and have a FLOP count; Winograd
// convolutions have no template but count the FLOPs of the conv they compute.
TEST(StrategyTest, TunedOpsAreTheConvolutionsAndMatrixProducts) {
  std::vector<std::string> tuned, counted;
  for (const graph::OpDef& def : graph::all_ops()) {
    if (def.tuned) tuned.emplace_back(def.name());
    if (def.flops) counted.emplace_back(def.name());
  }
  const std::vector<std::string> expected = {"Conv", "ConvNCHWc", "Gemm", "MatMul", "MatMulPacked"};
  EXPECT_EQ(tuned, expected);
  EXPECT_EQ(counted, std::vector<std::string>(
                         {"Conv", "ConvNCHWc", "ConvWinograd", "Gemm", "MatMul", "MatMulPacked"}));
}

TEST(StrategyTest, GpuKindsHaveNoSchedulesYet) {
  tessel::testing::expect_error([] { strategy_for(TargetKind::kCuda, OpFamily::kConv); },
                                {"CUDA schedules are not implemented yet (op family conv)"});
  tessel::testing::expect_error([] { strategy_for(TargetKind::kOpenCL, OpFamily::kInjective); },
                                {"OpenCL schedules are not implemented yet (op family injective)"});
}

TEST(StrategyTest, TheCpuModelPicksTheTargetKind) {
  EXPECT_EQ(target_kind(CpuModel::of(Target::parse(kAvx512))), TargetKind::kX86Avx512);
  EXPECT_EQ(target_kind(CpuModel::of(Target::parse(kAvx2))), TargetKind::kX86Avx2);
  EXPECT_EQ(target_kind(CpuModel::of(Target::parse(kNeon))), TargetKind::kAArch64Neon);
  EXPECT_EQ(target_kind(CpuModel::of(Target::parse("llvm -mtriple=x86_64-linux-gnu -mcpu=x86-64"))),
            TargetKind::kGenericCpu);
}

// The only templated group of `g` lowered for `target`.
passes::LoweredGroup lowered(graph::Graph g, const std::string& target) {
  CpuModel cpu = CpuModel::of(Target::parse(target));
  passes::GraphPipelineOptions opt;
  opt.disabled_passes = {"winograd_conv"};  // the tiled template's fallbacks
  opt.cpu = cpu;                            // pack_conv_weights' rule reads it too
  passes::GraphPipelineResult plan = passes::run_graph_pipeline(g, opt);
  for (size_t i = 0; i < plan.groups.size(); ++i) {
    passes::LoweredGroup lg = passes::lower_to_te(g, plan.groups[i], static_cast<int>(i), cpu);
    if (lg.space) return lg;
  }
  ADD_FAILURE() << "no templated group";
  return {};
}

graph::Graph conv(std::vector<int64_t> x_shape, std::vector<int64_t> w_shape, int64_t group = 1) {
  Builder b;
  graph::ValueId x = b.input("x", x_shape);
  graph::ValueId y = b.op(
      "Conv", {x, b.constant("w", random_tensor(w_shape, 1))},
      {{"kernel_shape", ints({3, 3})}, {"pads", ints({1, 1, 1, 1})}, {"group", int64_t{group}}});
  return b.finish({b.op("Relu", {y})});
}

// A grouped 3x3 conv of `strides` on a size x size input, `per_group` channels a group (16 in
// all): depthwise of stride 2 is MobileNetV2's (to 56 or 28 output columns).
graph::Graph strided_grouped_conv(int64_t size, std::vector<int64_t> strides = {2, 2},
                                  int64_t per_group = 1) {
  Builder b;
  graph::ValueId x = b.input("x", {1, 16, size, size});
  graph::ValueId y = b.op("Conv", {x, b.constant("w", random_tensor({16, per_group, 3, 3}, 1))},
                          {{"kernel_shape", ints({3, 3})},
                           {"pads", ints({1, 1, 1, 1})},
                           {"strides", ints(strides)},
                           {"group", int64_t{16 / per_group}}});
  return b.finish({b.op("Relu", {y})});
}

graph::Graph pointwise(std::vector<int64_t> x_shape, std::vector<int64_t> w_shape) {
  Builder b;
  graph::ValueId x = b.input("x", x_shape);
  graph::ValueId y = b.op("Conv", {x, b.constant("w", random_tensor(w_shape, 1))},
                          {{"kernel_shape", ints({1, 1})}});
  return b.finish({b.op("Relu", {y})});
}

graph::Graph matmul(std::vector<int64_t> a_shape, std::vector<int64_t> b_shape) {
  Builder b;
  graph::ValueId x = b.input("x", a_shape);
  return b.finish({b.op("MatMul", {x, b.constant("w", random_tensor(b_shape, 2))})});
}

graph::Graph gemm() {
  Builder b;
  graph::ValueId x = b.input("x", {1, 512});
  graph::ValueId y = b.op(
      "Gemm",
      {x, b.constant("w", random_tensor({10, 512}, 3)), b.constant("c", random_tensor({10}, 4))},
      {{"transB", int64_t{1}}});
  return b.finish({y});
}

graph::Graph pool() {
  Builder b;
  graph::ValueId x = b.input("x", {1, 32, 28, 28});
  return b.finish(
      {b.op("MaxPool", {x}, {{"kernel_shape", ints({2, 2})}, {"strides", ints({2, 2})}})});
}

struct Pinned {
  const char* workload;
  graph::Graph (*model)();
  const char* target;
  uint64_t space_size;
  const char* fallback;
};

// Today's fallbacks (the hand-written policy) on AVX-512 (16 lanes, 32 registers) and AVX2 (8
// lanes, 16 registers).
const Pinned kPinned[] = {
    {"conv", [] { return conv({1, 2, 14, 14}, {32, 2, 3, 3}); }, kAvx512, 1728,
     R"({"tile_row":[2,16],"tile_col":[1,14],"tile_y":[14,1],"reorder_k":[0,1,2],"unroll_k":0,"parallel":1})"},
    {"conv", [] { return conv({1, 2, 14, 14}, {32, 2, 3, 3}); }, kAvx2, 1728,
     R"({"tile_row":[4,8],"tile_col":[2,8],"tile_y":[14,1],"reorder_k":[0,1,2],"unroll_k":0,"parallel":1})"},
    {"grouped_conv", [] { return conv({1, 32, 28, 28}, {48, 8, 3, 3}, 4); }, kAvx512, 1536,
     R"({"tile_row":[3,4],"tile_col":[2,16],"tile_y":[7,4],"reorder_k":[0,1,2],"unroll_k":0,"parallel":1})"},
    {"grouped_conv", [] { return conv({1, 32, 28, 28}, {48, 8, 3, 3}, 4); }, kAvx2, 1536,
     R"({"tile_row":[3,4],"tile_col":[4,8],"tile_y":[14,2],"reorder_k":[0,1,2],"unroll_k":0,"parallel":1})"},
    // Strided columns in half vectors where 16 lanes leave a tail (56 = 7 x 8).
    // 28 columns: on AVX-512 half vectors do not divide them either, so a whole row (two vectors,
    // the second partial) in 2 rows; AVX2 keeps one vector and 4 rows.
    {"depthwise_stride2_28", [] { return strided_grouped_conv(56); }, kAvx512, 384,
     R"({"tile_row":[1,1],"tile_col":[1,28],"tile_y":[14,2],"reorder_k":[0,1,2],"unroll_k":0,"parallel":1})"},
    {"depthwise_stride2_28", [] { return strided_grouped_conv(56); }, kAvx2, 384,
     R"({"tile_row":[1,1],"tile_col":[4,8],"tile_y":[7,4],"reorder_k":[0,1,2],"unroll_k":0,"parallel":1})"},
    // Neither rule for 8 channels a group (8 rows of accumulators) nor for a stride along the
    // height alone: one vector of columns and a tail.
    {"grouped_stride2_28", [] { return strided_grouped_conv(56, {2, 2}, 8); }, kAvx512, 1536,
     R"({"tile_row":[1,8],"tile_col":[2,16],"tile_y":[14,2],"reorder_k":[0,1,2],"unroll_k":0,"parallel":1})"},
    {"depthwise_stride_2x1", [] { return strided_grouped_conv(56, {2, 1}); }, kAvx512, 480,
     R"({"tile_row":[1,1],"tile_col":[4,16],"tile_y":[7,4],"reorder_k":[0,1,2],"unroll_k":0,"parallel":1})"},
    {"depthwise_stride2", [] { return strided_grouped_conv(112); }, kAvx512, 480,
     R"({"tile_row":[1,1],"tile_col":[7,8],"tile_y":[14,4],"reorder_k":[0,1,2],"unroll_k":0,"parallel":1})"},
    {"depthwise_stride2", [] { return strided_grouped_conv(112); }, kAvx2, 480,
     R"({"tile_row":[1,1],"tile_col":[7,8],"tile_y":[14,4],"reorder_k":[0,1,2],"unroll_k":0,"parallel":1})"},
    // 14 rows: tiles of 2 rows, which divide them, not of 4 and a tail.
    {"depthwise_14_rows", [] { return conv({1, 32, 14, 14}, {32, 1, 3, 3}, 32); }, kAvx512, 288,
     R"({"tile_row":[1,1],"tile_col":[1,14],"tile_y":[7,2],"reorder_k":[0,1,2],"unroll_k":0,"parallel":1})"},
    {"depthwise_14_rows", [] { return conv({1, 32, 14, 14}, {32, 1, 3, 3}, 32); }, kAvx2, 288,
     R"({"tile_row":[1,1],"tile_col":[2,8],"tile_y":[7,2],"reorder_k":[0,1,2],"unroll_k":0,"parallel":1})"},
    // Direct 1x1 convs (with 32 registers over fewer than 16 channels; with 16 over fewer than
    // 64): on 16 registers 6 rows of two vectors.
    {"pointwise_direct", [] { return pointwise({1, 8, 56, 56}, {24, 8, 1, 1}); }, kAvx512, 2400,
     R"({"tile_row":[3,8],"tile_col":[4,16],"tile_y":[56,1],"reorder_k":[0,1,2],"unroll_k":0,"parallel":1})"},
    {"pointwise_direct", [] { return pointwise({1, 32, 56, 56}, {24, 32, 1, 1}); }, kAvx2, 2400,
     R"({"tile_row":[4,6],"tile_col":[4,16],"tile_y":[56,1],"reorder_k":[0,1,2],"unroll_k":0,"parallel":1})"},
    // Packed convs may chunk their 64 input channels by 8, 16 or 32 (4x the space); a 3x3 conv
    // whose block weights (64 x 9 x 16 floats) take more than half of L1 does, by 32 with 32
    // registers (channels outermost, the kernel columns innermost and unrolled) and by 8 with 16,
    // but not a 1x1 conv over 256 channels (half of L1 exactly).
    {"packed_conv", [] { return conv({1, 64, 7, 7}, {32, 64, 3, 3}); }, kAvx512, 1344,
     R"({"tile_row":[1,2],"tile_y":[1,7],"reorder_k":[0,1,2],"unroll_k":1,"parallel":1,"reduce_chunk":32})"},
    {"packed_conv", [] { return conv({1, 64, 7, 7}, {32, 64, 3, 3}); }, kAvx2, 1344,
     R"({"tile_row":[2,1],"tile_y":[2,4],"reorder_k":[1,2,0],"unroll_k":0,"parallel":1,"reduce_chunk":8})"},
    // AVX2 chunks a window over at most 128 channels by 8 in strips of the map too (kernel offsets
    // outside a chunk's channels); over 256 channels the channels stay outermost. With 32
    // registers the map's accumulators take strips: unchunked, the channels outermost and the
    // kernel columns unrolled innermost.
    {"packed_conv_56", [] { return conv({1, 128, 56, 56}, {32, 128, 3, 3}); }, kAvx512, 2400,
     R"({"tile_row":[1,2],"tile_y":[7,8],"reorder_k":[0,1,2],"unroll_k":1,"parallel":1,"reduce_chunk":0})"},
    {"packed_conv_56", [] { return conv({1, 128, 56, 56}, {32, 128, 3, 3}); }, kAvx2, 2400,
     R"({"tile_row":[2,1],"tile_y":[14,4],"reorder_k":[1,2,0],"unroll_k":0,"parallel":1,"reduce_chunk":8})"},
    {"packed_conv_256", [] { return conv({1, 256, 7, 7}, {32, 256, 3, 3}); }, kAvx2, 2016,
     R"({"tile_row":[2,1],"tile_y":[2,4],"reorder_k":[0,1,2],"unroll_k":0,"parallel":1,"reduce_chunk":8})"},
    {"pointwise_256", [] { return pointwise({1, 256, 7, 7}, {32, 256, 1, 1}); }, kAvx2, 2016,
     R"({"tile_row":[2,1],"tile_y":[2,5],"reorder_k":[0,1,2],"unroll_k":0,"parallel":1,"reduce_chunk":0})"},
    // 512 x 16 floats fill L1 (32 KiB): AVX2's one-block tiles chunk by 32 channels over the whole
    // 7x7 map; AVX-512's two-block tiles (64 KiB of weights) by 8, their weights in registers, 4 +
    // 3 columns a row (the epilogue unpacks the blocks to NCHW). At 28x28 the accumulators of the
    // map exceed half of L1: no chunks. Over 256 channels or more the chunks may be of 128 too
    // (1.2x the space).
    {"pointwise_512", [] { return pointwise({1, 512, 7, 7}, {32, 512, 1, 1}); }, kAvx512, 2016,
     R"({"tile_row":[1,2],"tile_y":[2,4],"reorder_k":[0,1,2],"unroll_k":0,"parallel":1,"reduce_chunk":8})"},
    {"pointwise_512", [] { return pointwise({1, 512, 7, 7}, {32, 512, 1, 1}); }, kAvx2, 2016,
     R"({"tile_row":[2,1],"tile_y":[2,5],"reorder_k":[0,1,2],"unroll_k":0,"parallel":1,"reduce_chunk":32})"},
    {"pointwise_512_28", [] { return pointwise({1, 512, 28, 28}, {32, 512, 1, 1}); }, kAvx2, 2880,
     R"({"tile_row":[2,1],"tile_y":[5,6],"reorder_k":[0,1,2],"unroll_k":0,"parallel":1,"reduce_chunk":0})"},
    {"matmul", [] { return matmul({24, 40}, {40, 48}); }, kAvx512, 120,
     R"({"tile_row":[2,12],"tile_col":[2,32],"unroll_k":0,"parallel":1})"},
    {"matmul", [] { return matmul({24, 40}, {40, 48}); }, kAvx2, 100,
     R"({"tile_row":[4,6],"tile_col":[3,16],"unroll_k":0,"parallel":1})"},
    {"batched_matvec", [] { return matmul({3, 20, 40}, {40}); }, kAvx512, 16,
     R"({"tile_col":[2,16],"unroll_k":0,"parallel":0})"},
    {"batched_matvec", [] { return matmul({3, 20, 40}, {40}); }, kAvx2, 16,
     R"({"tile_col":[3,8],"unroll_k":0,"parallel":0})"},
    {"gemm", gemm, kAvx512, 12,
     R"({"tile_row":[1,1],"tile_col":[1,10],"unroll_k":0,"parallel":0})"},
    {"gemm", gemm, kAvx2, 12, R"({"tile_row":[1,1],"tile_col":[1,10],"unroll_k":0,"parallel":0})"},
    {"pool", pool, kAvx512, 96,
     R"({"tile_col":[1,14],"tile_y":[14,1],"reorder_k":[0,1],"unroll_k":0,"parallel":1})"},
    {"pool", pool, kAvx2, 96,
     R"({"tile_col":[2,8],"tile_y":[14,1],"reorder_k":[0,1],"unroll_k":0,"parallel":1})"},
};

TEST(StrategyTest, FallbacksOnAvx512AndAvx2AreThePinnedOnes) {
  for (const Pinned& p : kPinned) {
    SCOPED_TRACE(std::string(p.workload) + " on " + p.target);
    passes::LoweredGroup lg = lowered(p.model(), p.target);
    ASSERT_TRUE(lg.space && lg.config);
    EXPECT_EQ(lg.space->size(), p.space_size);
    EXPECT_EQ(lg.config->to_json(), p.fallback);
    EXPECT_EQ(lg.space->invalid_reason(*lg.config), "");
  }
}

// A depthwise conv between blocked activations (a depthwise ConvNCHWc): its blocks share no
// input, so its fallback tile is one block of columns, where dense packed convs take two blocks.
TEST(StrategyTest, BlockedDepthwiseConvTilesOneBlock) {
  Builder b;
  graph::ValueId x = b.input("x", {1, 32, 28, 28});
  auto pointwise_conv = [&](graph::ValueId in, uint32_t seed) {
    return b.op("Relu", {b.op("Conv", {in, b.constant("w", random_tensor({32, 32, 1, 1}, seed))},
                              {{"kernel_shape", ints({1, 1})}})});
  };
  graph::ValueId y = pointwise_conv(x, 1);
  y = b.op(
      "Relu",
      {b.op(
          "Conv", {y, b.constant("dw", random_tensor({32, 1, 3, 3}, 2))},
          {{"kernel_shape", ints({3, 3})}, {"pads", ints({1, 1, 1, 1})}, {"group", int64_t{32}}})});
  graph::Graph g = b.finish({pointwise_conv(y, 3)});
  CpuModel cpu = CpuModel::of(Target::parse(kAvx512));
  passes::GraphPipelineOptions opt;
  opt.cpu = cpu;
  passes::GraphPipelineResult plan = passes::run_graph_pipeline(g, opt);
  int depthwise = 0;
  for (size_t i = 0; i < plan.groups.size(); ++i) {
    const graph::Node& master = g.nodes[plan.groups[i].master];
    if (master.op != graph::OpKind::ConvNCHWc) continue;
    passes::LoweredGroup lg = passes::lower_to_te(g, plan.groups[i], static_cast<int>(i), cpu);
    ASSERT_TRUE(lg.config);
    bool grouped = master.attr_int("group", 1) != 1;
    depthwise += grouped;
    EXPECT_EQ(lg.config->split("tile_row").back(), grouped ? 1 : 2) << master.describe();
  }
  EXPECT_EQ(depthwise, 1);
}

// NEON's 32 registers of 4 float lanes: rows of the conv tile up to 16 (the x86-only policy took
// 4 lanes for SSE's 16 registers and allowed 8), one vector of 4 columns.
TEST(StrategyTest, NeonSizesTilesFromItsRegisterFile) {
  passes::LoweredGroup lg = lowered(conv({1, 8, 14, 14}, {32, 8, 3, 3}), kNeon);
  ASSERT_TRUE(lg.config);
  EXPECT_EQ(lg.config->split("tile_row"), (std::vector<int64_t>{2, 16}));
  EXPECT_EQ(lg.config->split("tile_col"), (std::vector<int64_t>{4, 4}));
  EXPECT_EQ(lg.space->invalid_reason(*lg.config), "");
}

}  // namespace
}  // namespace tessel::topi
