// 3x3 stride-1 Convs become ConvWinograd (ir/ops/winograd.h), Winograd's F(m x m, 3 x 3): the
// weights are transformed once, at compile time, into U [(m + 2)², K / 16, C, 16], and the kernel
// computes (m + 2)² batched GEMMs of K x C by C x tiles instead of the direct conv's 9 C products
// per output: 2.25x fewer with m = 2, 4x with m = 4, less the transforms and the last tiles'
// overhang. Runs before pack_conv_weights, which then leaves these convs alone.
// Requires: typed graph. Guarantees: outputs equal within fp32 rounding (the transforms add a few
// ulps); the old weights stay for their other readers.
#pragma once

#include <cstdint>

#include "ir/graph.h"

namespace tessel::passes {

// The tile size m that `node` takes as ConvWinograd, or 0 when it stays a Conv: a 2-D Conv with a
// 3x3 kernel, unit strides and dilations, group 1, constant float32 weights whose output channels
// are whole blocks of 16, at least 64 output and 16 input channels, a static output type, and
// enough channels for the GEMMs to pay for the transforms (the .cc has the measurements).
int64_t winograd_tile_size(const graph::Graph& g, const graph::Node& node);

// Rewrites every Conv that winograd_tile_size picks.
void winograd_conv(graph::Graph& g);

}  // namespace tessel::passes
