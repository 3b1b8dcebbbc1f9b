// The weight layout of ConvNCHWc, Tessel's internal packed convolution (passes/pack_conv_weights
// produces it; ONNX models never contain it). Its weights are Conv's [O, C, k...] blocked by output
// channel, [O / b, C, k..., b], so that b output channels are one contiguous vector. When O is not
// a multiple of b, the last block is padded with zero weights and the node's "output_channels"
// attribute keeps O.
#pragma once

#include "ir/graph.h"

namespace tessel::graph::ops {

// [O, C, k...] -> [ceil(O / block), C, k..., block], the channels past O zero.
std::vector<int64_t> packed_output_channels_shape(const std::vector<int64_t>& shape, int64_t block);
TensorData pack_output_channels(const TensorData& w, int64_t block);

// The inverse: [O' / b, C, k..., b] -> [O, C, k...], the first `channels` of the O' packed ones
// (all of them when negative).
TensorData unpack_output_channels(const TensorData& packed, int64_t channels = -1);

}  // namespace tessel::graph::ops
