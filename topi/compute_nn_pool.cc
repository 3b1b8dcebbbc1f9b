// MaxPool, AveragePool, LpPool and their global forms: a reduction over a padded input (padding
// with the reducer's identity: lowest value for max, zero for sums), then a per-output finish
// (the average's divisor, the Lp root). MaxPool's optional Indices output is a second reduction
// that finds where the max is.
#include <fmt/format.h>

#include "ir/error.h"
#include "topi/compute_nn.h"
#include "topi/compute_util.h"

namespace tessel::topi::nn {

namespace {

using graph::ops::WindowGeometry;

enum class PoolKind { kMax, kAverage, kLp };

PrimExpr c(DataType t, double v) { return make_const(t, v); }

// |x|^p, with the common p exactly.
PrimExpr lp_term(PrimExpr x, double p) {
  if (p == 1) return abs(x);
  if (p == 2) return x * x;
  return pow(abs(x), c(x.dtype(), p));
}

PrimExpr lp_root(PrimExpr s, double p) {
  if (p == 1) return s;
  if (p == 2) return sqrt(s);
  return pow(s, c(s.dtype(), 1.0 / p));
}

// The number of window points that count for the average at output position `out`: those in the
// input, or with count_include_pad those within the explicit pads too (not the ceil-mode overhang).
PrimExpr window_count(const WindowGeometry& geo, const std::vector<int64_t>& in, bool include_pad,
                      const std::vector<PrimExpr>& out) {
  PrimExpr count = idx(1);
  for (size_t d = 0; d < out.size(); ++d) {
    int64_t lo = include_pad ? -geo.pads_begin[d] : 0,
            hi = in[d] + (include_pad ? geo.pads_end[d] : 0);
    PrimExpr n = idx(0);
    for (int64_t k = 0; k < geo.kernel[d]; ++k) {
      PrimExpr pos = out[d] * idx(geo.strides[d]) + idx(k * geo.dilations[d] - geo.pads_begin[d]);
      n = n + select(pos >= idx(lo) && pos < idx(hi), idx(1), idx(0));
    }
    count = count * n;
  }
  return count;
}

// Reduces x over `geo` (an input already padded with the reducer's identity), then finishes each
// output with `finish(reduced, out_indices)`. With `block` > 0, xp and the output are blocked by
// channel, [n, c / b, s..., b] (ir/ops/conv_packing.h): the window's points are whole vectors.
te::Tensor window_pool(
    const te::Tensor& xp, const WindowGeometry& geo, PoolKind kind, double p,
    const std::function<PrimExpr(PrimExpr, const std::vector<PrimExpr>&)>& finish,
    const std::string& name, int64_t block = 0) {
  std::vector<PrimExpr> shape{xp.shape()[0], xp.shape()[1]};
  for (int64_t o : geo.out) shape.push_back(idx(o));
  if (block) shape.push_back(idx(block));
  size_t rank = geo.out.size();
  auto out_of = [rank](const std::vector<PrimExpr>& i) {
    return std::vector<PrimExpr>(i.begin() + 2, i.begin() + 2 + static_cast<std::ptrdiff_t>(rank));
  };
  std::vector<te::IterVar> rk = kernel_axes(geo.kernel);
  te::Tensor reduced = te::compute(
      shape,
      [&](const std::vector<Var>& i) {
        std::vector<PrimExpr> at = window_index(i[0], i[1], out_of(exprs(i)), rk, geo);
        if (block) at.push_back(i.back());
        PrimExpr v = xp(at);
        if (kind == PoolKind::kMax) return te::max(v, rk);
        return te::sum(kind == PoolKind::kLp ? lp_term(v, p) : v, rk);
      },
      kind == PoolKind::kMax ? name : name + "_sum");
  if (kind == PoolKind::kMax) return reduced;
  return te::compute(
      shape,
      [&](const std::vector<Var>& i) {
        std::vector<PrimExpr> at = exprs(i);
        return finish(reduced(at), out_of(at));
      },
      name);
}

std::vector<int64_t> spatial(const std::vector<int64_t>& shape) {
  return {shape.begin() + 2, shape.end()};
}

// MaxPool's Indices: the flat position in x (row-major over N, C and the spatial dims, or with
// storage_order=1 column-major over the spatial dims) of the first window point, in row-major
// window order, holding the max. A reduction over the window of the padded input `xp` finds that
// point's window offset; a finish stage turns it into the flat position.
te::Tensor max_indices(const te::Tensor& xp, const te::Tensor& pooled, const WindowGeometry& geo,
                       const std::vector<int64_t>& in_sp, bool col_major, const std::string& name) {
  size_t rank = in_sp.size();
  std::vector<int64_t> strides(rank, 1), kernel_strides(rank, 1);
  int64_t plane = 1, window = 1;
  for (size_t k = 0; k < rank; ++k) {
    size_t d = col_major ? k : rank - 1 - k;
    strides[d] = plane;
    plane *= in_sp[d];
    kernel_strides[rank - 1 - k] = window;
    window *= geo.kernel[rank - 1 - k];
  }
  std::vector<te::IterVar> rk = kernel_axes(geo.kernel);
  auto position = [&](const std::vector<Var>& i, size_t d, PrimExpr r) {  // in the unpadded input
    return i[d + 2] * idx(geo.strides[d]) + r * idx(geo.dilations[d]) - idx(geo.pads_begin[d]);
  };
  te::Tensor first = te::compute(
      pooled.shape(),
      [&](const std::vector<Var>& i) {
        std::vector<PrimExpr> at =
            window_index(i[0], i[1], std::vector<PrimExpr>(i.begin() + 2, i.end()), rk, geo);
        PrimExpr inside = make_const(DataType::boolean(), 1), offset = idx(0);
        for (size_t d = 0; d < rank; ++d) {
          PrimExpr pos = position(i, d, rk[d]);
          inside = inside && pos >= 0 && pos < idx(in_sp[d]);
          offset = offset + PrimExpr(rk[d]) * idx(kernel_strides[d]);
        }
        PrimExpr hit = inside && xp(at) == pooled(std::vector<PrimExpr>(i.begin(), i.end()));
        // No hit only for a window of NaNs (the reference's -1 there is not reproduced).
        return te::min(select(hit, offset, idx(window - 1)), rk);
      },
      name + "_first");
  const DataType i64 = DataType::i64();
  auto l = [&](int64_t v) { return make_const(i64, static_cast<double>(v)); };
  int64_t channels = *as_const_int(xp.shape()[1]);
  return te::compute(
      pooled.shape(),
      [&](const std::vector<Var>& i) {
        PrimExpr offset = first(std::vector<PrimExpr>(i.begin(), i.end()));
        PrimExpr flat = (cast(i64, i[0]) * l(channels) + cast(i64, i[1])) * l(plane);
        for (size_t d = 0; d < rank; ++d) {
          PrimExpr r = floormod(floordiv(offset, idx(kernel_strides[d])), idx(geo.kernel[d]));
          flat = flat + cast(i64, position(i, d, r)) * l(strides[d]);
        }
        return flat;
      },
      name + "_indices");
}

ComputeFn windowed(PoolKind kind) {
  return [kind](const OpCall& call, const std::vector<te::Tensor>& in, const std::string& name) {
    int64_t block = call.attr_int("input_block", 0);
    std::vector<int64_t> in_sp = spatial(static_shape(in[0]));
    if (block) in_sp.pop_back();
    WindowGeometry geo = graph::ops::window_geometry(
        call, in_sp, call.attr_ints("kernel_shape", {}), call.attr_int("ceil_mode", 0) != 0);
    DataType t = in[0].dtype();
    PrimExpr fill = kind == PoolKind::kMax ? min_value(t) : make_zero(t);
    te::Tensor xp = pad_spatial(in[0], geo.pads_begin, std::vector<int64_t>(in_sp.size(), 1),
                                window_extent(geo), fill, name + "_pad");
    double p = call.attr_float("p", 2.0);
    bool include_pad = call.attr_int("count_include_pad", 0) != 0;
    auto finish = [&](PrimExpr s, const std::vector<PrimExpr>& out) {
      if (kind == PoolKind::kLp) return lp_root(s, p);
      return s / cast(t, window_count(geo, in_sp, include_pad, out));
    };
    std::vector<te::Tensor> out{window_pool(xp, geo, kind, p, finish, name, block)};
    if (call.wants_output(1)) {
      out.push_back(
          max_indices(xp, out[0], geo, in_sp, call.attr_int("storage_order", 0) != 0, name));
    }
    return out;
  };
}

// Lanes of a global pool's partial results (lane_pool): rows whose width is a multiple of one.
constexpr int64_t kPoolLanes[] = {16, 8};

// A global pool over rows `lanes` wide multiples: partial[n, c, l] reduces every lanes-th element
// of the plane starting at l, and the output combines the `lanes` partials. A single reduction to
// one value per channel is a chain of dependent scalar adds (5 µs for resnet_mini's 32 x 256);
// the partials are a chain of vector adds, lanes times shorter.
te::Tensor lane_pool(const te::Tensor& x, const std::vector<int64_t>& in_sp, int64_t lanes,
                     PoolKind kind, double p, const std::function<PrimExpr(PrimExpr)>& finish,
                     const std::string& name) {
  std::vector<int64_t> extents = in_sp;
  extents.back() /= lanes;
  std::vector<te::IterVar> rk = kernel_axes(extents);
  te::Tensor partial = te::compute(
      {x.shape()[0], x.shape()[1], idx(lanes)},
      [&](const std::vector<Var>& i) {
        std::vector<PrimExpr> at{i[0], i[1]};
        for (size_t d = 0; d + 1 < rk.size(); ++d) at.push_back(rk[d]);
        at.push_back(PrimExpr(rk.back()) * idx(lanes) + i[2]);
        PrimExpr v = x(at);
        if (kind == PoolKind::kMax) return te::max(v, rk);
        return te::sum(kind == PoolKind::kLp ? lp_term(v, p) : v, rk);
      },
      name + "_partial");
  std::vector<PrimExpr> shape{x.shape()[0], x.shape()[1]};
  shape.insert(shape.end(), in_sp.size(), idx(1));
  return te::compute(
      shape,
      [&](const std::vector<Var>& i) {
        PrimExpr acc = partial({i[0], i[1], idx(0)});
        for (int64_t l = 1; l < lanes; ++l) {
          PrimExpr v = partial({i[0], i[1], idx(l)});
          acc = kind == PoolKind::kMax ? max(acc, v) : acc + v;
        }
        return finish(acc);
      },
      name);
}

// A global pool of x blocked by channel, [N, ceil(C / b), s..., b]: per block, b channels reduced
// over the plane as one chain of vectors; the output [N, channels, 1...] is NCHW, its first
// `channels` (a padded last block's others are reduced and not written).
te::Tensor blocked_global_pool(const te::Tensor& x, const std::vector<int64_t>& in_sp,
                               int64_t block, int64_t channels, PoolKind kind, double p,
                               const std::function<PrimExpr(PrimExpr)>& finish,
                               const std::string& name) {
  std::vector<te::IterVar> rk = kernel_axes(in_sp);
  te::Tensor reduced = te::compute(
      {x.shape()[0], x.shape()[1], idx(block)},
      [&](const std::vector<Var>& i) {
        std::vector<PrimExpr> at{i[0], i[1]};
        at.insert(at.end(), rk.begin(), rk.end());
        at.push_back(i[2]);
        PrimExpr v = x(at);
        if (kind == PoolKind::kMax) return te::max(v, rk);
        return te::sum(kind == PoolKind::kLp ? lp_term(v, p) : v, rk);
      },
      name + "_blocks");
  std::vector<PrimExpr> shape{x.shape()[0], idx(channels)};
  shape.insert(shape.end(), in_sp.size(), idx(1));
  return te::compute(
      shape,
      [&](const std::vector<Var>& i) {
        return finish(reduced({i[0], floordiv(i[1], idx(block)), floormod(i[1], idx(block))}));
      },
      name);
}

// A global pool is a window pool whose kernel is the whole plane, or a lane_pool when its rows
// allow; over blocked channels, a blocked_global_pool.
ComputeFn global(PoolKind kind) {
  return [kind](const OpCall& call, const std::vector<te::Tensor>& in, const std::string& name) {
    int64_t block = call.attr_int("input_block", 0);
    std::vector<int64_t> in_sp = spatial(static_shape(in[0]));
    if (block) in_sp.pop_back();
    int64_t count = 1;
    for (int64_t d : in_sp) count *= d;
    double p = call.attr_float("p", 2.0);
    DataType t = in[0].dtype();
    auto finish = [&](PrimExpr s) {
      if (kind == PoolKind::kMax) return s;
      return kind == PoolKind::kLp ? lp_root(s, p) : s / c(t, static_cast<double>(count));
    };
    if (block) {
      int64_t channels = call.attr_int("output_channels", static_shape(in[0])[1] * block);
      return std::vector<te::Tensor>{
          blocked_global_pool(in[0], in_sp, block, channels, kind, p, finish, name)};
    }
    for (int64_t lanes : kPoolLanes) {
      if (!in_sp.empty() && in_sp.back() % lanes == 0) {
        return std::vector<te::Tensor>{lane_pool(in[0], in_sp, lanes, kind, p, finish, name)};
      }
    }
    std::vector<int64_t> ones(in_sp.size(), 1), zeros(in_sp.size(), 0);
    WindowGeometry geo{in_sp, ones, ones, zeros, zeros, ones};
    auto window_finish = [&](PrimExpr s, const std::vector<PrimExpr>&) { return finish(s); };
    return std::vector<te::Tensor>{window_pool(in[0], geo, kind, p, window_finish, name)};
  };
}

}  // namespace

std::vector<OpCompute> pool_computes() {
  return {
      {OpKind::MaxPool, windowed(PoolKind::kMax)},
      {OpKind::AveragePool, windowed(PoolKind::kAverage)},
      {OpKind::LpPool, windowed(PoolKind::kLp)},
      {OpKind::GlobalMaxPool, global(PoolKind::kMax)},
      {OpKind::GlobalAveragePool, global(PoolKind::kAverage)},
      {OpKind::GlobalLpPool, global(PoolKind::kLp)},
  };
}

}  // namespace tessel::topi::nn
