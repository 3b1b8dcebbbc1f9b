// ConvWinograd (ir/ops/winograd.h): F(m x m, 3 x 3) as five stages over tiles p = (n, ty, tx) in
// row-major order.
//   T[e1, j, c, p]      = Σ_i Bᵀ[e1, i] d[c, p](i, j)        the input tile's rows transformed
//   V[e, c, p]          = Σ_j Bᵀ[e2, j] T[e1, j, c, p]        ... and its columns: Bᵀ d B
//   M[e, kb, p, b]      = Σ_c V[e, c, p] U[e, kb, c, b]       (m + 2)² GEMMs, b output channels a
//                                                             vector, as ConvNCHWc's blocks
//   Z[u, e2, kb, p, b]  = Σ_e1 Aᵀ[u, e1] M[e1 (m+2) + e2, ...] the output tile's rows
//   Y[n, k, y, x]       = Σ_e2 Aᵀ[v, e2] Z[u, e2, k / b, p, k % b] + bias[k]   (u, v = y, x mod m)
// with e = e1 (m + 2) + e2. The transform matrices are constants: every term is built only for a
// nonzero coefficient, and the schedule (topi/schedule_winograd.cc) unrolls the loops over their
// rows so that the selects of a row fold away.
// With X blocked by "input_block" channels ([N, C / bi, H, W, bi], ir/ops/conv_packing.h) T and V
// keep the channels' blocks innermost, T[e1, j, c / bi, p, c % bi] and V[e, c / bi, p, c % bi],
// so that the transforms work on vectors of a block's channels, and the GEMMs reduce over (c / bi,
// c % bi). With "output_block" Y is [N, K / b, y, x, b], Z's vectors stored whole.
#include <cmath>
#include <functional>

#include "ir/ops/conv_packing.h"
#include "ir/ops/winograd.h"
#include "topi/compute_nn.h"

namespace tessel::topi::nn {

namespace {

using graph::ops::WindowGeometry;

// select(v == 0, row(0), select(v == 1, row(1), ... row(rows - 1))).
PrimExpr select_row(const PrimExpr& v, int64_t rows, const std::function<PrimExpr(int64_t)>& row) {
  PrimExpr out = row(rows - 1);
  for (int64_t r = rows - 2; r >= 0; --r) out = select(v == idx(r), row(r), out);
  return out;
}

// Σ_i coef[i] term(i) over the nonzero coefficients, a positive one first and ±1 without a
// multiply.
PrimExpr combine(const double* coef, int64_t n, DataType t,
                 const std::function<PrimExpr(int64_t)>& term) {
  std::vector<int64_t> order;
  for (int64_t i = 0; i < n; ++i) {
    if (coef[i] > 0) order.insert(order.begin(), i);
    if (coef[i] < 0) order.push_back(i);
  }
  PrimExpr sum;
  for (int64_t i : order) {
    PrimExpr x = term(i);
    double mag = std::abs(coef[i]);
    if (mag != 1) x = make_const(t, mag) * x;
    if (!sum.defined()) {
      sum = coef[i] > 0 ? x : -x;
    } else {
      sum = coef[i] > 0 ? sum + x : sum - x;
    }
  }
  return sum.defined() ? sum : make_zero(t);
}

// Indices [lead..., c[0], tail..., c[1]]: c a channel, or (block, lane) with the lane innermost.
std::vector<PrimExpr> channel_indices(std::vector<PrimExpr> lead, const std::vector<PrimExpr>& c,
                                      const std::vector<PrimExpr>& tail) {
  lead.push_back(c[0]);
  lead.insert(lead.end(), tail.begin(), tail.end());
  if (c.size() > 1) lead.push_back(c[1]);
  return lead;
}

// V, the transformed input tiles (with T, their rows, as a stage of its own): [a², C, tiles], or
// [a², C / bi, tiles, bi] when X is blocked.
te::Tensor transform_input(const te::Tensor& xp, const graph::ops::WinogradMatrices& wm,
                           int64_t channels, int64_t in_block, int64_t th, int64_t tw,
                           const std::string& name) {
  int64_t m = wm.m, a = wm.alpha;
  DataType t = xp.dtype();
  const double* bt = wm.bt.data();
  // The input tile of tile p starts at row ty * m, column tx * m of the padded input.
  auto input_at = [&](const std::vector<PrimExpr>& c, PrimExpr p, PrimExpr i, PrimExpr j) {
    PrimExpr rows = floordiv(p, idx(tw));  // n * th + ty
    return xp(
        channel_indices({floordiv(rows, idx(th))}, c,
                        {floormod(rows, idx(th)) * idx(m) + i, floormod(p, idx(tw)) * idx(m) + j}));
  };
  int64_t tiles = *as_const_int(xp.shape()[0]) * th * tw;
  std::vector<PrimExpr> c_shape{idx(channels)};
  if (in_block) c_shape = {idx(channels / in_block), idx(in_block)};
  // The channel of a stage's indices after its `points` leading ones.
  auto channel_of = [&](const std::vector<Var>& i, size_t points) {
    std::vector<PrimExpr> c{i[points]};
    if (in_block) c.push_back(i[points + 2]);
    return c;
  };
  te::Tensor rows = te::compute(
      channel_indices({idx(a), idx(a)}, c_shape, {idx(tiles)}),
      [&](const std::vector<Var>& i) {
        std::vector<PrimExpr> c = channel_of(i, 2);
        return select_row(i[0], a, [&](int64_t r) {
          return combine(bt + r * a, a, t,
                         [&](int64_t k) { return input_at(c, i[3], idx(k), i[1]); });
        });
      },
      name + "_winograd_rows");
  return te::compute(
      channel_indices({idx(a * a)}, c_shape, {idx(tiles)}),
      [&](const std::vector<Var>& i) {
        std::vector<PrimExpr> c = channel_of(i, 1);
        PrimExpr e1 = floordiv(i[0], idx(a));
        return select_row(floormod(i[0], idx(a)), a, [&](int64_t r) {
          return combine(bt + r * a, a, t,
                         [&](int64_t j) { return rows(channel_indices({e1, idx(j)}, c, {i[2]})); });
        });
      },
      name + "_winograd_input");
}

std::vector<te::Tensor> conv_winograd(const OpCall& call, const std::vector<te::Tensor>& in,
                                      const std::string& name) {
  int64_t in_block = call.attr_int("input_block", 0), out_block = call.attr_int("output_block", 0);
  std::vector<int64_t> xs = static_shape(in[0]), us = static_shape(in[1]);
  if (in_block) xs = graph::ops::unblocked_channels_shape(xs);
  const graph::ops::WinogradMatrices& wm =
      graph::ops::winograd_matrices(call.attr_int("tile_size", 0));
  int64_t m = wm.m, a = wm.alpha, block = us[3], channels = xs[1];
  WindowGeometry geo = graph::ops::window_geometry(call, {xs[2], xs[3]}, {3, 3}, false);
  int64_t oh = geo.out[0], ow = geo.out[1];
  int64_t th = (oh + m - 1) / m, tw = (ow + m - 1) / m, tiles = xs[0] * th * tw;
  DataType t = in[0].dtype();
  te::Tensor xp = pad_spatial(in[0], geo.pads_begin, {1, 1}, {th * m + 2, tw * m + 2}, make_zero(t),
                              name + "_pad");
  te::Tensor v = transform_input(xp, wm, channels, in_block, th, tw, name);
  const double* at = wm.at.data();
  const te::Tensor& u = in[1];
  std::vector<te::IterVar> rc;
  if (in_block) {
    rc = {te::reduce_axis(0, idx(channels / in_block), "rcb"),
          te::reduce_axis(0, idx(in_block), "rci")};
  } else {
    rc = {te::reduce_axis(0, idx(channels), "rc")};
  }
  te::Tensor gemm = te::compute(
      {idx(a * a), idx(us[1]), idx(tiles), idx(block)},
      [&](Var e, Var kb, Var p, Var b) {
        std::vector<PrimExpr> c{rc[0]->var};
        PrimExpr channel = rc[0]->var;
        if (in_block) {
          c.push_back(rc[1]->var);
          channel = rc[0]->var * idx(in_block) + rc[1]->var;
        }
        return te::sum(v(channel_indices({e}, c, {p})) * u(e, kb, channel, b), rc);
      },
      name + "_winograd_gemm");
  te::Tensor cols = te::compute(
      {idx(m), idx(a), idx(us[1]), idx(tiles), idx(block)},
      [&](Var r, Var e2, Var kb, Var p, Var b) {
        return select_row(r, m, [&](int64_t row) {
          return combine(at + row * a, a, t,
                         [&](int64_t e1) { return gemm(idx(e1 * a) + e2, kb, p, b); });
        });
      },
      name + "_winograd_cols");
  te::Tensor bias = in.size() > 2 ? in[2] : te::Tensor();
  // Y at (n, block kb, lane b, y, x): the output's columns v of a tile take their coefficient rows
  // as selects of constants, which fold once the schedule unrolls v (blocked) or makes the m
  // pixels of a row one vector (NCHW).
  auto output_at = [&](PrimExpr n, PrimExpr kb, PrimExpr b, PrimExpr yy, PrimExpr xx) {
    PrimExpr p = (n * idx(th) + floordiv(yy, idx(m))) * idx(tw) + floordiv(xx, idx(m));
    PrimExpr col = floormod(xx, idx(m)), out;
    for (int64_t e2 = 0; e2 < a; ++e2) {
      bool used = false;
      for (int64_t r = 0; r < m; ++r) used = used || at[r * a + e2] != 0;
      if (!used) continue;
      PrimExpr coef = select_row(col, m, [&](int64_t r) { return make_const(t, at[r * a + e2]); });
      PrimExpr term = coef * cols(floormod(yy, idx(m)), idx(e2), kb, p, b);
      out = out.defined() ? out + term : term;
    }
    return bias.defined() ? out + bias(kb * idx(block) + b) : out;
  };
  if (out_block) {
    return {te::compute(
        {idx(xs[0]), idx(us[1]), idx(oh), idx(ow), idx(block)},
        [&](Var n, Var kb, Var yy, Var xx, Var b) { return output_at(n, kb, b, yy, xx); }, name)};
  }
  return {te::compute(
      {idx(xs[0]), idx(us[1] * block), idx(oh), idx(ow)},
      [&](Var n, Var k, Var yy, Var xx) {
        return output_at(n, floordiv(k, idx(block)), floormod(k, idx(block)), yy, xx);
      },
      name)};
}

}  // namespace

std::vector<OpCompute> winograd_computes() { return {{OpKind::ConvWinograd, conv_winograd}}; }

}  // namespace tessel::topi::nn
