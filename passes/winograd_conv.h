// 3x3 stride-1 Convs become ConvWinograd (ir/ops/winograd.h), Winograd's F(m x m, 3 x 3): the
// weights are transformed once, at compile time, into U [(m + 2)², K / b, C, b] (b:
// passes::conv_channel_block), and the kernel
// computes (m + 2)² batched GEMMs of K x C by C x tiles instead of the direct conv's 9 C products
// per output: 2.25x fewer with m = 2, 4x with m = 4, less the transforms and the last tiles'
// overhang. Runs before pack_conv_weights, which then leaves these convs alone.
// Requires: typed graph. Guarantees: outputs equal within fp32 rounding (the transforms add a few
// ulps); the old weights stay for their other readers.
#pragma once

#include <cstdint>

#include "codegen/cpu_model.h"
#include "ir/graph.h"

namespace tessel::passes {

// The tile size m that `node` takes as ConvWinograd, or 0 when it stays a Conv: a 2-D Conv with a
// 3x3 kernel, unit strides and dilations, group 1, constant float32 weights whose output channels
// are whole blocks of `block`, at least 64 output channels and a block of input channels, a static
// output type, and enough channels for the GEMMs to pay for the transforms (the .cc has the
// measurements).
int64_t winograd_tile_size(const graph::Graph& g, const graph::Node& node, int64_t block);

// Rewrites every Conv that winograd_tile_size picks for `cpu`'s blocks.
void winograd_conv(graph::Graph& g, const CpuModel& cpu);

}  // namespace tessel::passes
