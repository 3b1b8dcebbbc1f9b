// The weight layout of ConvNCHWc, Tessel's internal packed convolution (passes/pack_conv_weights
// produces it; ONNX models never contain it). Its weights are Conv's [O, C, k...] blocked by output
// channel, [O / b, C, k..., b], so that b output channels are one contiguous vector.
#pragma once

#include "ir/graph.h"

namespace tessel::graph::ops {

// [O, C, k...] -> [O / block, C, k..., block]; O must be a multiple of block.
std::vector<int64_t> packed_output_channels_shape(const std::vector<int64_t>& shape, int64_t block);
TensorData pack_output_channels(const TensorData& w, int64_t block);

// The inverse: [O / b, C, k..., b] -> [O, C, k...].
TensorData unpack_output_channels(const TensorData& packed);

}  // namespace tessel::graph::ops
