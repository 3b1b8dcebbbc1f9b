// Resize (in the opset-17 form the importer gives Upsample and Resize-10 too) as a te compute. Each
// output point is a weighted sum over a small window of input taps: one for nearest, two per
// resized dim for linear, four for cubic, clamped into the input. The attributes, the coordinate
// transformation and the weights are ir/ops/sequence_shapes.h's, shared with the reference
// executor; coordinates are computed in float64 as there, so that nearest-mode ties and window
// positions come out identical.
#include <fmt/format.h>

#include "ir/error.h"
#include "ir/ops/sequence_shapes.h"
#include "topi/compute_util.h"
#include "topi/op_compute.h"

namespace tessel::topi {
namespace {

using graph::ops::ResizeAttrs;
using graph::ops::ResizeCoordinate;

PrimExpr f64(double v) { return make_const(DataType::f64(), v); }

// One input index along a dim; an undefined weight means 1 (no arithmetic on the element).
struct Tap {
  PrimExpr index, weight;
};

// A dim whose output index x reads input index x exactly (same extent, coordinate x → x): its one
// tap is the output index itself, whatever the mode (the other taps weigh 0). This keeps the
// batch and channel dims of a 4-d resize from multiplying the window.
bool is_identity(const ResizeCoordinate& c, int64_t in, int64_t out) {
  if (in != out) return false;
  for (int64_t x = 0; x < out; ++x) {
    if (c.at(static_cast<double>(x)) != static_cast<double>(x)) return false;
  }
  return true;
}

// The taps of output index `o` along one dim; `outside` is set to whether the point lies outside
// the input (tf_crop_and_resize only).
std::vector<Tap> dim_taps(const ResizeAttrs& a, const ResizeCoordinate& c, int64_t in,
                          const PrimExpr& o, PrimExpr& outside) {
  PrimExpr src = c.at(cast(DataType::f64(), o));
  if (c.crop) outside = src < f64(0) || src > f64(static_cast<double>(in - 1));
  PrimExpr base = graph::ops::resize_base(src), ratio = src - base;
  PrimExpr ib = cast(DataType::i32(), base);
  if (a.mode == "nearest") {
    PrimExpr up = graph::ops::resize_rounds_up(a, ratio);
    return {{clamp_index(ib + select(up, PrimExpr(1), PrimExpr(0)), in), PrimExpr()}};
  }
  std::vector<PrimExpr> w = graph::ops::resize_weights(a, ratio);
  std::vector<Tap> taps;
  PrimExpr kept;
  for (size_t k = 0; k < w.size(); ++k) {
    PrimExpr raw =
        ib + PrimExpr(static_cast<int>(graph::ops::resize_first_tap(a) + static_cast<int64_t>(k)));
    if (a.exclude_outside) {
      // Taps outside the input drop out and the others are renormalized to sum to 1.
      w[k] = select(raw >= PrimExpr(0) && raw < PrimExpr(static_cast<int>(in)), w[k], f64(0));
      kept = kept.defined() ? kept + w[k] : w[k];
    }
    taps.push_back({clamp_index(raw, in), w[k]});
  }
  if (a.exclude_outside) {
    for (Tap& t : taps) t.weight = t.weight / kept;
  }
  return taps;
}

// `acc` (float64) as `dtype`; integers truncate through int64 as the reference's conversion does.
PrimExpr from_f64(PrimExpr acc, DataType dtype) {
  if (dtype.is_float()) return cast(dtype, acc);
  return cast(dtype, cast(DataType::i64(), acc));
}

Outputs resize(const OpCall& call, const Inputs& in, const std::string& name) {
  const te::Tensor& x = in.at(0);
  std::vector<int64_t> shape = const_shape(x, call.describe());
  graph::ops::ResizeSpec spec = graph::ops::resize_spec(call, shape, call.params());
  const ResizeAttrs& a = spec.attrs;
  DataType dtype = x.dtype();
  if (a.mode != "nearest" && !dtype.is_float() && !dtype.is_integer()) {
    throw Error(fmt::format("{}: {} mode needs a numeric input, got {}", call.describe(), a.mode,
                            dtype.str()));
  }
  auto body = [&](const std::vector<Var>& vars) {
    std::vector<PrimExpr> o = exprs(vars);
    std::vector<std::vector<Tap>> dims;
    PrimExpr outside;
    for (size_t d = 0; d < shape.size(); ++d) {
      if (is_identity(spec.coords[d], shape[d], spec.out[d])) {
        dims.push_back({{o[d], PrimExpr()}});
        continue;
      }
      PrimExpr dim_outside;
      dims.push_back(dim_taps(a, spec.coords[d], shape[d], o[d], dim_outside));
      if (dim_outside.defined()) outside = outside.defined() ? outside || dim_outside : dim_outside;
    }
    // Sum over every combination of the per-dim taps (an odometer over tap numbers), in float64
    // unless every dim has a single unweighted tap (nearest: a plain gather, any dtype).
    bool gather = true;
    for (const auto& taps : dims) gather = gather && taps.size() == 1 && !taps[0].weight.defined();
    PrimExpr value;
    std::vector<size_t> pick(dims.size(), 0);
    while (true) {
      std::vector<PrimExpr> idx;
      PrimExpr w;
      for (size_t d = 0; d < dims.size(); ++d) {
        const Tap& t = dims[d][pick[d]];
        idx.push_back(t.index);
        if (t.weight.defined()) w = w.defined() ? w * t.weight : t.weight;
      }
      PrimExpr term = x(idx);
      if (!gather)
        term = w.defined() ? w * cast(DataType::f64(), term) : cast(DataType::f64(), term);
      value = value.defined() ? value + term : term;
      size_t d = dims.size();
      while (d > 0 && ++pick[d - 1] == dims[d - 1].size()) pick[--d] = 0;
      if (d == 0) break;
    }
    if (gather)
      return outside.defined() ? select(outside, make_const(dtype, a.extrapolation), value) : value;
    if (outside.defined()) value = select(outside, f64(a.extrapolation), value);
    return from_f64(value, dtype);
  };
  return {te::compute(output_shape(call, 0), body, name)};
}

}  // namespace

std::vector<OpCompute> resize_computes() { return {{OpKind::Resize, resize}}; }

}  // namespace tessel::topi
