// ConvNCHWc's chunked reduction (topi/schedule_nn.cc, knob "reduce_chunk"): with every chunk size,
// over maps in one strip and in several, with partial blocks of output channels, column tails,
// strides, dilations, padding, epilogues fused or not and channel-blocked activations, the kernel
// computes what the reference executor does. Each config is built and run in an isolated child
// (autotune::measure).
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>

#include "../passes/graph_builder.h"
#include "autotune/kernel_data.h"
#include "autotune/measure.h"
#include "codegen/build.h"
#include "passes/lower_to_te.h"
#include "passes/pipeline.h"
#include "te/lower.h"

namespace tessel::topi {
namespace {

using passes::testing::Builder;
using passes::testing::ints;
using passes::testing::random_tensor;

struct PackedConv {
  std::vector<int64_t> x, w;
  std::vector<int64_t> strides = {}, pads = {}, dilations = {};  // ONNX's defaults when empty
  bool residual = false;        // an Add of another input after the conv
  bool conv_is_output = false;  // the conv's result is a graph output too: no fused epilogue
  // 1x1 convs before and after it, so that it reads and writes channel blocks
  // (passes/alter_op_layout)
  bool chained = false;
};

graph::Graph model(const PackedConv& c) {
  Builder b;
  graph::ValueId x = b.input("x", c.x);
  auto pointwise = [&](graph::ValueId in, int64_t from, int64_t to, uint32_t seed) {
    return b.op("Conv", {in, b.constant("p" + std::to_string(seed),
                                        random_tensor({to, from, 1, 1}, seed))});
  };
  if (c.chained) x = pointwise(x, c.x[1], c.x[1], 3);
  std::map<std::string, graph::Attr> attrs;
  if (!c.strides.empty()) attrs["strides"] = ints(c.strides);
  if (!c.pads.empty()) attrs["pads"] = ints(c.pads);
  if (!c.dilations.empty()) attrs["dilations"] = ints(c.dilations);
  graph::ValueId y = b.op(
      "Conv",
      {x, b.constant("w", random_tensor(c.w, 1)), b.constant("bias", random_tensor({c.w[0]}, 2))},
      attrs, "conv");
  graph::ValueId out = y;
  if (c.residual) {
    graph::Graph typed = b.finish({y});  // the conv's output shape, for the residual input
    std::vector<int64_t> shape = typed.value(typed.outputs[0]).type.shape;
    out = b.op("Add", {out, b.input("r", shape)});
  }
  out = b.op("Relu", {out});
  if (c.chained) out = pointwise(out, c.w[0], 16, 4);
  return c.conv_is_output ? b.finish({out, y}) : b.finish({out});
}

// Every chunk size of the packed conv's space, each with the fallback's tile and with a narrow
// serial one (1 block x 3 columns, the innermost reduction unrolled), matches the reference.
void expect_every_chunk_matches(const PackedConv& c,
                                const char* target_text = "llvm -mcpu=native") {
  Target target = Target::parse(target_text);
  CpuModel cpu = CpuModel::of(target);
  graph::Graph g = model(c);
  passes::GraphPipelineOptions opt;
  opt.disabled_passes = {"winograd_conv"};
  opt.cpu = cpu;
  opt.conv_layout = [](const graph::Graph&, const graph::Node&, bool) { return true; };
  passes::GraphPipelineResult plan = passes::run_graph_pipeline(g, opt);
  int checked = 0;
  for (size_t i = 0; i < plan.groups.size(); ++i) {
    const passes::FusedGroup& group = plan.groups[i];
    int index = static_cast<int>(i);
    passes::LoweredGroup fallback = passes::lower_to_te(g, group, index, cpu);
    if (!fallback.space || g.nodes[group.master].op != graph::OpKind::ConvNCHWc) continue;
    const ConfigSpace& space = *fallback.space;
    autotune::KernelData data = autotune::kernel_data(g, group, fallback, 7);
    nlohmann::ordered_json base = nlohmann::ordered_json::parse(space.fallback().to_json());
    ASSERT_TRUE(base.contains("reduce_chunk")) << base.dump();
    nlohmann::ordered_json narrow = base;
    narrow["tile_row"] = {0, 1};
    narrow["tile_y"] = {0, 3};
    narrow["unroll_k"] = 1;
    narrow["parallel"] = 0;
    int64_t channels = g.value(g.nodes[group.master].inputs[1]).type.shape[1];
    for (int64_t chunk : {0, 8, 16, 32, 64, 128}) {
      if (chunk >= channels || (chunk > 0 && channels % chunk != 0)) continue;
      for (nlohmann::ordered_json config : {base, narrow}) {
        config["reduce_chunk"] = chunk;
        SCOPED_TRACE(config.dump());
        ConfigEntity entity = ConfigEntity::from_json(space, config.dump(), true);
        autotune::CandidateBuilder build = [&] {
          passes::LoweredGroup lg =
              passes::lower_to_te(g, group, index, cpu, [&](const ConfigSpace&) { return entity; });
          return tessel::build({te::lower(lg.schedule, lg.args, lg.name)}, target);
        };
        autotune::MeasureOptions mo;
        mo.number = 1;
        mo.repeat = 1;
        autotune::MeasureResult r =
            autotune::measure(build, fallback.name, data.inputs, data.references, mo);
        EXPECT_EQ(r.error, autotune::MeasureError::kNone) << r.message;
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 2);
}

TEST(ChunkedReduction, OnePointwiseStripOverTheWholeMap) {
  expect_every_chunk_matches({.x = {1, 64, 7, 7}, .w = {32, 64, 1, 1}});
}

TEST(ChunkedReduction, StripsOfAWideMap) {
  // 28 rows of 28 columns x 16 channels: the accumulators of a strip of 7 rows fit half of L1
  // (AVX2 and AVX-512 alike), 4 strips.
  expect_every_chunk_matches({.x = {1, 32, 28, 28}, .w = {32, 32, 1, 1}});
}

TEST(ChunkedReduction, AStridedPointwiseConvReadsItsSubsampledInput) {
  expect_every_chunk_matches(
      {.x = {1, 64, 14, 13}, .w = {32, 64, 1, 1}, .strides = {2, 2}, .pads = {0, 0, 1, 0}});
}

TEST(ChunkedReduction, StridedPaddedAndAPartialBlock) {
  // 136 output channels: the last block of 16 holds 8; 24 input channels chunk by 8 alone.
  expect_every_chunk_matches(
      {.x = {1, 24, 9, 11}, .w = {136, 24, 3, 3}, .strides = {2, 2}, .pads = {1, 1, 1, 1}});
}

TEST(ChunkedReduction, DilatedWithAResidualAddAndTheConvAnOutput) {
  expect_every_chunk_matches({.x = {1, 32, 10, 13},
                              .w = {32, 32, 3, 3},
                              .pads = {2, 2, 2, 2},
                              .dilations = {2, 2},
                              .residual = true});
  expect_every_chunk_matches(
      {.x = {1, 32, 6, 13}, .w = {48, 32, 3, 3}, .pads = {1, 1, 1, 1}, .conv_is_output = true});
}

TEST(ChunkedReduction, ChannelBlocksInAndOut) {
  expect_every_chunk_matches(
      {.x = {1, 32, 7, 9}, .w = {32, 32, 3, 3}, .pads = {1, 1, 1, 1}, .chained = true});
  expect_every_chunk_matches({.x = {1, 64, 7, 7}, .w = {32, 64, 1, 1}, .chained = true});
}

// A 1x1 conv whose tile is one block of one vector with AVX-512 (topi/packed_conv_tile.cc's
// weight_stationary), or two whose weights outgrow L1: the fallback chunks by 8, in strips of rows
// shared out among the cores; a 3x3 conv of one 2-block tile splits its map into strips for the
// cores.
TEST(ChunkedReduction, OneBlockTilesAndStripsSharedOut) {
  expect_every_chunk_matches({.x = {1, 128, 13, 13}, .w = {48, 128, 1, 1}});
  // Two-block tiles whose weights outgrow L1 (six blocks over 576 channels) chunk by 8 too.
  expect_every_chunk_matches({.x = {1, 576, 7, 7}, .w = {96, 576, 1, 1}, .residual = true});
  expect_every_chunk_matches({.x = {1, 128, 7, 7}, .w = {32, 128, 3, 3}, .pads = {1, 1, 1, 1}});
}

// A 1x1 conv over 256 channels to 8 blocks at 14x14 on two cores: with AVX-512 and an L2 of 1 MiB
// or more its chunked reduction keeps the whole map's accumulators (4-block tiles: 56 KiB, in
// the runtime's workspace) in one strip per tile (topi/packed_conv_tile.cc's
// accumulators_in_l2); elsewhere in strips of half of L1. Chunks up to 128.
TEST(ChunkedReduction, WholeMapAccumulatorsOfAPointwiseConv) {
  expect_every_chunk_matches({.x = {1, 256, 14, 14}, .w = {128, 256, 1, 1}, .residual = true},
                             "llvm -mcpu=native -num-cores=2");
}

// A chunked 1x1 conv tiles its strips' positions as one run (TileConfig::flat): a map whose rows
// (5 x 11, 55 positions) leave a partial tile, a partial last block of output channels, with the
// conv's own output also returned (no fused epilogue, and that output unpacked to NCHW).
TEST(ChunkedReduction, PointwisePositionsAsOneRun) {
  expect_every_chunk_matches({.x = {1, 48, 5, 11}, .w = {40, 48, 1, 1}, .residual = true});
  expect_every_chunk_matches({.x = {1, 64, 3, 7}, .w = {24, 64, 1, 1}, .conv_is_output = true});
}

// AVX2 code (16 registers) reads the padding of an unchunked window in place, and pads a copy for
// each chunk size: both against the reference.
TEST(ChunkedReduction, Avx2CodeWithItsPaddingReadInPlaceOrCopied) {
  expect_every_chunk_matches({.x = {1, 32, 9, 11}, .w = {32, 32, 3, 3}, .pads = {1, 1, 1, 1}},
                             "llvm -mcpu=haswell");
}

TEST(ChunkedReduction, ThreeDimensionalMapsStripTheirDepth) {
  expect_every_chunk_matches({.x = {1, 16, 3, 4, 9}, .w = {16, 16, 2, 3, 3}});
}

}  // namespace
}  // namespace tessel::topi
