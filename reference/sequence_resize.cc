// Reference Resize (the importer rewrites Upsample and Resize-10 into its opset-17 form). Each
// output dim gets a list of input taps (index, weight) from the coordinate transformation and the
// mode; the output is the sum over the product of the per-dim taps, which equals ONNX's dim-by-dim
// interpolation.
#include <algorithm>

#include "ir/ops/sequence_shapes.h"
#include "reference/nn_util.h"

namespace tessel::reference::nn {

namespace {

using graph::Node;
using graph::ops::ResizeAttrs;
using graph::ops::ResizeCoordinate;

struct Tap {
  int64_t index;
  double weight;
};

struct DimTaps {
  std::vector<std::vector<Tap>> taps;  // per output index
  std::vector<bool> outside;           // tf_crop_and_resize: the point lies outside the input
};

DimTaps dim_taps(const ResizeAttrs& a, const ResizeCoordinate& coord, int64_t in, int64_t out) {
  DimTaps d{std::vector<std::vector<Tap>>(static_cast<size_t>(out)),
            std::vector<bool>(static_cast<size_t>(out))};
  for (int64_t x = 0; x < out; ++x) {
    double src = coord.at(static_cast<double>(x));
    if (coord.crop && (src < 0 || src > static_cast<double>(in - 1))) {
      d.outside[x] = true;
      continue;
    }
    double base = graph::ops::resize_base(src), ratio = src - base;
    auto b = static_cast<int64_t>(base);
    std::vector<Tap> taps;
    if (a.mode == "nearest") {
      taps.push_back({graph::ops::resize_rounds_up(a, ratio) ? b + 1 : b, 1.0});
    } else {
      std::vector<double> w = graph::ops::resize_weights(a, ratio);
      int64_t first = b + graph::ops::resize_first_tap(a);
      for (size_t k = 0; k < w.size(); ++k) taps.push_back({first + static_cast<int64_t>(k), w[k]});
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

std::vector<TensorData> eval_resize(const graph::Graph&, const Node& node,
                                    const std::vector<TensorData>& in) {
  const TensorData& xt = in.at(0);
  const std::vector<int64_t>& shape = xt.shape();
  size_t rank = shape.size();
  graph::ops::ResizeSpec spec = graph::ops::resize_spec(node, shape, runtime_params(in));
  const std::vector<int64_t>& out = spec.out;
  std::vector<DimTaps> dims;
  for (size_t d = 0; d < rank; ++d)
    dims.push_back(dim_taps(spec.attrs, spec.coords[d], shape[d], out[d]));
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
      y.push_back(spec.attrs.extrapolation);
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
      while (d > 0 && ++tap[d - 1] == static_cast<int64_t>(dims[d - 1].taps[pos[d - 1]].size()))
        tap[--d] = 0;
      if (d == 0) break;
    }
    y.push_back(acc);
  }
  return {from_doubles(xt.dtype(), out, y)};
}

}  // namespace

std::vector<RefOp> resize_ref_ops() { return {{OpKind::Resize, eval_resize}}; }

}  // namespace tessel::reference::nn
