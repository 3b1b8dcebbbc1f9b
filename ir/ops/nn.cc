// Type inference for the neural-network ops: convolutions, pools, Gemm/MatMul, normalizations and
// the softmax family, their op families (which schedules they take) and the FLOP counts of the
// tuned ones. Window arithmetic lives in nn_window.cc (shared with the reference).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "ir/error.h"
#include "ir/ops/conv_packing.h"
#include "ir/ops/nn_window.h"
#include "ir/ops/op_defs.h"
#include "ir/ops/shape_util.h"
#include "ir/ops/winograd.h"

namespace tessel::graph::ops {

namespace {

using Types = std::vector<TensorType>;

TensorType like(const TensorType& t, std::vector<int64_t> shape) {
  return TensorType{t.dtype, std::move(shape), {}};
}

// Y [N, C, spatial...], blocked by channel when the node has "output_block".
TensorType nchw_output(const TensorType& x, const Node& node, std::vector<int64_t> shape) {
  int64_t b = output_block(node);
  if (b == 0) return like(x, std::move(shape));
  check_channel_blocks(node);
  if (node.outputs.size() != 1) {
    throw Error(fmt::format("{}: output_block needs a single output", node.describe()));
  }
  if (shape.size() < 3 || shape[1] == kUnknownDim || shape[1] % b != 0) {
    throw Error(fmt::format("{}: output_block {} does not divide the {} output channels",
                            node.describe(), b, shape.size() < 2 ? 0 : shape[1]));
  }
  return like(x, blocked_channels_shape(shape, b));
}

// A conv's Y (nchw_output), blocked in W's blocks of output channels, `w_block` of them
// (kUnknownDim: not known yet); `w` names W in the message.
TensorType conv_output(const TensorType& x, const Node& node, std::vector<int64_t> shape,
                       int64_t w_block, const char* w) {
  int64_t b = output_block(node);
  if (b != 0 && w_block != kUnknownDim && b != w_block) {
    throw Error(fmt::format("{}: output_block {} differs from {}'s block of {}", node.describe(), b,
                            w, w_block));
  }
  return nchw_output(x, node, std::move(shape));
}

void require_float(const TensorType& t, const Node& node, const char* what) {
  if (!t.dtype.is_float()) {
    throw Error(
        fmt::format("{}: {} must be a float tensor, got {}", node.describe(), what, t.str()));
  }
}

// An [N, C, spatial...] input with at least one spatial dim; X blocked by channel
// (ir/ops/conv_packing.h) as the NCHW tensor it holds.
TensorType nchw_input(const Graph& g, const Node& node, size_t min_rank = 3) {
  check_channel_blocks(node);
  TensorType x = input_type(g, node, 0);
  if (int64_t b = input_block(node)) {
    if (x.shape.size() < min_rank + 1 || x.shape.back() != b) {
      throw Error(fmt::format("{}: input_block {} needs X as [N, C / {}, spatial..., {}], got {}",
                              node.describe(), b, b, b, x.str()));
    }
    int64_t blocks = x.shape[1];
    x.shape.pop_back();
    x.shape[1] = blocks == kUnknownDim ? kUnknownDim : blocks * b;
  }
  if (x.shape.size() < min_rank) {
    throw Error(fmt::format("{}: input X must have rank >= {} ([N, C, spatial...]), got {}",
                            node.describe(), min_rank, x.str()));
  }
  return x;
}

std::vector<int64_t> spatial_of(const std::vector<int64_t>& shape) {
  return {shape.begin() + 2, shape.end()};
}

bool dims_conflict(int64_t a, int64_t b) { return a != kUnknownDim && b != kUnknownDim && a != b; }

// Checks shared by Conv and ConvTranspose (X, W and the bias B share X's float type); returns the
// group count.
int64_t checked_group(const Graph& g, const Node& node, const TensorType& x, const TensorType& w) {
  require_float(x, node, "X");
  require_same_dtype(g, node, {0, 1, 2});
  if (w.shape.size() != x.shape.size()) {
    throw Error(
        fmt::format("{}: weight {} must have the rank of X {}", node.describe(), w.str(), x.str()));
  }
  int64_t group = node.attr_int("group", 1);
  if (group <= 0)
    throw Error(fmt::format("{}: group must be positive, got {}", node.describe(), group));
  return group;
}

// Conv: W is [M, C / group, k...]; Y is [N, M, out...].
Types infer_conv(const Graph& g, const Node& node) {
  const TensorType& x = nchw_input(g, node);
  const TensorType& w = input_type(g, node, 1);
  int64_t group = checked_group(g, node, x, w);
  if (x.shape[1] != kUnknownDim && w.shape[1] != kUnknownDim && x.shape[1] != w.shape[1] * group) {
    throw Error(fmt::format("{}: X has {} channels but W expects {} x group {}", node.describe(),
                            x.shape[1], w.shape[1], group));
  }
  if (w.shape[0] != kUnknownDim && w.shape[0] % group != 0) {
    throw Error(fmt::format("{}: {} output channels are not divisible by group {}", node.describe(),
                            w.shape[0], group));
  }
  std::vector<int64_t> kernel = node.attr_ints("kernel_shape", spatial_of(w.shape));
  WindowGeometry geo = window_geometry(node, spatial_of(x.shape), kernel, false);
  std::vector<int64_t> out{x.shape[0], w.shape[0]};
  out.insert(out.end(), geo.out.begin(), geo.out.end());
  return {like(x, out)};
}

// ConvNCHWc (internal, see ir/ops/conv_packing.h): Conv with group 1 (or depthwise) and W packed as
// [ceil(M / b), C, k..., b]; Y is [N, M, out...] as for Conv, M = output_channels when the last
// block is padded, else all the packed channels; blocked (output_block), all the packed channels.
Types infer_conv_nchwc(const Graph& g, const Node& node) {
  const TensorType& x = nchw_input(g, node);
  require_float(x, node, "X");
  require_same_dtype(g, node, {0, 1, 2});
  const TensorType& w = input_type(g, node, 1);
  if (w.shape.size() != x.shape.size() + 1) {
    throw Error(fmt::format("{}: packed W must have rank {} ([M / b, C, k..., b]), got {}",
                            node.describe(), x.shape.size() + 1, w.str()));
  }
  // Grouped only when depthwise: one input channel per output channel, group = C = M, blocked X
  // in W's blocks.
  int64_t group = node.attr_int("group", 1);
  if (group != 1 &&
      (w.shape[1] != 1 || dims_conflict(x.shape[1], group) ||
       dims_conflict(w.shape[0] * w.shape.back(), group) || node.has_attr("output_channels") ||
       (input_block(node) != 0 && input_block(node) != w.shape.back()))) {
    throw Error(fmt::format("{}: a packed conv with group {} must be depthwise: X {}, packed W {}",
                            node.describe(), group, x.str(), w.str()));
  }
  if (group == 1 && dims_conflict(x.shape[1], w.shape[1])) {
    throw Error(fmt::format("{}: X has {} channels but W expects {}", node.describe(), x.shape[1],
                            w.shape[1]));
  }
  std::vector<int64_t> kernel(w.shape.begin() + 2, w.shape.end() - 1);
  WindowGeometry geo =
      window_geometry(node, spatial_of(x.shape), node.attr_ints("kernel_shape", kernel), false);
  bool known = w.shape[0] != kUnknownDim && w.shape.back() != kUnknownDim;
  int64_t channels = known ? w.shape[0] * w.shape.back() : kUnknownDim;
  if (node.has_attr("output_channels")) {  // the last block padded
    int64_t o = node.attr_int("output_channels", 0);
    if (o <= 0 || (known && (o > channels || o <= channels - w.shape.back()))) {
      throw Error(fmt::format("{}: output_channels {} does not fit packed W {}", node.describe(), o,
                              w.str()));
    }
    // Blocked, Y keeps the padded block whole, its channels past O zero: the weights are, and
    // the bias B must cover them with zeros too.
    if (output_block(node)) {
      if (has_input(node, 2) && known &&
          input_type(g, node, 2).shape != std::vector<int64_t>{channels}) {
        throw Error(fmt::format(
            "{}: with output_block, output_channels {} needs B padded to the {} packed channels, "
            "got {}",
            node.describe(), o, channels, input_type(g, node, 2).str()));
      }
    } else {
      channels = o;
    }
  }
  std::vector<int64_t> out{x.shape[0], channels};
  out.insert(out.end(), geo.out.begin(), geo.out.end());
  return {conv_output(x, node, out, known ? w.shape.back() : kUnknownDim, "packed W")};
}

// ConvWinograd (internal, see ir/ops/winograd.h): a 3x3 stride-1 Conv with group 1 and W
// transformed to U [(m + 2)², M / b, C, b], m the "tile_size" attribute; Y is [N, M, out...] as for
// Conv. X and Y may be blocked by channel ("input_block", "output_block" = b).
Types infer_conv_winograd(const Graph& g, const Node& node) {
  const TensorType& x = nchw_input(g, node);
  require_float(x, node, "X");
  require_same_dtype(g, node, {0, 1, 2});
  const TensorType& u = input_type(g, node, 1);
  int64_t m = node.attr_int("tile_size", 0);
  if (std::find(std::begin(kWinogradTileSizes), std::end(kWinogradTileSizes), m) ==
      std::end(kWinogradTileSizes)) {
    throw Error(fmt::format("{}: Winograd tile size {} is not implemented; the tile sizes are {}",
                            node.describe(), m, fmt::join(kWinogradTileSizes, ", ")));
  }
  int64_t alpha = winograd_matrices(m).alpha;
  if (x.shape.size() != 4 || u.shape.size() != 4) {
    throw Error(
        fmt::format("{}: X must be [N, C, H, W] and W [(m + 2)^2, M / b, C, b], got {} and {}",
                    node.describe(), x.str(), u.str()));
  }
  if (dims_conflict(u.shape[0], alpha * alpha) || dims_conflict(x.shape[1], u.shape[2])) {
    throw Error(fmt::format("{}: W {} does not fit X {} at tile size {} ([{}, M / b, {}, b])",
                            node.describe(), u.str(), x.str(), m, alpha * alpha, x.shape[1]));
  }
  WindowGeometry geo = window_geometry(node, spatial_of(x.shape), {3, 3}, false);
  if (geo.strides != std::vector<int64_t>{1, 1} || geo.dilations != std::vector<int64_t>{1, 1}) {
    throw Error(
        fmt::format("{}: Winograd convolutions have unit strides and dilations", node.describe()));
  }
  bool known = u.shape[1] != kUnknownDim && u.shape[3] != kUnknownDim;
  std::vector<int64_t> out{x.shape[0], known ? u.shape[1] * u.shape[3] : kUnknownDim};
  out.insert(out.end(), geo.out.begin(), geo.out.end());
  return {conv_output(x, node, out, known ? u.shape[3] : kUnknownDim, "W")};
}

// ConvTranspose: W is [C, M / group, k...]; Y is [N, M, out...].
Types infer_conv_transpose(const Graph& g, const Node& node) {
  const TensorType& x = nchw_input(g, node);
  const TensorType& w = input_type(g, node, 1);
  int64_t group = checked_group(g, node, x, w);
  if (dims_conflict(x.shape[1], w.shape[0])) {
    throw Error(
        fmt::format("{}: X has {} channels but W has {}", node.describe(), x.shape[1], w.shape[0]));
  }
  std::vector<int64_t> kernel = node.attr_ints("kernel_shape", spatial_of(w.shape));
  WindowGeometry geo = conv_transpose_geometry(node, spatial_of(x.shape), kernel);
  int64_t m = w.shape[1] == kUnknownDim ? kUnknownDim : w.shape[1] * group;
  std::vector<int64_t> out{x.shape[0], m};
  out.insert(out.end(), geo.out.begin(), geo.out.end());
  return {like(x, out)};
}

// MaxPool / AveragePool / LpPool: Y (and MaxPool's int64 Indices) are [N, C, out...].
Types infer_pool(const Graph& g, const Node& node) {
  const TensorType& x = nchw_input(g, node);
  if (input_block(node) != output_block(node)) {
    throw Error(
        fmt::format("{}: a windowed pool keeps its layout, but input_block is {} and "
                    "output_block {}",
                    node.describe(), input_block(node), output_block(node)));
  }
  std::vector<int64_t> kernel = node.attr_ints("kernel_shape", {});
  if (kernel.size() + 2 != x.shape.size()) {
    throw Error(fmt::format("{}: kernel_shape has {} entries but X {} has {} spatial dims",
                            node.describe(), kernel.size(), x.str(), x.shape.size() - 2));
  }
  if (node.attr_int("storage_order", 0) != 0 && node.attr_int("storage_order", 0) != 1) {
    throw Error(fmt::format("{}: storage_order must be 0 or 1", node.describe()));
  }
  WindowGeometry geo =
      window_geometry(node, spatial_of(x.shape), kernel, node.attr_int("ceil_mode", 0) != 0);
  std::vector<int64_t> out{x.shape[0], x.shape[1]};
  out.insert(out.end(), geo.out.begin(), geo.out.end());
  Types result{nchw_output(x, node, out)};
  if (node.outputs.size() > 1) result.push_back(TensorType{DataType::i64(), out, {}});
  return result;
}

// A global pool over blocked channels whose last block is padded pools only the first
// "output_channels" of them.
Types infer_global_pool(const Graph& g, const Node& node) {
  const TensorType& x = nchw_input(g, node);
  std::vector<int64_t> out(x.shape.size(), 1);
  out[0] = x.shape[0];
  out[1] = x.shape[1];
  if (node.has_attr("output_channels")) {
    int64_t o = node.attr_int("output_channels", 0), b = input_block(node);
    if (b == 0 || o <= 0 ||
        (x.shape[1] != kUnknownDim && (o > x.shape[1] || o <= x.shape[1] - b))) {
      throw Error(fmt::format(
          "{}: output_channels {} does not fit X {}: it needs X blocked (input_block), its last "
          "block padded",
          node.describe(), o, input_type(g, node, 0).str()));
    }
    out[1] = o;
  }
  return {like(x, out)};
}

// Gemm: Y = alpha * A' * B' + beta * C with A' [M, K], B' [K, N] and C broadcastable to [M, N].
Types infer_gemm(const Graph& g, const Node& node) {
  const TensorType& a = input_type(g, node, 0);
  const TensorType& b = input_type(g, node, 1);
  if (a.shape.size() != 2 || b.shape.size() != 2) {
    throw Error(
        fmt::format("{}: A {} and B {} must be matrices", node.describe(), a.str(), b.str()));
  }
  require_same_dtype(g, node, {0, 1, 2});
  bool ta = node.attr_int("transA", 0) != 0, tb = node.attr_int("transB", 0) != 0;
  int64_t m = a.shape[ta ? 1 : 0], ka = a.shape[ta ? 0 : 1];
  int64_t kb = b.shape[tb ? 1 : 0], n = b.shape[tb ? 0 : 1];
  if (dims_conflict(ka, kb)) {
    throw Error(fmt::format("{}: inner dims differ: A' is [{}, {}], B' is [{}, {}]",
                            node.describe(), m, ka, kb, n));
  }
  std::vector<int64_t> out{m, n};
  if (has_input(node, 2)) {
    const TensorType& c = input_type(g, node, 2);
    if (c.shape.size() > 2 || broadcast_shapes(c.shape, out, node) != out) {
      throw Error(
          fmt::format("{}: C {} does not broadcast to [{}, {}]", node.describe(), c.str(), m, n));
    }
  }
  return {like(a, out)};
}

// numpy matmul: 1-D operands gain a dim that the result then drops; batch dims broadcast.
Types infer_matmul(const Graph& g, const Node& node) {
  std::vector<int64_t> a = input_type(g, node, 0).shape, b = input_type(g, node, 1).shape;
  if (a.empty() || b.empty())
    throw Error(fmt::format("{}: operands must have rank >= 1", node.describe()));
  require_same_dtype(g, node, {0, 1});
  bool a_vec = a.size() == 1, b_vec = b.size() == 1;
  if (a_vec) a.insert(a.begin(), 1);
  if (b_vec) b.push_back(1);
  int64_t k_a = a.back(), k_b = b[b.size() - 2];
  if (dims_conflict(k_a, k_b)) {
    throw Error(fmt::format("{}: inner dims {} and {} differ", node.describe(), k_a, k_b));
  }
  std::vector<int64_t> out =
      broadcast_shapes({a.begin(), a.end() - 2}, {b.begin(), b.end() - 2}, node);
  if (!a_vec) out.push_back(a[a.size() - 2]);
  if (!b_vec) out.push_back(b.back());
  return {like(input_type(g, node, 0), out)};
}

// MatMulPacked (internal, passes/pack_dense_weights): A [..., K] times a constant B [K, N] packed
// into column panels, Bp [ceil(N / b), K, b] (ir/ops/conv_packing.h); "columns" keeps N when the
// last panel is padded. Y is [..., N].
Types infer_matmul_packed(const Graph& g, const Node& node) {
  const TensorType& a = input_type(g, node, 0);
  const TensorType& b = input_type(g, node, 1);
  require_float(a, node, "A");
  require_same_dtype(g, node, {0, 1});
  if (a.shape.size() < 2 || b.shape.size() != 3) {
    throw Error(fmt::format("{}: A {} must have rank >= 2 and packed B {} rank 3 ([N / b, K, b])",
                            node.describe(), a.str(), b.str()));
  }
  if (dims_conflict(a.shape.back(), b.shape[1])) {
    throw Error(fmt::format("{}: inner dims {} and {} differ", node.describe(), a.shape.back(),
                            b.shape[1]));
  }
  bool known = b.shape[0] != kUnknownDim && b.shape[2] != kUnknownDim;
  int64_t columns = known ? b.shape[0] * b.shape[2] : kUnknownDim;
  if (node.has_attr("columns")) {  // the last panel padded
    int64_t n = node.attr_int("columns", 0);
    if (n <= 0 || (known && (n > columns || n <= columns - b.shape[2]))) {
      throw Error(
          fmt::format("{}: columns {} does not fit packed B {}", node.describe(), n, b.str()));
    }
    columns = n;
  }
  std::vector<int64_t> out(a.shape.begin(), a.shape.end() - 1);
  out.push_back(columns);
  return {like(a, out)};
}

// Per-channel parameter inputs (scale, bias, mean, var) must be [C] of X's dtype.
void check_channel_params(const Graph& g, const Node& node, const TensorType& x, size_t first,
                          size_t last) {
  std::vector<size_t> same_dtype{0};
  for (size_t i = first; i <= last; ++i) same_dtype.push_back(i);
  require_same_dtype(g, node, same_dtype);
  for (size_t i = first; i <= last && i < node.inputs.size(); ++i) {
    const TensorType& p = input_type(g, node, i);
    if (p.shape.size() != 1 || dims_conflict(p.shape[0], x.shape[1])) {
      throw Error(fmt::format("{}: input {} is {} but X has {} channels", node.describe(), i,
                              p.str(), x.shape[1]));
    }
  }
}

// Outputs beyond Y (training-mode running mean/var) are [C].
Types infer_batch_norm(const Graph& g, const Node& node) {
  const TensorType& x = nchw_input(g, node, 2);
  require_float(x, node, "X");
  check_channel_params(g, node, x, 1, 4);
  Types out{x};
  for (size_t i = 1; i < node.outputs.size(); ++i) out.push_back(like(x, {x.shape[1]}));
  return out;
}

Types infer_instance_norm(const Graph& g, const Node& node) {
  const TensorType& x = nchw_input(g, node);
  require_float(x, node, "X");
  check_channel_params(g, node, x, 1, 2);
  return {x};
}

// LayerNormalization: Mean / InvStdDev keep X's leading dims and have 1s from `axis` on.
Types infer_layer_norm(const Graph& g, const Node& node) {
  const TensorType& x = input_type(g, node, 0);
  require_float(x, node, "X");
  require_same_dtype(g, node, {0, 1, 2});
  int64_t rank = static_cast<int64_t>(x.shape.size());
  int64_t axis = normalize_axis(node.attr_int("axis", -1), rank, node);
  std::vector<int64_t> norm_shape(x.shape.begin() + axis, x.shape.end());
  input_type(g, node, 1);  // Scale is required; B is optional
  for (size_t i = 1; i <= 2 && has_input(node, i); ++i) {
    const TensorType& p = input_type(g, node, i);
    if (broadcast_shapes(p.shape, norm_shape, node).size() != norm_shape.size()) {
      throw Error(fmt::format("{}: input {} {} does not broadcast to the normalized dims",
                              node.describe(), i, p.str()));
    }
  }
  std::vector<int64_t> stat_shape(x.shape.begin(), x.shape.begin() + axis);
  stat_shape.resize(static_cast<size_t>(rank), 1);
  DataType stash = node.attr_int("stash_type", 1) == 1 ? DataType::f32() : x.dtype;
  Types out{x};
  for (size_t i = 1; i < node.outputs.size(); ++i) out.push_back(TensorType{stash, stat_shape, {}});
  return out;
}

Types infer_lrn(const Graph& g, const Node& node) {
  const TensorType& x = nchw_input(g, node);
  require_float(x, node, "X");
  if (node.attr_int("size", 0) <= 0)
    throw Error(fmt::format("{}: attribute 'size' must be positive", node.describe()));
  return {x};
}

// Softmax / LogSoftmax / Hardmax: the axis (default -1) must be in range.
Types infer_softmax(const Graph& g, const Node& node) {
  const TensorType& x = input_type(g, node, 0);
  require_float(x, node, "input");
  int64_t rank = static_cast<int64_t>(x.shape.size());
  normalize_axis(node.attr_int("axis", -1), std::max<int64_t>(rank, 1), node);
  return {x};
}

double output_elements(const Graph& g, const Node& node) {
  return static_cast<double>(g.value(node.outputs[0]).type.numel());
}

// The product of dims [begin, end) of `shape`.
double product(const std::vector<int64_t>& shape, size_t begin, size_t end) {
  double p = 1;
  for (size_t d = begin; d < end; ++d) p *= static_cast<double>(shape[d]);
  return p;
}

// W is [M, C / group, k...]: each output sums C / group x k... products.
double conv_flops(const Graph& g, const Node& node) {
  const std::vector<int64_t>& w = g.value(node.inputs[1]).type.shape;
  return 2 * output_elements(g, node) * product(w, 1, w.size());
}

// W is [M / b, C, k..., b].
double conv_nchwc_flops(const Graph& g, const Node& node) {
  const std::vector<int64_t>& w = g.value(node.inputs[1]).type.shape;
  return 2 * output_elements(g, node) * product(w, 1, w.size() - 1);
}

// The direct conv's count, so that GFLOP/s compare with the conv it replaces (W is [(m + 2)^2, M /
// b, C, b]; each output sums 9 C products).
double conv_winograd_flops(const Graph& g, const Node& node) {
  const std::vector<int64_t>& u = g.value(node.inputs[1]).type.shape;
  return 2 * output_elements(g, node) * 9 * static_cast<double>(u[2]);
}

// Each output sums K products, K being A's last dim (its first when A is transposed).
double dense_flops(const Graph& g, const Node& node, bool trans_a) {
  const std::vector<int64_t>& a = g.value(node.inputs[0]).type.shape;
  double k = a.empty() ? 1 : static_cast<double>(trans_a ? a[0] : a.back());
  return 2 * output_elements(g, node) * k;
}

double matmul_flops(const Graph& g, const Node& node) { return dense_flops(g, node, false); }

double gemm_flops(const Graph& g, const Node& node) {
  return dense_flops(g, node, node.attr_int("transA", 0) != 0);
}

}  // namespace

std::vector<OpDef> nn_defs() {
  using P = OpPattern;
  using F = OpFamily;
  constexpr bool kTuned = true;
  return {
      {OpKind::Conv, 1, P::kOutEWiseFusable, infer_conv, F::kConv, kTuned, conv_flops},
      {OpKind::ConvTranspose, 1, P::kOutEWiseFusable, infer_conv_transpose, F::kConv},
      {OpKind::ConvNCHWc, kInternalOp, P::kOutEWiseFusable, infer_conv_nchwc, F::kConvNCHWc, kTuned,
       conv_nchwc_flops},
      {OpKind::ConvWinograd, kInternalOp, P::kOutEWiseFusable, infer_conv_winograd,
       F::kConvWinograd, false, conv_winograd_flops},
      // Before opset 7, `broadcast` flags C broadcasting; both cases hold.
      {OpKind::Gemm, 1, P::kOutEWiseFusable, infer_gemm, F::kDense, kTuned, gemm_flops},
      {OpKind::MatMul, 1, P::kOutEWiseFusable, infer_matmul, F::kDense, kTuned, matmul_flops},
      {OpKind::MatMulPacked, kInternalOp, P::kOutEWiseFusable, infer_matmul_packed, F::kDense,
       kTuned, matmul_flops},
      {OpKind::MaxPool, 1, P::kOutEWiseFusable, infer_pool, F::kPool},
      {OpKind::AveragePool, 1, P::kOutEWiseFusable, infer_pool, F::kPool},
      {OpKind::LpPool, 1, P::kOutEWiseFusable, infer_pool, F::kPool},
      {OpKind::GlobalAveragePool, 1, P::kOutEWiseFusable, infer_global_pool, F::kPool},
      {OpKind::GlobalMaxPool, 1, P::kOutEWiseFusable, infer_global_pool, F::kPool},
      {OpKind::GlobalLpPool, 2, P::kOutEWiseFusable, infer_global_pool, F::kPool},
      {OpKind::BatchNormalization, 7, P::kOutEWiseFusable, infer_batch_norm},
      {OpKind::InstanceNormalization, 1, P::kOpaque, infer_instance_norm, F::kSoftmaxLike},
      {OpKind::LayerNormalization, 17, P::kOpaque, infer_layer_norm, F::kSoftmaxLike},
      {OpKind::LRN, 1, P::kOpaque, infer_lrn, F::kSoftmaxLike},
      {OpKind::Softmax, 1, P::kOpaque, infer_softmax, F::kSoftmaxLike},
      {OpKind::LogSoftmax, 1, P::kOpaque, infer_softmax, F::kSoftmaxLike},
      {OpKind::Hardmax, 1, P::kOpaque, infer_softmax, F::kSoftmaxLike},
  };
}

}  // namespace tessel::graph::ops
