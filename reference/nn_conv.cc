// Reference Conv, ConvTranspose and pools: direct loops over the window geometry shared with type
// inference (ir/ops/nn_window.h), in double, for any number of spatial dims; ConvWinograd as its
// algorithm states it.
#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "ir/error.h"
#include "ir/ops/conv_packing.h"
#include "ir/ops/nn_window.h"
#include "ir/ops/winograd.h"
#include "reference/nn_util.h"

namespace tessel::reference::nn {

namespace {

using graph::Node;
using graph::ops::WindowGeometry;

// Every multi-index of `dims` in row-major order.
std::vector<std::vector<int64_t>> all_indices(const std::vector<int64_t>& dims) {
  std::vector<std::vector<int64_t>> out;
  std::vector<int64_t> idx(dims.size(), 0);
  if (product(dims, 0, dims.size()) == 0) return out;
  while (true) {
    out.push_back(idx);
    size_t d = dims.size();
    while (d > 0 && ++idx[d - 1] == dims[d - 1]) idx[--d] = 0;
    if (d == 0) return out;
  }
}

std::vector<int64_t> spatial_of(const std::vector<int64_t>& shape) {
  return {shape.begin() + 2, shape.end()};
}

std::vector<int64_t> out_shape(int64_t n, int64_t c, const WindowGeometry& geo) {
  std::vector<int64_t> s{n, c};
  s.insert(s.end(), geo.out.begin(), geo.out.end());
  return s;
}

// Flat offset within the spatial block of the input position reached from output position `o` by
// kernel offset `k`, or -1 when it falls into padding.
int64_t input_offset(const WindowGeometry& geo, const std::vector<int64_t>& in,
                     const std::vector<int64_t>& o, const std::vector<int64_t>& k) {
  int64_t off = 0;
  for (size_t d = 0; d < in.size(); ++d) {
    int64_t i = o[d] * geo.strides[d] - geo.pads_begin[d] + k[d] * geo.dilations[d];
    if (i < 0 || i >= in[d]) return -1;
    off = off * in[d] + i;
  }
  return off;
}

std::vector<TensorData> eval_conv(const graph::Graph&, const Node& node,
                                  const std::vector<TensorData>& in) {
  const TensorData& xt = required_input(in, 0, node);
  const TensorData& wt = required_input(in, 1, node);
  std::vector<int64_t> in_sp = spatial_of(xt.shape()), k_sp = spatial_of(wt.shape());
  WindowGeometry geo =
      graph::ops::window_geometry(node, in_sp, node.attr_ints("kernel_shape", k_sp), false);
  int64_t batch = xt.shape()[0], channels = xt.shape()[1], m_total = wt.shape()[0],
          c_per_group = wt.shape()[1];
  int64_t groups = node.attr_int("group", 1), m_per_group = m_total / groups;
  if (c_per_group * groups != channels) {
    throw Error(fmt::format("{}: X has {} channels, W expects {} x group {}", node.describe(),
                            channels, c_per_group, groups));
  }
  std::vector<double> x = to_doubles(xt), w = to_doubles(wt);
  std::vector<double> bias =
      in.size() > 2 && in[2].defined() ? to_doubles(in[2]) : std::vector<double>(m_total, 0.0);
  int64_t in_size = product(in_sp, 0, in_sp.size()), k_size = product(k_sp, 0, k_sp.size());
  auto outs = all_indices(geo.out);
  auto kernel = all_indices(k_sp);
  std::vector<double> y;
  y.reserve(static_cast<size_t>(batch * m_total) * outs.size());
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t m = 0; m < m_total; ++m) {
      int64_t c0 = (m / m_per_group) * c_per_group;
      for (const auto& o : outs) {
        double acc = bias[m];
        for (int64_t c = 0; c < c_per_group; ++c) {
          const double* xc = &x[((n * channels) + c0 + c) * in_size];
          const double* wc = &w[(m * c_per_group + c) * k_size];
          for (size_t kp = 0; kp < kernel.size(); ++kp) {
            int64_t off = input_offset(geo, in_sp, o, kernel[kp]);
            if (off >= 0) acc += xc[off] * wc[kp];
          }
        }
        y.push_back(acc);
      }
    }
  }
  return {from_doubles(xt.dtype(), out_shape(batch, m_total, geo), y)};
}

// Each input element scatters X * W into the output positions i * s + k * d - pad_begin.
// ConvNCHWc is Conv with its weights packed by output channel (ir/ops/conv_packing.h); blocked,
// its padded last block is computed whole, as the kernel computes it.
std::vector<TensorData> eval_conv_nchwc(const graph::Graph& g, const Node& node,
                                        const std::vector<TensorData>& in) {
  std::vector<TensorData> plain = in;
  int64_t channels = graph::ops::output_block(node) ? -1 : node.attr_int("output_channels", -1);
  plain.at(1) = graph::ops::unpack_output_channels(required_input(in, 1, node), channels);
  return eval_conv(g, node, plain);
}

// ConvWinograd (ir/ops/winograd.h), computed as the algorithm states it, in double: per output
// tile, Y = Aᵀ [Σ_c U_c ⊙ (Bᵀ d_c B)] A over the zero-padded input.
std::vector<TensorData> eval_conv_winograd(const graph::Graph&, const Node& node,
                                           const std::vector<TensorData>& in) {
  const TensorData& xt = required_input(in, 0, node);
  const TensorData& ut = required_input(in, 1, node);
  const graph::ops::WinogradMatrices& wm =
      graph::ops::winograd_matrices(node.attr_int("tile_size", 0));
  int64_t m = wm.m, a = wm.alpha;
  WindowGeometry geo = graph::ops::window_geometry(node, spatial_of(xt.shape()), {3, 3}, false);
  int64_t batch = xt.shape()[0], channels = xt.shape()[1], h = xt.shape()[2], w = xt.shape()[3];
  int64_t blocks = ut.shape()[1], block = ut.shape()[3], k_total = blocks * block;
  int64_t oh = geo.out[0], ow = geo.out[1];
  std::vector<double> x = to_doubles(xt), u = to_doubles(ut);
  std::vector<double> bias =
      in.size() > 2 && in[2].defined() ? to_doubles(in[2]) : std::vector<double>(k_total, 0.0);
  // Bᵀ d B for every channel of one tile.
  auto transform_input = [&](int64_t n, int64_t y0, int64_t x0) {
    std::vector<double> v(static_cast<size_t>(channels * a * a));
    for (int64_t c = 0; c < channels; ++c) {
      auto d = [&](int64_t i, int64_t j) {
        int64_t yi = y0 + i - geo.pads_begin[0], xj = x0 + j - geo.pads_begin[1];
        bool inside = yi >= 0 && yi < h && xj >= 0 && xj < w;
        return inside ? x[((n * channels + c) * h + yi) * w + xj] : 0.0;
      };
      for (int64_t e1 = 0; e1 < a; ++e1) {
        for (int64_t e2 = 0; e2 < a; ++e2) {
          double s = 0;
          for (int64_t i = 0; i < a; ++i) {
            for (int64_t j = 0; j < a; ++j) s += wm.bt[e1 * a + i] * d(i, j) * wm.bt[e2 * a + j];
          }
          v[(c * a + e1) * a + e2] = s;
        }
      }
    }
    return v;
  };
  std::vector<double> y(static_cast<size_t>(batch * k_total * oh * ow));
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t y0 = 0; y0 < oh; y0 += m) {
      for (int64_t x0 = 0; x0 < ow; x0 += m) {
        std::vector<double> v = transform_input(n, y0, x0);
        for (int64_t k = 0; k < k_total; ++k) {
          std::vector<double> acc(static_cast<size_t>(a * a), 0.0);
          for (int64_t e = 0; e < a * a; ++e) {
            for (int64_t c = 0; c < channels; ++c) {
              acc[e] += u[((e * blocks + k / block) * channels + c) * block + k % block] *
                        v[c * a * a + e];
            }
          }
          for (int64_t r = 0; r < m && y0 + r < oh; ++r) {
            for (int64_t q = 0; q < m && x0 + q < ow; ++q) {
              double s = bias[k];
              for (int64_t e1 = 0; e1 < a; ++e1) {
                for (int64_t e2 = 0; e2 < a; ++e2)
                  s += wm.at[r * a + e1] * acc[e1 * a + e2] * wm.at[q * a + e2];
              }
              y[((n * k_total + k) * oh + y0 + r) * ow + x0 + q] = s;
            }
          }
        }
      }
    }
  }
  return {from_doubles(xt.dtype(), {batch, k_total, oh, ow}, y)};
}

std::vector<TensorData> eval_conv_transpose(const graph::Graph&, const Node& node,
                                            const std::vector<TensorData>& in) {
  const TensorData& xt = required_input(in, 0, node);
  const TensorData& wt = required_input(in, 1, node);
  std::vector<int64_t> in_sp = spatial_of(xt.shape()), k_sp = spatial_of(wt.shape());
  WindowGeometry geo =
      graph::ops::conv_transpose_geometry(node, in_sp, node.attr_ints("kernel_shape", k_sp));
  int64_t batch = xt.shape()[0], channels = xt.shape()[1], groups = node.attr_int("group", 1);
  int64_t c_per_group = channels / groups, m_per_group = wt.shape()[1],
          m_total = m_per_group * groups;
  std::vector<double> x = to_doubles(xt), w = to_doubles(wt);
  std::vector<double> bias =
      in.size() > 2 && in[2].defined() ? to_doubles(in[2]) : std::vector<double>(m_total, 0.0);
  int64_t in_size = product(in_sp, 0, in_sp.size()), k_size = product(k_sp, 0, k_sp.size());
  int64_t out_size = product(geo.out, 0, geo.out.size());
  auto inputs = all_indices(in_sp);
  auto kernel = all_indices(k_sp);
  std::vector<double> y(static_cast<size_t>(batch * m_total * out_size));
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t m = 0; m < m_total; ++m) {
      double* ym = &y[(n * m_total + m) * out_size];
      for (int64_t p = 0; p < out_size; ++p) ym[p] = bias[m];
      int64_t g = m / m_per_group, m_local = m % m_per_group;
      for (int64_t c = g * c_per_group; c < (g + 1) * c_per_group; ++c) {
        const double* wc = &w[(c * m_per_group + m_local) * k_size];
        for (size_t ip = 0; ip < inputs.size(); ++ip) {
          double xv = x[(n * channels + c) * in_size + static_cast<int64_t>(ip)];
          for (size_t kp = 0; kp < kernel.size(); ++kp) {
            int64_t off = 0;
            for (size_t d = 0; d < in_sp.size() && off >= 0; ++d) {
              int64_t o = inputs[ip][d] * geo.strides[d] + kernel[kp][d] * geo.dilations[d] -
                          geo.pads_begin[d];
              off = o < 0 || o >= geo.out[d] ? -1 : off * geo.out[d] + o;
            }
            if (off >= 0) ym[off] += xv * wc[kp];
          }
        }
      }
    }
  }
  return {from_doubles(xt.dtype(), out_shape(batch, m_total, geo), y)};
}

enum class PoolKind { kMax, kAverage, kLp };

// Pools every [n, c] plane over `geo`; MaxPool also yields the flat argmax indices (row-major over
// the whole tensor, or column-major over the spatial dims with storage_order=1).
std::vector<TensorData> pool(const Node& node, const TensorData& xt, const WindowGeometry& geo,
                             PoolKind kind) {
  std::vector<int64_t> in_sp = spatial_of(xt.shape());
  int64_t planes = xt.shape()[0] * xt.shape()[1], in_size = product(in_sp, 0, in_sp.size());
  bool include_pad = node.attr_int("count_include_pad", 0) != 0;
  bool col_major = node.attr_int("storage_order", 0) != 0;
  double p = node.attr_float("p", 2.0);
  std::vector<int64_t> col_strides(in_sp.size(), 1);
  for (size_t d = 1; d < in_sp.size(); ++d) col_strides[d] = col_strides[d - 1] * in_sp[d - 1];
  std::vector<double> x = to_doubles(xt), y, indices;
  auto outs = all_indices(geo.out);
  auto kernel = all_indices(geo.kernel);
  for (int64_t plane = 0; plane < planes; ++plane) {
    for (const auto& o : outs) {
      double best = -std::numeric_limits<double>::infinity(), sum = 0;
      int64_t best_index = -1, count = 0;
      for (const auto& k : kernel) {
        int64_t off = 0, col_off = 0;
        bool inside = true, inside_pads = true;
        for (size_t d = 0; d < in_sp.size(); ++d) {
          int64_t i = o[d] * geo.strides[d] - geo.pads_begin[d] + k[d] * geo.dilations[d];
          inside = inside && i >= 0 && i < in_sp[d];
          inside_pads = inside_pads && i < in_sp[d] + geo.pads_end[d];
          off = off * in_sp[d] + i;
          col_off += i * col_strides[d];
        }
        if (!inside) {
          count += include_pad && inside_pads;
          continue;
        }
        double v = x[plane * in_size + off];
        ++count;
        sum += kind == PoolKind::kLp ? std::pow(std::fabs(v), p) : v;
        if (v > best) {
          best = v;
          best_index = plane * in_size + (col_major ? col_off : off);
        }
      }
      y.push_back(kind == PoolKind::kMax  ? best
                  : kind == PoolKind::kLp ? std::pow(sum, 1.0 / p)
                                          : sum / count);
      indices.push_back(static_cast<double>(best_index));
    }
  }
  std::vector<int64_t> shape = out_shape(xt.shape()[0], xt.shape()[1], geo);
  std::vector<TensorData> result{from_doubles(xt.dtype(), shape, y)};
  if (kind == PoolKind::kMax && node.outputs.size() > 1)
    result.push_back(from_doubles(DataType::i64(), shape, indices));
  return result;
}

EvalFn windowed_pool(PoolKind kind) {
  return [kind](const graph::Graph&, const Node& node, const std::vector<TensorData>& in) {
    const TensorData& x = required_input(in, 0, node);
    WindowGeometry geo =
        graph::ops::window_geometry(node, spatial_of(x.shape()), node.attr_ints("kernel_shape", {}),
                                    node.attr_int("ceil_mode", 0) != 0);
    return pool(node, x, geo, kind);
  };
}

// A global pool is a window pool whose kernel is the whole plane; with "output_channels", over
// the first channels of X (blocked, its last block padded).
EvalFn global_pool(PoolKind kind) {
  return [kind](const graph::Graph&, const Node& node, const std::vector<TensorData>& in) {
    TensorData x = required_input(in, 0, node);
    if (node.has_attr("output_channels"))
      x = graph::ops::resize_channels(x, node.attr_int("output_channels", 0));
    std::vector<int64_t> in_sp = spatial_of(x.shape()), ones(in_sp.size(), 1),
                         zeros(in_sp.size(), 0);
    WindowGeometry geo{in_sp, ones, ones, zeros, zeros, ones};
    return pool(node, x, geo, kind);
  };
}

}  // namespace

std::vector<RefOp> conv_pool_ref_ops() {
  return {
      {OpKind::Conv, eval_conv},
      {OpKind::ConvTranspose, eval_conv_transpose},
      {OpKind::ConvNCHWc, eval_conv_nchwc},
      {OpKind::ConvWinograd, eval_conv_winograd},
      {OpKind::MaxPool, windowed_pool(PoolKind::kMax)},
      {OpKind::AveragePool, windowed_pool(PoolKind::kAverage)},
      {OpKind::LpPool, windowed_pool(PoolKind::kLp)},
      {OpKind::GlobalMaxPool, global_pool(PoolKind::kMax)},
      {OpKind::GlobalAveragePool, global_pool(PoolKind::kAverage)},
      {OpKind::GlobalLpPool, global_pool(PoolKind::kLp)},
  };
}

}  // namespace tessel::reference::nn
