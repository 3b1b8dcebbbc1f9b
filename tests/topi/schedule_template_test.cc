// The tiled schedule template: its knobs for a conv and a matmul, the fallback, and the
// register-budget constraint that tuning uses to skip configs without building them.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "../passes/graph_builder.h"
#include "passes/lower_to_te.h"
#include "passes/pipeline.h"
#include "te/lower.h"
#include "tir/pipeline.h"
#include "topi/packed_conv_tile.h"

namespace tessel::topi {
namespace {

using passes::testing::Builder;
using passes::testing::ints;
using passes::testing::random_tensor;

// AVX-512: 16 float lanes, 32 registers; AVX2: 8 lanes, 16 registers.
CpuModel avx512_cpu() {
  return CpuModel::of(Target::parse("llvm -mtriple=x86_64-linux-gnu -mcpu=skylake-avx512"));
}
CpuModel avx2_cpu() {
  return CpuModel::of(Target::parse("llvm -mtriple=x86_64-linux-gnu -mcpu=haswell"));
}

// The template's space for the only fused group of `g`.
ConfigSpace space_of(graph::Graph g, const CpuModel& cpu) {
  passes::GraphPipelineOptions opt;
  opt.disabled_passes = {"winograd_conv"};  // the tiled template's knobs
  opt.cpu = cpu;                            // pack_conv_weights' rule reads it too
  passes::GraphPipelineResult plan = passes::run_graph_pipeline(g, opt);
  EXPECT_EQ(plan.groups.size(), 1u);
  passes::LoweredGroup lg = passes::lower_to_te(g, plan.groups[0], 0, cpu);
  EXPECT_TRUE(lg.space.has_value());
  EXPECT_TRUE(lg.config.has_value());
  EXPECT_FALSE(lg.tuned);
  return *lg.space;
}

// A conv on the direct template: its rows are not whole vectors, but its reduction (2 x 3 x 3) is
// too short to pay for packing.
graph::Graph conv_model() {
  Builder b;
  graph::ValueId x = b.input("x", {1, 2, 14, 14});
  graph::ValueId y = b.op("Conv", {x, b.constant("w", random_tensor({32, 2, 3, 3}, 1))},
                          {{"kernel_shape", ints({3, 3})}, {"pads", ints({1, 1, 1, 1})}});
  return b.finish({b.op("Relu", {y})});
}

TEST(ScheduleTemplate, ConvKnobsAndFallback) {
  ConfigSpace space = space_of(conv_model(), avx512_cpu());
  ConfigEntity f = space.fallback();
  EXPECT_EQ(f.split("tile_row"), (std::vector<int64_t>{2, 16}));  // 16 accumulator rows on AVX-512
  EXPECT_EQ(f.split("tile_col"), (std::vector<int64_t>{1, 14}));  // one (short) vector of columns
  EXPECT_EQ(f.split("tile_y"), (std::vector<int64_t>{14, 1}));
  EXPECT_EQ(f.reorder("reorder_k"), (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(f.knob("unroll_k"), 0);
  EXPECT_EQ(f.knob("parallel"), 1);
  EXPECT_EQ(space.invalid_reason(f), "");
  // rows {1, 2, 4, 8, 16, 32} x cols {4, 8, 14} x ys {1, 2, 3, 4} x 3! orders x 2 x 2
  EXPECT_EQ(space.size(), 6u * 3u * 4u * 6u * 2u * 2u);
}

// A 3x3 conv from `channels` to 32 channels over a size x size map, padded by 1, and a Relu.
graph::Graph padded_conv_model(int64_t size, int64_t channels = 64) {
  Builder b;
  graph::ValueId x = b.input("x", {1, channels, size, size});
  graph::ValueId y = b.op("Conv", {x, b.constant("w", random_tensor({32, channels, 3, 3}, 1))},
                          {{"kernel_shape", ints({3, 3})}, {"pads", ints({1, 1, 1, 1})}});
  return b.finish({b.op("Relu", {y})});
}

// A conv with 7-wide rows and a long reduction is packed (passes/pack_conv_weights): its template
// vectorizes 16 output channels and unrolls output columns.
TEST(ScheduleTemplate, PackedConvVectorizesOutputChannels) {
  graph::Graph model = padded_conv_model(7);
  ConfigSpace space = space_of(model, avx512_cpu());
  ConfigEntity f = space.fallback();
  EXPECT_EQ(f.split("tile_row"), (std::vector<int64_t>{1, 2}));  // both blocks of 16 channels
  EXPECT_EQ(f.split("tile_y"), (std::vector<int64_t>{1, 7}));    // the whole row unrolled
  EXPECT_EQ(space.invalid_reason(f), "");
  // rows {1, 2} x columns {1, ..., 7} x 3! orders x 2 x 2 x input channels a chunk {0 (none), 8,
  // 16, 32}; a tile spans one block of channels
  EXPECT_EQ(space.size(), 2u * 7u * 6u * 2u * 2u * 4u);
  // Its block weights, 36 KiB, take more than half of L1: with 32 registers, chunks of 32 input
  // channels, the channels outside the kernel offsets.
  EXPECT_EQ(f.knob("reduce_chunk"), 32);
  EXPECT_EQ(f.reorder("reorder_k"), (std::vector<int64_t>{0, 1, 2}));
  // On AVX2 a block of 16 channels is two vectors: a window's tile is 8 accumulators. Over at most
  // 128 input channels its chunks of 8 have the kernel offsets outside their channels.
  ConfigSpace avx2 = space_of(model, avx2_cpu());
  ConfigEntity f8 = avx2.fallback();
  EXPECT_EQ(f8.split("tile_y"), (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(f8.split("tile_row"), (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(f8.knob("reduce_chunk"), 8);
  EXPECT_EQ(f8.reorder("reorder_k"), (std::vector<int64_t>{1, 2, 0}));
  EXPECT_EQ(avx2.invalid_reason(f8), "");
}

// A packed conv reads its padded input through guards on the window's edge, not from a padded
// copy: after the tir pipeline no pad buffer is left, and the interior tiles of its map read
// without checks (only the edge tiles' loops keep `likely` guards). With AVX2's 16 registers only
// an unchunked reduction does (over 256 channels at 28x28, not 64 at 14x14, which chunks by 8).
// A direct conv's threads split the map by rows with the channel blocks inside, so that each
// reads the rows that the conv before it wrote on the same core; a depthwise conv, which pads its
// tiles' input rows, keeps its channels outermost.
TEST(ScheduleTemplate, DirectConvSharesOutRowsDepthwiseChannels) {
  auto parallel_loop = [](graph::Graph g) {
    CpuModel cpu = avx512_cpu();
    passes::GraphPipelineOptions opt;
    opt.cpu = cpu;
    passes::GraphPipelineResult plan = passes::run_graph_pipeline(g, opt);
    EXPECT_EQ(plan.groups.size(), 1u);
    EXPECT_EQ(g.nodes[plan.groups[0].master].op, graph::OpKind::Conv);
    passes::LoweredGroup lg = passes::lower_to_te(g, plan.groups[0], 0, cpu);
    std::string text = to_string(te::lower(lg.schedule, lg.args, lg.name));
    size_t at = text.find("parallel for (");
    EXPECT_NE(at, std::string::npos) << text;
    return text.substr(at, text.find(',', at) - at);
  };
  Builder pointwise;
  graph::ValueId x = pointwise.input("x", {1, 8, 56, 56});  // under 16 channels: direct
  graph::ValueId y =
      pointwise.op("Conv", {x, pointwise.constant("w", random_tensor({24, 8, 1, 1}, 1))},
                   {{"kernel_shape", ints({1, 1})}});
  EXPECT_EQ(parallel_loop(pointwise.finish({y})), "parallel for (i0.i2.outer.fused.i1.outer.fused");
  Builder depthwise;
  x = depthwise.input("x", {1, 96, 56, 56});
  y = depthwise.op("Conv", {x, depthwise.constant("w", random_tensor({96, 1, 3, 3}, 1))},
                   {{"kernel_shape", ints({3, 3})}, {"pads", ints({1, 1, 1, 1})}, {"group", 96}});
  EXPECT_EQ(parallel_loop(depthwise.finish({y})), "parallel for (i0.i1.outer.fused.i2.outer.fused");
}

TEST(ScheduleTemplate, PackedConvReadsItsPaddingThroughGuards) {
  // The lowered conv with the fallback, or with its reduction order set to `order`.
  auto lowered = [&](const CpuModel& cpu, graph::Graph model, std::string order = "") {
    passes::GraphPipelineOptions opt;
    opt.disabled_passes = {"winograd_conv"};
    opt.cpu = cpu;
    passes::GraphPipelineResult plan = passes::run_graph_pipeline(model, opt);
    EXPECT_EQ(plan.groups.size(), 1u);
    EXPECT_EQ(model.nodes[plan.groups[0].master].op, graph::OpKind::ConvNCHWc);
    passes::LoweredGroup lg =
        passes::lower_to_te(model, plan.groups[0], 0, cpu, [&](const ConfigSpace& space) {
          nlohmann::ordered_json config = nlohmann::ordered_json::parse(space.fallback().to_json());
          if (!order.empty()) config["reorder_k"] = nlohmann::ordered_json::parse(order);
          return ConfigEntity::from_json(space, config.dump(), true);
        });
    return to_string(tir::lower_tir(te::lower(lg.schedule, lg.args, lg.name)));
  };
  std::string text = lowered(avx512_cpu(), padded_conv_model(14));
  EXPECT_EQ(text.find("_pad"), std::string::npos) << text;
  EXPECT_NE(text.find("likely("), std::string::npos) << text;
  // The tile loop over the map's columns comes in three parts (first tile, interior, last).
  size_t parts = 0;
  for (size_t at = text.find("for (i3.outer"); at != std::string::npos;
       at = text.find("for (i3.outer", at + 1))
    ++parts;
  EXPECT_EQ(parts, 3u) << text;
  EXPECT_NE(lowered(avx2_cpu(), padded_conv_model(14)).find("_pad"), std::string::npos);
  // Here the rows' guards (floordiv(fused, 2) >= 1: the parallel loop fuses rows and channel
  // blocks) are linear in the fused loop, which loop partitioning splits into the map's first row,
  // its interior and its last row: the reads above the map start at kernel row 1.
  std::string avx2 = lowered(avx2_cpu(), padded_conv_model(28, 256));
  EXPECT_EQ(avx2.find("_pad"), std::string::npos) << avx2;
  EXPECT_NE(avx2.find("for (rk0, 1, 2)"), std::string::npos) << avx2;
  // With its channels outermost (a tuned order), AVX2 code pads a copy again.
  EXPECT_NE(lowered(avx2_cpu(), padded_conv_model(28, 256), "[0, 1, 2]").find("_pad"),
            std::string::npos);
}

// Two blocks of channels share each broadcast input element; the columns, up to half the register
// file, are the count whose row of tiles is cheapest when a tile of fewer accumulators than the
// CPU's FMA chains (latency x units) costs as many as the chains: 8 on Skylake-AVX512 and Zen 3,
// 10 on Haswell. A 1x1 conv on AVX2 takes 12 of the 16 registers: one block of two vectors by up
// to 6 columns. Over 128 channels or more, AVX-512's 1x1 tile is four blocks by up to 6 columns.
TEST(ScheduleTemplate, PackedConvTilesTwoBlocksAndHalfTheRegisters) {
  CpuModel zen3 = CpuModel::of(Target::parse("llvm -mtriple=x86_64-linux-gnu -mcpu=znver3"));
  ASSERT_EQ(zen3.fma_chains, 8);
  ASSERT_EQ(avx2_cpu().fma_chains, 10);
  struct Case {
    int64_t width, avx512, haswell, zen3;
  };
  // Width 7 on Zen 3: 4 + 3 columns (8 and 6 accumulators) run 1.2x faster than 6 + 1.
  for (Case c : {Case{7, 7, 5, 4}, Case{14, 7, 5, 5}, Case{56, 8, 6, 6}, Case{28, 7, 6, 6},
                 Case{10, 5, 5, 5}}) {
    SCOPED_TRACE(::testing::Message() << "width " << c.width);
    Builder b;
    graph::ValueId x = b.input("x", {1, 96, 4, c.width});
    graph::ValueId y = b.op("Conv", {x, b.constant("w", random_tensor({64, 96, 1, 1}, 1))},
                            {{"kernel_shape", ints({1, 1})}});
    graph::Graph model = b.finish({b.op("Relu", {y})});
    ConfigEntity f = space_of(model, avx512_cpu()).fallback();
    EXPECT_EQ(f.split("tile_row")[1], 2);
    EXPECT_EQ(f.split("tile_y")[1], c.avx512);
    Builder wide;
    x = wide.input("x", {1, 256, 4, c.width});
    y = wide.op("Conv", {x, wide.constant("w", random_tensor({64, 256, 1, 1}, 1))},
                {{"kernel_shape", ints({1, 1})}});
    ConfigEntity f4 = space_of(wide.finish({wide.op("Relu", {y})}), avx512_cpu()).fallback();
    EXPECT_EQ(f4.split("tile_row")[1], 4);
    EXPECT_LE(f4.split("tile_y")[1], 6);
    EXPECT_GE(f4.split("tile_y")[1], std::min<int64_t>(c.width, 4));
    for (auto [cpu, columns] : {std::pair{avx2_cpu(), c.haswell}, std::pair{zen3, c.zen3}}) {
      ConfigEntity f8 = space_of(model, cpu).fallback();
      EXPECT_EQ(f8.split("tile_row")[1], 1);
      EXPECT_EQ(f8.split("tile_y")[1], columns);
    }
  }
}

// A 1x1 conv from `channels` to `out` channels over a 13x13 map, and a Relu.
graph::Graph pointwise_model(int64_t channels, int64_t out) {
  Builder b;
  graph::ValueId x = b.input("x", {1, channels, 13, 13});
  graph::ValueId y = b.op("Conv", {x, b.constant("w", random_tensor({out, channels, 1, 1}, 1))},
                          {{"kernel_shape", ints({1, 1})}});
  return b.finish({b.op("Relu", {y})});
}

// A 1x1 conv over 128+ channels whose tile is one block of one vector (three blocks, or 1000
// channels in 63 with AVX-512) chunks its reduction by 8 channels, whose weights then stay in
// registers, with at most 8 columns of accumulators; over fewer channels, or with AVX2's two
// vectors a block, the usual tile.
TEST(ScheduleTemplate, OneBlockPointwiseTilesKeepTheirWeightsInRegisters) {
  for (auto [channels, out] : {std::pair{256, 48}, std::pair{512, 1000}}) {
    SCOPED_TRACE(::testing::Message() << channels << " -> " << out);
    ConfigEntity f = space_of(pointwise_model(channels, out), avx512_cpu()).fallback();
    EXPECT_EQ(f.split("tile_row")[1], 1);
    EXPECT_EQ(f.split("tile_y")[1], 8);  // 8 + 5 columns, not all 13
    EXPECT_EQ(f.knob("reduce_chunk"), 8);
  }
  ConfigEntity narrow = space_of(pointwise_model(64, 48), avx512_cpu()).fallback();
  EXPECT_EQ(narrow.split("tile_y")[1], 13);
  EXPECT_EQ(narrow.knob("reduce_chunk"), 0);
  ConfigEntity avx2 = space_of(pointwise_model(256, 48), avx2_cpu()).fallback();
  EXPECT_EQ(avx2.knob("reduce_chunk"), 0);  // its block's weights, 16 KiB, fit half of L1
  EXPECT_EQ(avx2.split("tile_y")[1], 5);
  // Two-block tiles (six blocks) whose weights outgrow L1 (72 KiB against 32): chunks of 8 too,
  // 16 weight vectors beside at most 6 columns; whose weights fit it (24 KiB), unchunked.
  ConfigEntity two = space_of(pointwise_model(576, 96), avx512_cpu()).fallback();
  EXPECT_EQ(two.split("tile_row")[1], 2);
  EXPECT_EQ(two.knob("reduce_chunk"), 8);
  EXPECT_LE(two.split("tile_y")[1], 6);
  ConfigEntity fits = space_of(pointwise_model(192, 96), avx512_cpu()).fallback();
  EXPECT_EQ(fits.split("tile_row")[1], 2);
  EXPECT_EQ(fits.knob("reduce_chunk"), 0);
}

// A ConvNCHWc's tiled shape [n, blocks, h, w, 16] on a 2-core AVX-512 model with 48 KiB of L1 (no
// L2 known).
TiledShape packed_shape(std::vector<int64_t> out, std::vector<int64_t> reduce) {
  TiledShape t;
  t.out = std::move(out);
  t.row = 1;
  t.row_divisor = t.out[1];
  t.y = 3;
  t.channel_vectors = true;
  t.reduce = std::move(reduce);
  t.l1d_bytes = 48 * 1024;
  t.lanes = 16;
  t.cores = 2;
  return t;
}

// A parallel chunked reduction splits its map into strips of fewer rows where its blocks and
// strips would leave a core idle, or leave a weight-stationary tile under two tasks per core.
TEST(ScheduleTemplate, ParallelStripsGiveEveryCoreATask) {
  // a 3x3 conv to 32 channels at 7x7: 2 blocks in one 2-block tile
  TiledShape t = packed_shape({1, 2, 7, 7, 16}, {128, 3, 3});
  EXPECT_EQ(accumulator_strip(t, 2, 7), 7);
  EXPECT_EQ(parallel_strip(t, 2, 7), 1);  // 7 rows, a prime: strips of one row
  EXPECT_EQ(parallel_strip(t, 1, 7), 7);  // two tiles of one block: a task per core
  t.cores = 1;
  EXPECT_EQ(parallel_strip(t, 2, 7), 7);
  t.cores = 0;  // unknown: two
  EXPECT_EQ(parallel_strip(t, 2, 7), 1);
  t.cores = 2;
  t.out = {1, 3, 12, 13, 16};  // a weight-stationary 1x1 conv: three one-block tiles
  t.row_divisor = 3;
  t.reduce = {256, 1, 1};
  EXPECT_EQ(accumulator_strip(t, 1, 8), 12);
  EXPECT_EQ(parallel_strip(t, 1, 8), 6);  // 2 strips x 3 blocks >= 2 tasks per core
  t.out[1] = 63;
  t.row_divisor = 63;
  EXPECT_EQ(parallel_strip(t, 1, 8), 12);
}

// A 1x1 conv whose whole map's accumulators exceed half of L1 keeps them in L2 (up to a sixteenth
// of it) when its tiles share out evenly among the cores, and then chunks its reduction by the
// most channels whose weights fill two thirds of L1 at most.
TEST(ScheduleTemplate, PointwiseAccumulatorsOfAWholeMapLiveInL2) {
  // ResNet-50's 1024 -> 256 at 14x14 in 4-block tiles
  TiledShape t = packed_shape({1, 16, 14, 14, 16}, {1024, 1, 1});
  t.l2_bytes = 2 * 1024 * 1024;
  CpuModel cpu = avx512_cpu();
  // 14 rows of 18 columns (three tiles of 6) x 4 blocks: 63 KiB, within 128 KiB.
  EXPECT_EQ(accumulator_strip(t, 4, 6), 14);
  EXPECT_EQ(parallel_strip(t, 4, 6), 14);
  EXPECT_EQ(fallback_reduce_chunk(t, 4, 6, cpu), 128);  // 32 KiB of weights a chunk
  t.l1d_bytes = 32 * 1024;
  EXPECT_EQ(fallback_reduce_chunk(t, 4, 6, cpu), 64);
  t.l1d_bytes = 48 * 1024;
  t.cores = 3;  // four tiles on three cores: strips of L1
  EXPECT_EQ(accumulator_strip(t, 4, 6), 2);
  EXPECT_EQ(fallback_reduce_chunk(t, 4, 6, cpu), 0);
  t.cores = 2;
  t.l2_bytes = 0;  // unknown: strips of L1 too
  EXPECT_EQ(accumulator_strip(t, 4, 6), 2);
  t.l2_bytes = 2 * 1024 * 1024;
  t.out = {1, 8, 28, 28, 16};  // 512 -> 128 at 28x28: 210 KiB, so strips, and no chunks
  t.row_divisor = 8;
  t.reduce = {512, 1, 1};
  EXPECT_EQ(accumulator_strip(t, 4, 6), 14);
  EXPECT_EQ(fallback_reduce_chunk(t, 4, 6, cpu), 0);
  t.out = {1, 16, 14, 14, 16};  // a 3x3 window keeps its accumulators in L1
  t.row_divisor = 16;
  t.reduce = {256, 3, 3};
  EXPECT_EQ(accumulator_strip(t, 4, 6), 2);
}

// A 1x1 conv whose rows are shared out computes its map's input stage a row at a time, and the
// fallback then leaves it unchunked: DenseNet-121's 992 -> 128 at 14x14 after a batch norm and
// Relu, with 4-block tiles (chunks of 32 without the stage). Not without a stage, nor with under 4
// rows per core (two cores when unknown), nor where the weights outweigh the input (7x7).
TEST(ScheduleTemplate, AnInputStageOfTheMapIsComputedPerRowUnchunked) {
  CpuModel cpu = avx512_cpu();
  TiledShape t = packed_shape({1, 8, 14, 14, 16}, {992, 1, 1});
  t.l2_bytes = 2 * 1024 * 1024;
  ASSERT_TRUE(rows_shared_out(t));
  EXPECT_FALSE(input_stage_per_row(t));
  EXPECT_EQ(fallback_reduce_chunk(t, 4, 6, cpu), 32);
  t.map_input_stage = true;
  EXPECT_TRUE(input_stage_per_row(t));
  EXPECT_EQ(fallback_reduce_chunk(t, 4, 6, cpu), 0);
  t.cores = 0;  // unknown: two, 7 rows each
  EXPECT_TRUE(input_stage_per_row(t));
  t.cores = 4;  // 3.5 rows each
  EXPECT_FALSE(input_stage_per_row(t));
  t.cores = 2;
  t.out = {1, 8, 7, 7, 16};  // 128 output channels over 49 positions
  EXPECT_FALSE(rows_shared_out(t));
  EXPECT_FALSE(input_stage_per_row(t));
  t.out = {1, 8, 14, 14, 16};
  t.reduce = {992, 3, 3};  // a 3x3 window reads rows of its neighbours
  EXPECT_FALSE(input_stage_per_row(t));
}

// A chunked 1x1 conv tiles its strip's positions as one run: ResNet-50's 1024 -> 256 at 14x14 in
// 196 = 32 x 6 + 4 positions (a row of 14 alone takes 6 + 6 + 2), its 2048 -> 512 at 7x7 in 49 =
// 8 x 6 + 1 (a row of 7: 5 + 2); never more columns than a row holds (the knob's candidates).
TEST(ScheduleTemplate, PointwiseStripsTileTheirPositionsAsOneRun) {
  CpuModel cpu = avx512_cpu();
  TiledShape t = packed_shape({1, 16, 14, 14, 16}, {1024, 1, 1});
  EXPECT_EQ(packed_fallback(t, cpu).ys, 6);
  EXPECT_EQ(flat_map_columns(t, 4, 14, cpu), 6);
  t = packed_shape({1, 32, 7, 7, 16}, {2048, 1, 1});
  EXPECT_EQ(packed_fallback(t, cpu).ys, 5);
  EXPECT_EQ(flat_map_columns(t, 4, 7, cpu), 6);
  t = packed_shape({1, 32, 4, 4, 16}, {2048, 1, 1});
  EXPECT_EQ(flat_map_columns(t, 4, 4, cpu), 4);

  // Lowered: one loop over the map's positions, the buffer exactly the map (4 blocks x 196 x 16),
  // the last partial tile a loop of its own.
  Builder b;
  graph::ValueId x = b.input("x", {1, 1024, 14, 14});
  graph::ValueId y = b.op("Conv", {x, b.constant("w", random_tensor({256, 1024, 1, 1}, 1))});
  // A conv after it keeps its output in blocks (unpacked to NCHW, the tile keeps rows).
  graph::ValueId z =
      b.op("Conv", {b.op("Relu", {y}), b.constant("v", random_tensor({16, 256, 1, 1}, 2))});
  graph::Graph g = b.finish({z});
  passes::GraphPipelineOptions opt;
  CpuModel cpu2 = CpuModel::of(
      Target::parse("llvm -mtriple=x86_64-linux-gnu -mcpu=sapphirerapids -num-cores=2"));
  opt.cpu = cpu2;
  passes::GraphPipelineResult plan = passes::run_graph_pipeline(g, opt);
  auto conv = std::find_if(plan.groups.begin(), plan.groups.end(), [&](const auto& group) {
    return g.nodes[group.master].op == graph::OpKind::ConvNCHWc;
  });
  ASSERT_NE(conv, plan.groups.end());
  passes::LoweredGroup lg =
      passes::lower_to_te(g, *conv, static_cast<int>(conv - plan.groups.begin()), cpu2);
  ASSERT_TRUE(lg.config.has_value());
  EXPECT_EQ(lg.config->knob("reduce_chunk"), 128) << lg.config->to_json();
  std::string text = to_string(tir::lower_tir(te::lower(lg.schedule, lg.args, lg.name)));
  EXPECT_NE(text.find("float32[12544]"), std::string::npos) << text;
  EXPECT_NE(text.find("for (i2.i3.fused.outer, 0, 32)"), std::string::npos) << text;
  EXPECT_EQ(text.find("likely("), std::string::npos) << text;

  // An epilogue that unpacks the blocks to NCHW tiles rows and columns apart: a row's columns.
  Builder unpacked;
  x = unpacked.input("x", {1, 2048, 7, 7});
  y = unpacked.op("Conv", {x, unpacked.constant("w", random_tensor({512, 2048, 1, 1}, 1))});
  ConfigEntity f = space_of(unpacked.finish({unpacked.op("Relu", {y})}), cpu2).fallback();
  EXPECT_GT(f.knob("reduce_chunk"), 0);
  EXPECT_EQ(f.split("tile_y")[1], 5);  // 5 + 2 a row (49 positions in one run: 8 x 6 + 1)
}

TEST(ScheduleTemplate, TilesBeyondTheRegisterFileAreRejected) {
  ConfigSpace space = space_of(conv_model(), avx512_cpu());
  int rejected = 0;
  for (uint64_t i = 0; i < space.size(); ++i) {
    ConfigEntity c = space.get(i);
    int64_t accumulators =
        c.split("tile_row")[1] * c.split("tile_y")[1];  // one vector of columns at most
    // Serial configs too: the conv's work pays for a parallel launch.
    bool serial = c.knob("parallel") == 0;
    std::string why = space.invalid_reason(c);
    EXPECT_EQ(why.empty(), accumulators <= 28 && !serial) << c.to_json() << ": " << why;
    if (serial) {
      EXPECT_NE(why.find("serial"), std::string::npos) << c.to_json() << ": " << why;
    }
    rejected += !why.empty();
  }
  EXPECT_GT(rejected, 0);
  EXPECT_EQ(space.fallback().knob("parallel"), 1);
  // The budget is half with AVX2's 16 registers of 8 lanes.
  ConfigSpace avx2 = space_of(conv_model(), avx2_cpu());
  EXPECT_EQ(avx2.fallback().split("tile_row")[1], 8);
  EXPECT_EQ(avx2.invalid_reason(avx2.fallback()), "");
  std::string why = avx2.invalid_reason(ConfigEntity::from_json(
      avx2,
      R"({"tile_row":[2,16],"tile_col":[2,8],"tile_y":[4,4],"reorder_k":[0,1,2],"unroll_k":0,"parallel":1})"));
  EXPECT_NE(why.find("64 vector accumulators, more than 12"), std::string::npos) << why;
}

TEST(ScheduleTemplate, MatmulHasNoHeightOrReductionOrderKnobs) {
  Builder b;
  graph::ValueId x = b.input("x", {24, 40});
  graph::Graph g = b.finish({b.op("MatMul", {x, b.constant("w", random_tensor({40, 48}, 2))})});
  ConfigSpace space = space_of(g, avx512_cpu());
  // The micro-kernel's tile (topi::matmul_cpu_config): 12 rows x 2 vectors of columns.
  EXPECT_EQ(space.fallback().split("tile_row")[1], 12);
  EXPECT_EQ(space.fallback().split("tile_col")[1], 32);
  EXPECT_EQ(space.num_knobs(), 4u);  // tile_row, tile_col, unroll_k, parallel
}

// A GEMM over K = 1024 (a transformer's second FFN matmul) on an 8-way L1 of 32 KiB: every row
// of the activation lies in the same set, so the fallback takes 8 rows, not the kernel's 12.
TEST(ScheduleTemplate, GemmFallbackRowsFitTheL1SetThatTheirRowsShare) {
  Builder b;
  graph::ValueId x = b.input("x", {128, 1024});
  graph::Graph g = b.finish({b.op("MatMul", {x, b.constant("w", random_tensor({1024, 256}, 2))})});
  ASSERT_EQ(avx512_cpu().l1d_ways, 8);
  EXPECT_EQ(space_of(g, avx512_cpu()).fallback().split("tile_row")[1], 8);
  Builder c;
  graph::ValueId y = c.input("y", {128, 1056});
  graph::Graph spread =
      c.finish({c.op("MatMul", {y, c.constant("w", random_tensor({1056, 256}, 2))})});
  EXPECT_EQ(space_of(spread, avx512_cpu()).fallback().split("tile_row")[1], 12);
}

// An activation [128, 1, K] times a constant [K, N] (the exported attention's input projection)
// is one GEMM of 128 rows: the tile's rows come from the longest leading axis, not the matrix
// rows (1). With a batched right operand, the rows stay the matrix rows.
TEST(ScheduleTemplate, MatmulWithASharedRightOperandTakesRowsFromTheLongestAxis) {
  Builder b;
  graph::ValueId x = b.input("x", {128, 1, 64});
  graph::Graph shared =
      b.finish({b.op("MatMul", {x, b.constant("w", random_tensor({64, 96}, 2))})});
  // The kernel's 12 and 6 rows, with a shorter last block, rather than 8 and 4 that divide 128.
  for (const auto& [cpu, rows, cols] :
       {std::tuple{avx512_cpu(), 12, 32}, std::tuple{avx2_cpu(), 6, 16}}) {
    ConfigEntity f = space_of(shared, cpu).fallback();
    EXPECT_EQ(f.split("tile_row"), (std::vector<int64_t>{(128 + rows - 1) / rows, rows}));
    EXPECT_EQ(f.split("tile_col")[1], cols);
  }
  Builder c;
  graph::ValueId q = c.input("q", {4, 24, 16});
  graph::ValueId k = c.input("k", {4, 16, 48});
  ConfigEntity batched = space_of(c.finish({c.op("MatMul", {q, k})}), avx512_cpu()).fallback();
  EXPECT_EQ(batched.split("tile_row"), (std::vector<int64_t>{2, 12}));
}

// A batch-1 dense layer (one row) spends its accumulators on columns: eight vectors, so that
// eight FMA chains hide the latency and B is read in 8-vector runs.
TEST(ScheduleTemplate, OneRowGemmTakesEightVectorsOfColumns) {
  Builder b;
  graph::ValueId x = b.input("x", {1, 256});
  graph::Graph g = b.finish({b.op("MatMul", {x, b.constant("r", random_tensor({256, 1024}, 5))})});
  for (const auto& [cpu, lanes] : {std::pair{avx512_cpu(), 16}, std::pair{avx2_cpu(), 8}}) {
    ConfigSpace space = space_of(g, cpu);
    EXPECT_EQ(space.fallback().split("tile_row"), (std::vector<int64_t>{1, 1}));
    EXPECT_EQ(space.fallback().split("tile_col"),
              (std::vector<int64_t>{1024 / (8 * lanes), 8 * lanes}));
    EXPECT_EQ(space.invalid_reason(space.fallback()), "");
  }
}

}  // namespace
}  // namespace tessel::topi
