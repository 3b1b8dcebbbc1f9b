// Reference Resize (opsets 10-17) and Upsample (7-9). Each output dim gets a list of input taps
// (index, weight) from the coordinate transformation and the mode; the output is the sum over the
// product of the per-dim taps, which equals ONNX's dim-by-dim interpolation.
#include <fmt/format.h>

#include <cmath>

#include "ir/error.h"
#include "ir/ops/sequence_shapes.h"
#include "reference/nn_util.h"

namespace tessel::reference::nn {

namespace {

using graph::Node;

struct Tap {
  int64_t index;
  double weight;
};

struct DimTaps {
  std::vector<std::vector<Tap>> taps;  // per output index
  std::vector<bool> outside;           // tf_crop_and_resize: the point lies outside the input
};

struct ResizeAttrs {
  std::string mode, coordinate_mode, nearest_mode;
  double cubic_a;
  bool exclude_outside;
};

ResizeAttrs resize_attrs(const Node& node, int opset) {
  // Upsample and Resize-10 have no coordinate attributes: asymmetric coordinates, floor rounding.
  bool legacy = node.op_type == "Upsample" || opset < 11;
  ResizeAttrs a{node.attr_string("mode", "nearest"),
                legacy ? "asymmetric" : node.attr_string("coordinate_transformation_mode", "half_pixel"),
                legacy ? "floor" : node.attr_string("nearest_mode", "round_prefer_floor"),
                node.attr_float("cubic_coeff_a", -0.75), node.attr_int("exclude_outside", 0) != 0};
  if (a.mode == "bilinear" || a.mode == "trilinear") a.mode = "linear";
  if (a.mode != "nearest" && a.mode != "linear" && a.mode != "cubic") {
    throw Error(fmt::format("{}: unsupported mode '{}'", node.describe(), a.mode));
  }
  return a;
}

// The input coordinate of output index x (ONNX's coordinate_transformation_mode).
double source_coordinate(const Node& node, const std::string& mode, double x, double scale, int64_t in, double out_width,
                         double roi_start, double roi_end) {
  if (mode == "half_pixel") return (x + 0.5) / scale - 0.5;
  if (mode == "pytorch_half_pixel") return out_width > 1 ? (x + 0.5) / scale - 0.5 : -0.5;
  if (mode == "align_corners") return out_width == 1 ? 0.0 : x * static_cast<double>(in - 1) / (out_width - 1);
  if (mode == "asymmetric") return x / scale;
  if (mode == "tf_half_pixel_for_nn") return (x + 0.5) / scale;
  if (mode == "tf_crop_and_resize") {
    double span = (roi_end - roi_start) * static_cast<double>(in - 1);
    return roi_start * static_cast<double>(in - 1) + (out_width == 1 ? span / 2 : x * span / (out_width - 1));
  }
  throw Error(fmt::format("{}: unsupported coordinate_transformation_mode '{}'", node.describe(), mode));
}

std::vector<double> cubic_coeffs(double r, double a) {
  auto far = [a](double t) { return ((a * t - 5 * a) * t + 8 * a) * t - 4 * a; };     // 1 < |t| < 2
  auto near = [a](double t) { return ((a + 2) * t - (a + 3)) * t * t + 1; };          // |t| <= 1
  return {far(r + 1), near(r), near(1 - r), far(2 - r)};
}

DimTaps dim_taps(const Node& node, const ResizeAttrs& a, int64_t in, int64_t out, double scale, double roi_start,
                 double roi_end) {
  DimTaps d{std::vector<std::vector<Tap>>(static_cast<size_t>(out)), std::vector<bool>(static_cast<size_t>(out))};
  double out_width = scale * static_cast<double>(in);
  for (int64_t x = 0; x < out; ++x) {
    double src = source_coordinate(node, a.coordinate_mode, static_cast<double>(x), scale, in, out_width, roi_start,
                                   roi_end);
    if (a.coordinate_mode == "tf_crop_and_resize" && (src < 0 || src > static_cast<double>(in - 1))) {
      d.outside[x] = true;
      continue;
    }
    // ONNX takes the left neighbour with ratio in (0, 1]: an integral coordinate gets ratio 1.
    double base = std::floor(src), ratio = src - base;
    if (ratio == 0) {
      base -= 1;
      ratio = 1;
    }
    auto b = static_cast<int64_t>(base);
    std::vector<Tap> taps;
    if (a.mode == "nearest") {
      bool up = ratio == 1 || a.nearest_mode == "ceil" ||
                (a.nearest_mode == "round_prefer_floor" && ratio > 0.5) ||
                (a.nearest_mode == "round_prefer_ceil" && ratio >= 0.5);
      if (a.nearest_mode != "floor" && a.nearest_mode != "ceil" && a.nearest_mode != "round_prefer_floor" &&
          a.nearest_mode != "round_prefer_ceil") {
        throw Error(fmt::format("{}: unsupported nearest_mode '{}'", node.describe(), a.nearest_mode));
      }
      taps.push_back({up ? b + 1 : b, 1.0});
    } else if (a.mode == "linear") {
      taps = {{b, 1 - ratio}, {b + 1, ratio}};
    } else {
      std::vector<double> c = cubic_coeffs(ratio, a.cubic_a);
      for (int64_t k = 0; k < 4; ++k) taps.push_back({b - 1 + k, c[k]});
    }
    double kept = 0;
    std::vector<Tap>& result = d.taps[x];
    for (Tap t : taps) {
      bool inside = t.index >= 0 && t.index < in;
      if (a.exclude_outside && !inside) continue;
      t.index = std::clamp<int64_t>(t.index, 0, in - 1);
      kept += t.weight;
      result.push_back(t);
    }
    for (Tap& t : result) t.weight /= a.exclude_outside ? kept : 1.0;
  }
  return d;
}

std::vector<TensorData> eval_resize(const graph::Graph& g, const Node& node, const std::vector<TensorData>& in) {
  const TensorData& xt = in.at(0);
  const std::vector<int64_t>& shape = xt.shape();
  size_t rank = shape.size();
  graph::ops::ResizeInputs at = graph::ops::resize_inputs(node, g.opset);
  auto present = [&](int i) { return i >= 0 && static_cast<size_t>(i) < in.size() && in[i].defined() && in[i].numel() > 0; };
  std::vector<int64_t> sizes;
  std::vector<double> scales = at.scales < 0 ? node.attr_floats("scales", {}) : std::vector<double>{};
  if (present(at.sizes)) {
    for (int64_t i = 0; i < in[at.sizes].numel(); ++i) sizes.push_back(in[at.sizes].get_int(i));
  } else if (present(at.scales)) {
    scales = to_doubles(in[at.scales]);
  }
  std::vector<int64_t> out = graph::ops::resize_output_dims(node, shape, scales, sizes);
  std::vector<double> roi = present(at.roi) ? to_doubles(in[at.roi]) : std::vector<double>{};
  ResizeAttrs attrs = resize_attrs(node, g.opset);
  std::vector<DimTaps> dims;
  for (size_t d = 0; d < rank; ++d) {
    double scale = sizes.empty() ? scales[d] : static_cast<double>(out[d]) / static_cast<double>(shape[d]);
    double start = roi.size() == 2 * rank ? roi[d] : 0.0, end = roi.size() == 2 * rank ? roi[rank + d] : 1.0;
    dims.push_back(dim_taps(node, attrs, shape[d], out[d], scale, start, end));
  }
  double extrapolation = node.attr_float("extrapolation_value", 0.0);
  std::vector<double> x = to_doubles(xt), y;
  std::vector<int64_t> in_strides = strides_of(shape), pos(rank, 0), tap(rank, 0);
  int64_t total = product(out, 0, rank);
  for (int64_t flat = 0; flat < total; ++flat) {
    for (size_t d = rank, rest = static_cast<size_t>(flat); d-- > 0;) {
      pos[d] = static_cast<int64_t>(rest % static_cast<size_t>(out[d]));
      rest /= static_cast<size_t>(out[d]);
    }
    bool outside = false;
    for (size_t d = 0; d < rank; ++d) outside = outside || dims[d].outside[pos[d]];
    if (outside) {
      y.push_back(extrapolation);
      continue;
    }
    // Sum over every combination of the per-dim taps (an odometer over tap numbers).
    double acc = 0;
    std::fill(tap.begin(), tap.end(), 0);
    while (true) {
      double w = 1;
      int64_t off = 0;
      for (size_t d = 0; d < rank; ++d) {
        const Tap& t = dims[d].taps[pos[d]][tap[d]];
        w *= t.weight;
        off += t.index * in_strides[d];
      }
      acc += w * x[off];
      size_t d = rank;
      while (d > 0 && ++tap[d - 1] == static_cast<int64_t>(dims[d - 1].taps[pos[d - 1]].size())) tap[--d] = 0;
      if (d == 0) break;
    }
    y.push_back(acc);
  }
  return {from_doubles(xt.dtype(), out, y)};
}

}  // namespace

std::vector<RefOp> resize_ref_ops() { return {{"Resize", eval_resize}, {"Upsample", eval_resize}}; }

}  // namespace tessel::reference::nn
