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
#include <cmath>
#include <functional>

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

std::vector<te::Tensor> conv_winograd(const OpCall& call, const std::vector<te::Tensor>& in,
                                      const std::string& name) {
  std::vector<int64_t> xs = static_shape(in[0]), us = static_shape(in[1]);
  const graph::ops::WinogradMatrices& wm =
      graph::ops::winograd_matrices(call.attr_int("tile_size", 0));
  int64_t m = wm.m, a = wm.alpha, block = us[3], channels = xs[1];
  WindowGeometry geo = graph::ops::window_geometry(call, {xs[2], xs[3]}, {3, 3}, false);
  int64_t oh = geo.out[0], ow = geo.out[1];
  int64_t th = (oh + m - 1) / m, tw = (ow + m - 1) / m, tiles = xs[0] * th * tw;
  DataType t = in[0].dtype();
  te::Tensor xp = pad_spatial(in[0], geo.pads_begin, {1, 1}, {th * m + 2, tw * m + 2}, make_zero(t),
                              name + "_pad");
  // The input tile of tile p starts at row ty * m, column tx * m of the padded input.
  auto input_at = [&](PrimExpr c, PrimExpr p, PrimExpr i, PrimExpr j) {
    PrimExpr rows = floordiv(p, idx(tw));  // n * th + ty
    return xp(floordiv(rows, idx(th)), std::move(c), floormod(rows, idx(th)) * idx(m) + i,
              floormod(p, idx(tw)) * idx(m) + j);
  };
  const double* bt = wm.bt.data();
  const double* at = wm.at.data();
  te::Tensor rows = te::compute(
      {idx(a), idx(a), idx(channels), idx(tiles)},
      [&](Var e1, Var j, Var c, Var p) {
        return select_row(e1, a, [&](int64_t r) {
          return combine(bt + r * a, a, t, [&](int64_t i) { return input_at(c, p, idx(i), j); });
        });
      },
      name + "_winograd_rows");
  te::Tensor v = te::compute(
      {idx(a * a), idx(channels), idx(tiles)},
      [&](Var e, Var c, Var p) {
        PrimExpr e1 = floordiv(e, idx(a));
        return select_row(floormod(e, idx(a)), a, [&](int64_t r) {
          return combine(bt + r * a, a, t, [&](int64_t j) { return rows(e1, idx(j), c, p); });
        });
      },
      name + "_winograd_input");
  const te::Tensor& u = in[1];
  te::IterVar rc = te::reduce_axis(0, idx(channels), "rc");
  te::Tensor gemm = te::compute(
      {idx(a * a), idx(us[1]), idx(tiles), idx(block)},
      [&](Var e, Var kb, Var p, Var b) { return te::sum(v(e, rc, p) * u(e, kb, rc, b), {rc}); },
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
  // The output's columns v of a tile take their coefficient rows as selects of constants: with v
  // the vector lanes (m consecutive pixels, stored whole) each select folds to a constant vector.
  te::Tensor y = te::compute(
      {idx(xs[0]), idx(us[1] * block), idx(oh), idx(ow)},
      [&](Var n, Var k, Var yy, Var xx) {
        PrimExpr p = (n * idx(th) + floordiv(yy, idx(m))) * idx(tw) + floordiv(xx, idx(m));
        PrimExpr col = floormod(xx, idx(m)), out;
        for (int64_t e2 = 0; e2 < a; ++e2) {
          bool used = false;
          for (int64_t r = 0; r < m; ++r) used = used || at[r * a + e2] != 0;
          if (!used) continue;
          PrimExpr coef =
              select_row(col, m, [&](int64_t r) { return make_const(t, at[r * a + e2]); });
          PrimExpr term = coef * cols(floormod(yy, idx(m)), idx(e2), floordiv(k, idx(block)), p,
                                      floormod(k, idx(block)));
          out = out.defined() ? out + term : term;
        }
        return bias.defined() ? out + bias(k) : out;
      },
      name);
  return {y};
}

}  // namespace

std::vector<OpCompute> winograd_computes() { return {{OpKind::ConvWinograd, conv_winograd}}; }

}  // namespace tessel::topi::nn
