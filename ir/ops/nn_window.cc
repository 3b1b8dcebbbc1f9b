#include "ir/ops/nn_window.h"

#include <fmt/format.h>

#include "ir/error.h"

namespace tessel::graph::ops {

namespace {

// An int-list attribute with one entry per spatial dim (`per_dim` entries), or `fill` everywhere.
std::vector<int64_t> spatial_attr(const OpAttrs& node, const char* key, size_t per_dim,
                                  int64_t fill) {
  std::vector<int64_t> v = node.attr_ints(key, std::vector<int64_t>(per_dim, fill));
  if (v.size() != per_dim) {
    throw Error(fmt::format("{}: attribute '{}' has {} entries, expected {}", node.describe(), key,
                            v.size(), per_dim));
  }
  for (int64_t x : v) {
    if (x < 0 || (x == 0 && fill != 0)) {
      throw Error(fmt::format("{}: attribute '{}' has invalid entry {}", node.describe(), key, x));
    }
  }
  return v;
}

// The window attributes common to both directions; pads split into begin/end halves.
WindowGeometry common_geometry(const OpAttrs& node, const std::vector<int64_t>& kernel) {
  size_t rank = kernel.size();
  WindowGeometry g;
  g.kernel = kernel;
  g.strides = spatial_attr(node, "strides", rank, 1);
  g.dilations = spatial_attr(node, "dilations", rank, 1);
  std::vector<int64_t> pads = spatial_attr(node, "pads", 2 * rank, 0);
  g.pads_begin.assign(pads.begin(), pads.begin() + static_cast<std::ptrdiff_t>(rank));
  g.pads_end.assign(pads.begin() + static_cast<std::ptrdiff_t>(rank), pads.end());
  g.out.assign(rank, kUnknownDim);
  for (int64_t k : kernel) {
    if (k <= 0) throw Error(fmt::format("{}: kernel dims must be positive", node.describe()));
  }
  return g;
}

std::string auto_pad_of(const OpAttrs& node) {
  std::string a = node.attr_string("auto_pad", "NOTSET");
  if (a != "NOTSET" && a != "SAME_UPPER" && a != "SAME_LOWER" && a != "VALID") {
    throw Error(fmt::format("{}: unknown auto_pad '{}'", node.describe(), a));
  }
  return a;
}

int64_t floor_div(int64_t a, int64_t b) { return a / b - (a % b != 0 && (a < 0) != (b < 0)); }

// SAME_UPPER puts the odd padding element at the end, anything else at the beginning. The spec
// writes this with Python's floor division, which matters for ConvTranspose's negative totals.
void split_same_padding(int64_t total, bool upper, int64_t& begin, int64_t& end) {
  begin = upper ? floor_div(total, 2) : total - floor_div(total, 2);
  end = total - begin;
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

WindowGeometry window_geometry(const OpAttrs& node, const std::vector<int64_t>& in_spatial,
                               const std::vector<int64_t>& kernel, bool ceil_mode) {
  if (in_spatial.size() != kernel.size()) {
    throw Error(fmt::format("{}: kernel_shape has {} dims but the input has {} spatial dims",
                            node.describe(), kernel.size(), in_spatial.size()));
  }
  WindowGeometry g = common_geometry(node, kernel);
  std::string auto_pad = auto_pad_of(node);
  for (size_t i = 0; i < kernel.size(); ++i) {
    int64_t in = in_spatial[i];
    int64_t eff_k = (kernel[i] - 1) * g.dilations[i] + 1;
    int64_t s = g.strides[i];
    if (auto_pad == "VALID") {
      g.pads_begin[i] = g.pads_end[i] = 0;
    } else if (auto_pad != "NOTSET") {
      if (in == kUnknownDim) continue;
      g.out[i] = ceil_div(in, s);
      int64_t total = std::max<int64_t>(0, (g.out[i] - 1) * s + eff_k - in);
      split_same_padding(total, auto_pad == "SAME_UPPER", g.pads_begin[i], g.pads_end[i]);
      continue;
    }
    if (in == kUnknownDim) continue;
    int64_t span = in + g.pads_begin[i] + g.pads_end[i] - eff_k;
    if (span < 0) {
      throw Error(fmt::format(
          "{}: spatial dim {} of size {} (padded {}) is smaller than the kernel extent {}",
          node.describe(), i, in, span + eff_k, eff_k));
    }
    g.out[i] = (ceil_mode ? ceil_div(span, s) : span / s) + 1;
    // A ceil-mode window must start inside the input or the begin padding.
    if (ceil_mode && (g.out[i] - 1) * s >= in + g.pads_begin[i]) --g.out[i];
  }
  return g;
}

WindowGeometry conv_transpose_geometry(const OpAttrs& node, const std::vector<int64_t>& in_spatial,
                                       const std::vector<int64_t>& kernel) {
  if (in_spatial.size() != kernel.size()) {
    throw Error(fmt::format("{}: kernel_shape has {} dims but the input has {} spatial dims",
                            node.describe(), kernel.size(), in_spatial.size()));
  }
  size_t rank = kernel.size();
  WindowGeometry g = common_geometry(node, kernel);
  std::string auto_pad = auto_pad_of(node);
  std::vector<int64_t> output_padding = spatial_attr(node, "output_padding", rank, 0);
  std::vector<int64_t> output_shape = node.attr_ints("output_shape", {});
  if (output_shape.size() == rank + 2)
    output_shape.erase(output_shape.begin(), output_shape.begin() + 2);
  if (!output_shape.empty() && output_shape.size() != rank) {
    throw Error(fmt::format("{}: output_shape has {} entries, expected {}", node.describe(),
                            output_shape.size(), rank));
  }
  for (size_t i = 0; i < rank; ++i) {
    int64_t in = in_spatial[i];
    if (in == kUnknownDim) continue;
    int64_t full =
        g.strides[i] * (in - 1) + output_padding[i] + (kernel[i] - 1) * g.dilations[i] + 1;
    if (auto_pad == "VALID") g.pads_begin[i] = g.pads_end[i] = 0;
    if (!output_shape.empty() || auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      g.out[i] = output_shape.empty() ? in * g.strides[i] : output_shape[i];
      split_same_padding(full - g.out[i], auto_pad == "SAME_UPPER", g.pads_begin[i], g.pads_end[i]);
    } else {
      g.out[i] = full - g.pads_begin[i] - g.pads_end[i];
    }
    if (g.out[i] <= 0) {
      throw Error(
          fmt::format("{}: spatial output dim {} would be {}", node.describe(), i, g.out[i]));
    }
  }
  return g;
}

}  // namespace tessel::graph::ops
