// Conv with group 1 and constant weights becomes ConvNCHWc, Tessel's packed convolution, when its
// output rows are not whole vectors (the direct template's vector axis is the width): the
// weights are packed once, at compile time, into blocks of 16 output channels (see
// ir/ops/conv_packing.h), and the kernel vectorizes over those channels instead.
// Requires: typed graph. Guarantees: same outputs; the old constant stays for its other readers.
#pragma once

#include <cstdint>

#include "ir/graph.h"

namespace tessel::passes {

// Output channels per packed block: one AVX-512 vector of float32, two AVX2 vectors.
inline constexpr int64_t kConvChannelBlock = 16;

// Whether a Conv whose output rows are `width` wide and whose outputs each sum `reduction`
// products computes faster with channel vectors (see the .cc for the measurements).
bool prefers_channel_vectors(int64_t width, int64_t reduction);

void pack_conv_weights(graph::Graph& g);

}  // namespace tessel::passes
