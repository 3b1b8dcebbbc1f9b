// Sliding-window geometry shared by Conv, ConvTranspose and the pools: per spatial dim the kernel,
// strides, dilations, begin/end pads and output size, from the ONNX attributes (strides,
// dilations, pads, auto_pad, ceil_mode, output_padding, output_shape). Used by type inference and
// by the reference executor so both agree. Unknown input dims give kUnknownDim outputs.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/graph.h"

namespace tessel::graph::ops {

struct WindowGeometry {
  std::vector<int64_t> kernel, strides, dilations, pads_begin, pads_end, out;
  int64_t spatial_rank() const { return static_cast<int64_t>(kernel.size()); }
};

// Conv and pools: out = floor/ceil((in + pads - ((k - 1) * d + 1)) / s) + 1, or the auto_pad rule.
// With ceil_mode a last window that would start inside the end padding is dropped.
WindowGeometry window_geometry(const OpAttrs& node, const std::vector<int64_t>& in_spatial,
                               const std::vector<int64_t>& kernel, bool ceil_mode);

// ConvTranspose: out = s * (in - 1) + output_padding + (k - 1) * d + 1 - pads, or output_shape with
// pads derived from it, or in * s under SAME_*.
WindowGeometry conv_transpose_geometry(const OpAttrs& node, const std::vector<int64_t>& in_spatial,
                                       const std::vector<int64_t>& kernel);

}  // namespace tessel::graph::ops
