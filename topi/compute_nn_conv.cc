// Conv and ConvTranspose (1-D/2-D/3-D, NCHW, grouped) as direct convolutions over a padded input.
// ConvTranspose is the gather form: a unit-stride convolution with the flipped kernel over the
// input dilated by the stride, so both share one reduction. ConvNCHWc, Conv with weights packed by
// output channel, computes blocks of output channels (the packed template).
#include <fmt/format.h>

#include <algorithm>

#include "ir/error.h"
#include "ir/ops/conv_packing.h"
#include "topi/compute_nn.h"
#include "topi/compute_util.h"

namespace tessel::topi::nn {

namespace {

using graph::ops::WindowGeometry;

// How one output channel m reads the weights at input channel rc of its group and kernel offset r.
using WeightFn =
    std::function<PrimExpr(PrimExpr m, PrimExpr rc, const std::vector<te::IterVar>& r)>;
// How output position `out` reads the (padded) input at channel c and kernel offset r.
using InputFn = std::function<PrimExpr(PrimExpr n, PrimExpr c, const std::vector<PrimExpr>& out,
                                       const std::vector<te::IterVar>& r)>;

struct ConvShape {
  int64_t batch, channels_per_group, out_per_group, groups, out_channels;
};

// Reads point `at` ([n, c, s...]) of an input that is NCHW (block 0) or blocked by channel,
// [n, c / b, s..., c % b] (ir/ops/conv_packing.h).
PrimExpr read_channel(const te::Tensor& x, std::vector<PrimExpr> at, int64_t block) {
  if (block == 0) return x(at);
  PrimExpr c = at[1];
  at[1] = floordiv(c, idx(block));
  at.push_back(floormod(c, idx(block)));
  return x(at);
}

// The window of a padded input tensor.
InputFn window_of(const te::Tensor& xp, const WindowGeometry& geo, int64_t block = 0) {
  return [xp, geo, block](PrimExpr n, PrimExpr c, const std::vector<PrimExpr>& out,
                          const std::vector<te::IterVar>& r) {
    return read_channel(xp, window_index(std::move(n), std::move(c), out, r, geo), block);
  };
}

// With a strided last axis, consecutive outputs read every s-th input column: vector loads of
// them are gathers. Stored phase by phase, xs[..., p, j] = xp[..., j * s + p], those columns are
// consecutive: output o at kernel offset r reads phase (r * d) % s, column o + (r * d) / s.
// Without dilation only phases 0 .. K-1 are read (a 1x1 strided conv reads phase 0 alone).
InputFn phase_split(const te::Tensor& xp, const WindowGeometry& geo, const std::string& name) {
  int64_t s = geo.strides.back(), d = geo.dilations.back();
  int64_t phases = d == 1 ? std::min(s, geo.kernel.back()) : s;
  int rank = xp.ndim();
  int64_t width = *as_const_int(xp.shape().back());
  std::vector<PrimExpr> shape(xp.shape().begin(), xp.shape().end() - 1);
  shape.push_back(idx(phases));
  shape.push_back(idx((width + s - 1) / s));
  te::Tensor xs = te::compute(
      shape,
      [&](const std::vector<Var>& i) {
        std::vector<PrimExpr> at(i.begin(), i.end() - 2);
        PrimExpr column = PrimExpr(i.back()) * idx(s) + i[rank - 1];
        at.push_back(min(column, idx(width - 1)));
        return select(column < idx(width), xp(at), make_zero(xp.dtype()));
      },
      name);
  WindowGeometry rows = geo;
  return [xs, rows, s, d](PrimExpr n, PrimExpr c, const std::vector<PrimExpr>& out,
                          const std::vector<te::IterVar>& r) {
    std::vector<PrimExpr> at = window_index(std::move(n), std::move(c), out, r, rows);
    PrimExpr offset = PrimExpr(r.back()) * idx(d);
    at.back() = floormod(offset, idx(s));
    at.push_back(out.back() + floordiv(offset, idx(s)));
    return xs(at);
  };
}

// A 1x1 conv of strides s reads one input point of every s: copied once, xs[n, c, o...] =
// xp[n, c, o * s...], its reduction reads a dense input, a quarter of the input at stride 2 (that
// stays in L2 over the blocks of output channels, where the strided input did not).
InputFn subsampled(const te::Tensor& xp, const WindowGeometry& geo, const std::string& name,
                   int64_t block) {
  size_t rank = geo.out.size();
  std::vector<PrimExpr> shape{xp.shape()[0], xp.shape()[1]};
  for (int64_t o : geo.out) shape.push_back(idx(o));
  shape.insert(shape.end(), xp.shape().begin() + 2 + rank, xp.shape().end());
  te::Tensor xs = te::compute(
      shape,
      [&](const std::vector<Var>& i) {
        std::vector<PrimExpr> at{i[0], i[1]};
        for (size_t d = 0; d < rank; ++d) at.push_back(PrimExpr(i[d + 2]) * idx(geo.strides[d]));
        at.insert(at.end(), i.begin() + 2 + rank, i.end());
        return xp(at);
      },
      name);
  return [xs, block](PrimExpr n, PrimExpr c, const std::vector<PrimExpr>& out,
                     const std::vector<te::IterVar>&) {
    std::vector<PrimExpr> at{std::move(n), std::move(c)};
    at.insert(at.end(), out.begin(), out.end());
    return read_channel(xs, std::move(at), block);
  };
}

// How an ungrouped conv reads its padded input: a strided 1x1 conv its subsampled copy; with
// `split_phases` (the direct template, whose vectors run along the width), a conv strided along
// the width its input phase by phase; else the window of the padded input itself. `block`: xp's
// channels per block when it is blocked (ConvNCHWc only, which does not split phases).
InputFn dense_conv_input(const te::Tensor& xp, const WindowGeometry& geo, const std::string& name,
                         bool split_phases, int64_t block = 0) {
  bool pointwise =
      std::all_of(geo.kernel.begin(), geo.kernel.end(), [](int64_t k) { return k == 1; });
  bool strided =
      std::any_of(geo.strides.begin(), geo.strides.end(), [](int64_t s) { return s > 1; });
  if (pointwise && strided) return subsampled(xp, geo, name + "_strided", block);
  if (split_phases && geo.strides.back() > 1) return phase_split(xp, geo, name + "_phases");
  return window_of(xp, geo, block);
}

// The reduction axes of a convolution: input channels of the group, then the kernel offsets.
struct ConvAxes {
  te::IterVar rc;
  std::vector<te::IterVar> rk, all;
};

ConvAxes conv_axes(int64_t channels_per_group, const std::vector<int64_t>& kernel) {
  ConvAxes a{te::reduce_axis(0, idx(channels_per_group), "rc"), kernel_axes(kernel), {}};
  a.all.push_back(a.rc);
  a.all.insert(a.all.end(), a.rk.begin(), a.rk.end());
  return a;
}

std::vector<PrimExpr> output_shape(int64_t batch, int64_t channels, const WindowGeometry& geo) {
  std::vector<PrimExpr> shape{idx(batch), idx(channels)};
  for (int64_t o : geo.out) shape.push_back(idx(o));
  return shape;
}

// y = read(i) + bias[i[1]] over `shape`, or `y` itself without a bias.
te::Tensor add_channel_bias(const std::vector<PrimExpr>& shape, const te::Tensor& bias,
                            const std::function<PrimExpr(const std::vector<Var>&)>& read,
                            const std::string& name) {
  return te::compute(
      shape,
      [&](const std::vector<Var>& i) { return bias.defined() ? read(i) + bias(i[1]) : read(i); },
      name);
}

// y[n, m, o...] = sum over (rc, r...) of input(n, group(m) * cg + rc, o, r) * weight(m, rc, r) (+
// bias[m]).
te::Tensor direct_conv(const InputFn& input, const ConvShape& cs, const WindowGeometry& geo,
                       const WeightFn& weight, const te::Tensor& bias, const std::string& name) {
  std::vector<PrimExpr> shape = output_shape(cs.batch, cs.out_channels, geo);
  ConvAxes a = conv_axes(cs.channels_per_group, geo.kernel);
  te::Tensor y = te::compute(
      shape,
      [&](const std::vector<Var>& i) {
        PrimExpr m = i[1];
        PrimExpr c = cs.groups == 1
                         ? PrimExpr(a.rc)
                         : floordiv(m, idx(cs.out_per_group)) * idx(cs.channels_per_group) + a.rc;
        std::vector<PrimExpr> out(i.begin() + 2, i.end());
        return te::sum(input(i[0], c, out, a.rk) * weight(m, a.rc, a.rk), a.all);
      },
      bias.defined() ? name + "_conv" : name);
  if (!bias.defined()) return y;
  return add_channel_bias(
      shape, bias,
      [&](const std::vector<Var>& i) { return y(std::vector<PrimExpr>(i.begin(), i.end())); },
      name);
}

te::Tensor optional_input(const std::vector<te::Tensor>& in, size_t i) {
  return i < in.size() ? in[i] : te::Tensor();
}

std::vector<int64_t> spatial(const std::vector<int64_t>& shape) {
  return {shape.begin() + 2, shape.end()};
}

std::vector<te::Tensor> conv(const OpCall& call, const std::vector<te::Tensor>& in,
                             const std::string& name) {
  std::vector<int64_t> xs = static_shape(in[0]), ws = static_shape(in[1]);
  WindowGeometry geo = graph::ops::window_geometry(
      call, spatial(xs), call.attr_ints("kernel_shape", spatial(ws)), false);
  ConvShape cs{xs[0], ws[1], 0, call.attr_int("group", 1), ws[0]};
  if (cs.groups <= 0 || cs.channels_per_group * cs.groups != xs[1] ||
      cs.out_channels % cs.groups != 0) {
    throw Error(
        fmt::format("{}: X has {} channels and W is {}x{} per group, which does not fit group {}",
                    call.describe(), xs[1], ws[0], ws[1], cs.groups));
  }
  cs.out_per_group = cs.out_channels / cs.groups;
  const te::Tensor& w = in[1];
  te::Tensor xp = pad_spatial(in[0], geo.pads_begin, std::vector<int64_t>(geo.kernel.size(), 1),
                              window_extent(geo), make_zero(in[0].dtype()), name + "_pad");
  auto weight = [&](PrimExpr m, PrimExpr rc, const std::vector<te::IterVar>& r) {
    std::vector<PrimExpr> at{std::move(m), std::move(rc)};
    at.insert(at.end(), r.begin(), r.end());
    return w(at);
  };
  // A grouped conv's tiles pad their group's rows as they go (topi/schedule_nn.cc) and read
  // strided columns with wide loads and shuffles; splitting phases would copy the whole input.
  InputFn input = cs.groups > 1 ? window_of(xp, geo) : dense_conv_input(xp, geo, name, true);
  return {direct_conv(input, cs, geo, weight, optional_input(in, 2), name)};
}

// ConvNCHWc (weights [M' / b, C, k..., b], see ir/ops/conv_packing.h; a depthwise one's C is 1,
// and its group M): the reduction computes
// output blocks yb[n, m / b, o..., m % b], b output channels in one vector that each broadcast
// input element feeds. With "output_block" those blocks are Y (plus the bias); else the epilogue
// unpacks them to NCHW with the bias, the first M channels (M' rounded M up to whole blocks). X is
// read one element at a time, NCHW or blocked by "input_block" channels.
std::vector<te::Tensor> conv_nchwc(const OpCall& call, const std::vector<te::Tensor>& in,
                                   const std::string& name) {
  int64_t in_block = call.attr_int("input_block", 0);
  std::vector<int64_t> xs = static_shape(in[0]), ws = static_shape(in[1]);
  if (in_block) xs = graph::ops::unblocked_channels_shape(xs);
  std::vector<int64_t> kernel(ws.begin() + 2, ws.end() - 1);
  WindowGeometry geo =
      graph::ops::window_geometry(call, spatial(xs), call.attr_ints("kernel_shape", kernel), false);
  int64_t block = ws.back();
  te::Tensor xp = pad_spatial(in[0], geo.pads_begin, std::vector<int64_t>(geo.kernel.size(), 1),
                              window_extent(geo), make_zero(in[0].dtype()), name + "_pad");
  bool depthwise = call.attr_int("group", 1) != 1;
  InputFn input = depthwise ? window_of(xp, geo) : dense_conv_input(xp, geo, name, false, in_block);
  const te::Tensor& w = in[1];
  ConvAxes a = conv_axes(depthwise ? 1 : xs[1], geo.kernel);
  // Output channel m of a depthwise conv reads input channel m: with blocked X, the same block and
  // lane, so that a vector of the block reads a vector.
  auto read = [&](const std::vector<Var>& i, const std::vector<PrimExpr>& out) {
    if (!depthwise) return input(i[0], a.rc, out, a.rk);
    if (!in_block) return input(i[0], i[1] * idx(block) + i.back() + a.rc, out, a.rk);
    std::vector<PrimExpr> at = window_index(i[0], i[1], out, a.rk, geo);
    at.push_back(i.back() + a.rc);
    return xp(at);
  };
  std::vector<PrimExpr> blocked = output_shape(xs[0], ws[0], geo);
  blocked.push_back(idx(block));
  te::Tensor yb = te::compute(
      blocked,
      [&](const std::vector<Var>& i) {
        std::vector<PrimExpr> out(i.begin() + 2, i.end() - 1), at{i[1], a.rc};
        at.insert(at.end(), a.rk.begin(), a.rk.end());
        at.push_back(i.back());
        return te::sum(read(i, out) * w(at), a.all);
      },
      name + "_blocks");
  te::Tensor bias = optional_input(in, 2);
  if (call.attr_int("output_block", 0) == block) {
    if (!bias.defined()) return {yb};
    return {te::compute(
        blocked,
        [&](const std::vector<Var>& i) {
          return yb(exprs(i)) + bias(i[1] * idx(block) + i.back());
        },
        name)};
  }
  std::vector<PrimExpr> shape =
      output_shape(xs[0], call.attr_int("output_channels", ws[0] * block), geo);
  return {add_channel_bias(
      shape, bias,
      [&](const std::vector<Var>& i) {
        std::vector<PrimExpr> at{i[0], floordiv(i[1], idx(block))};
        at.insert(at.end(), i.begin() + 2, i.end());
        at.push_back(floormod(i[1], idx(block)));
        return yb(at);
      },
      name)};
}

// Output position o gathers input i with o = i * s + k * d - pad_begin; over the input dilated by s
// and shifted by (K - 1) * d - pad_begin that is a unit-stride window with the kernel flipped.
std::vector<te::Tensor> conv_transpose(const OpCall& call, const std::vector<te::Tensor>& in,
                                       const std::string& name) {
  std::vector<int64_t> xs = static_shape(in[0]), ws = static_shape(in[1]);
  WindowGeometry geo = graph::ops::conv_transpose_geometry(
      call, spatial(xs), call.attr_ints("kernel_shape", spatial(ws)));
  int64_t groups = call.attr_int("group", 1);
  if (groups <= 0 || xs[1] % groups != 0 || ws[0] != xs[1]) {
    throw Error(fmt::format(
        "{}: X has {} channels and W has {} input channels, which does not fit group {}",
        call.describe(), xs[1], ws[0], groups));
  }
  ConvShape cs{xs[0], xs[1] / groups, ws[1], groups, ws[1] * groups};
  size_t rank = geo.kernel.size();
  std::vector<int64_t> shift(rank), extent(rank);
  for (size_t d = 0; d < rank; ++d) {
    shift[d] = (geo.kernel[d] - 1) * geo.dilations[d] - geo.pads_begin[d];
    extent[d] = geo.out[d] + (geo.kernel[d] - 1) * geo.dilations[d];
  }
  te::Tensor xd =
      pad_spatial(in[0], shift, geo.strides, extent, make_zero(in[0].dtype()), name + "_dilate");
  WindowGeometry unit = geo;
  unit.strides.assign(rank, 1);
  const te::Tensor& w = in[1];
  auto weight = [&](PrimExpr m, PrimExpr rc, const std::vector<te::IterVar>& r) {
    PrimExpr c =
        groups == 1 ? rc : floordiv(m, idx(cs.out_per_group)) * idx(cs.channels_per_group) + rc;
    std::vector<PrimExpr> at{c, groups == 1 ? m : floormod(m, idx(cs.out_per_group))};
    for (size_t d = 0; d < rank; ++d) at.push_back(idx(geo.kernel[d] - 1) - r[d]);
    return w(at);
  };
  return {direct_conv(window_of(xd, unit), cs, unit, weight, optional_input(in, 2), name)};
}

}  // namespace

std::vector<OpCompute> conv_computes() {
  return {{OpKind::Conv, conv},
          {OpKind::ConvNCHWc, conv_nchwc},
          {OpKind::ConvTranspose, conv_transpose}};
}

}  // namespace tessel::topi::nn
