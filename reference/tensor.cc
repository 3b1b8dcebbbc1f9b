// Reference evaluation of data-movement ops. Most are an index map from output to input
// elements (gather_from), so they work for every dtype by copying raw elements.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "ir/error.h"
#include "ir/ops/op_params.h"
#include "ir/ops/shape_util.h"
#include "reference/ref_ops.h"
#include "reference/ref_util.h"

namespace tessel::reference {
namespace {

using graph::Graph;
using graph::ops::node_error;
using graph::ops::normalize_axis;
using Inputs = std::vector<TensorData>;
using Outputs = std::vector<TensorData>;
using Index = std::vector<int64_t>;

int64_t rank_of(const TensorData& t) { return static_cast<int64_t>(t.shape().size()); }

int64_t flat_of(const Index& index, const std::vector<int64_t>& strides) {
  int64_t flat = 0;
  for (size_t d = 0; d < index.size(); ++d) flat += index[d] * strides[d];
  return flat;
}

// An index value in [-dim, dim) → [0, dim); Error naming the node otherwise.
int64_t wrap_index(int64_t i, int64_t dim, const Node& node) {
  if (i < -dim || i >= dim)
    throw node_error(node, fmt::format("index {} is out of range for a dim of {}", i, dim));
  return i < 0 ? i + dim : i;
}

Outputs eval_reshape(const Graph&, const Node& node, const Inputs& in) {
  const TensorData& x = required_input(in, 0, node);
  auto target = graph::ops::tensor_ints(required_input(in, 1, node));
  return {x.reshaped(graph::ops::reshape_shape(node, x.shape(), target))};
}

Outputs eval_flatten(const Graph&, const Node& node, const Inputs& in) {
  const TensorData& x = required_input(in, 0, node);
  int64_t axis = node.attr_int("axis", 1);
  if (axis < 0) axis += rank_of(x);
  if (axis < 0 || axis > rank_of(x))
    throw node_error(node, fmt::format("axis {} is out of range", axis));
  int64_t outer = numel_of(Index(x.shape().begin(), x.shape().begin() + axis));
  return {x.reshaped({outer, outer ? x.numel() / outer : 0})};
}

Outputs eval_squeeze(const Graph&, const Node& node, const Inputs& in) {
  const TensorData& x = required_input(in, 0, node);
  return {x.reshaped(graph::ops::squeeze_shape(node, x.shape(), runtime_params(in)))};
}

Outputs eval_unsqueeze(const Graph&, const Node& node, const Inputs& in) {
  const TensorData& x = required_input(in, 0, node);
  return {x.reshaped(graph::ops::unsqueeze_shape(node, x.shape(), runtime_params(in)))};
}

Outputs eval_transpose(const Graph&, const Node& node, const Inputs& in) {
  const TensorData& x = required_input(in, 0, node);
  Index perm = graph::ops::transpose_perm(node, rank_of(x));
  Index strides = strides_of(x.shape()), shape;
  for (int64_t p : perm) shape.push_back(x.shape()[p]);
  return {gather_from(x, shape, [&](const Index& idx) {
    int64_t flat = 0;
    for (size_t d = 0; d < idx.size(); ++d) flat += idx[d] * strides[perm[d]];
    return flat;
  })};
}

Outputs eval_concat(const Graph&, const Node& node, const Inputs& in) {
  const TensorData& first = required_input(in, 0, node);
  int64_t axis = normalize_axis(node.attr_int("axis", 0), rank_of(first), node);
  Index shape = first.shape();
  shape[axis] = 0;
  for (size_t k = 0; k < in.size(); ++k) shape[axis] += required_input(in, k, node).shape()[axis];
  TensorData out(first.dtype(), shape);
  Index out_strides = strides_of(shape);
  int64_t offset = 0;  // along the axis
  for (const TensorData& part : in) {
    for_each_index(part.shape(), [&](const Index& idx, int64_t flat) {
      copy_element(out, flat_of(idx, out_strides) + offset * out_strides[axis], part, flat);
    });
    offset += part.shape()[axis];
  }
  return {out};
}

Outputs eval_split(const Graph&, const Node& node, const Inputs& in) {
  const TensorData& x = required_input(in, 0, node);
  int64_t axis = normalize_axis(node.attr_int("axis", 0), rank_of(x), node);
  Index strides = strides_of(x.shape());
  Outputs out;
  int64_t offset = 0;
  for (int64_t size :
       graph::ops::split_sizes(node, x.shape()[axis], node.outputs.size(), runtime_params(in))) {
    Index shape = x.shape();
    shape[axis] = size;
    out.push_back(gather_from(x, shape, [&](const Index& idx) {
      return flat_of(idx, strides) + offset * strides[axis];
    }));
    offset += size;
  }
  return out;
}

Outputs eval_slice(const Graph&, const Node& node, const Inputs& in) {
  const TensorData& x = required_input(in, 0, node);
  graph::ops::SliceSpec spec = graph::ops::slice_spec(node, x.shape(), runtime_params(in));
  Index strides = strides_of(x.shape());
  return {gather_from(x, spec.sizes, [&](const Index& idx) {
    int64_t flat = 0;
    for (size_t d = 0; d < idx.size(); ++d)
      flat += (spec.starts[d] + idx[d] * spec.steps[d]) * strides[d];
    return flat;
  })};
}

Outputs eval_gather(const Graph&, const Node& node, const Inputs& in) {
  const TensorData& x = required_input(in, 0, node);
  const TensorData& indices = required_input(in, 1, node);
  int64_t axis = normalize_axis(node.attr_int("axis", 0), rank_of(x), node);
  size_t q = indices.shape().size();
  Index shape(x.shape().begin(), x.shape().begin() + axis);
  shape.insert(shape.end(), indices.shape().begin(), indices.shape().end());
  shape.insert(shape.end(), x.shape().begin() + axis + 1, x.shape().end());
  Index strides = strides_of(x.shape()), ind_strides = strides_of(indices.shape());
  return {gather_from(x, shape, [&](const Index& idx) {
    int64_t ind_flat = 0;
    for (size_t j = 0; j < q; ++j) ind_flat += idx[axis + j] * ind_strides[j];
    int64_t flat = wrap_index(get_i(indices, ind_flat), x.shape()[axis], node) * strides[axis];
    for (int64_t d = 0; d < axis; ++d) flat += idx[d] * strides[d];
    for (size_t d = axis + 1; d < x.shape().size(); ++d) flat += idx[d + q - 1] * strides[d];
    return flat;
  })};
}

Outputs eval_gather_elements(const Graph&, const Node& node, const Inputs& in) {
  const TensorData& x = required_input(in, 0, node);
  const TensorData& indices = required_input(in, 1, node);
  int64_t axis = normalize_axis(node.attr_int("axis", 0), rank_of(x), node);
  Index strides = strides_of(x.shape()), ind_strides = strides_of(indices.shape());
  return {gather_from(x, indices.shape(), [&](const Index& idx) {
    Index src = idx;
    src[axis] = wrap_index(get_i(indices, flat_of(idx, ind_strides)), x.shape()[axis], node);
    return flat_of(src, strides);
  })};
}

Outputs eval_gather_nd(const Graph&, const Node& node, const Inputs& in) {
  const TensorData& x = required_input(in, 0, node);
  const TensorData& indices = required_input(in, 1, node);
  auto batch = static_cast<size_t>(node.attr_int("batch_dims", 0));
  const Index& ishape = indices.shape();
  auto m = static_cast<size_t>(ishape.back());
  Index shape(ishape.begin(), ishape.end() - 1);
  shape.insert(shape.end(), x.shape().begin() + batch + m, x.shape().end());
  Index strides = strides_of(x.shape()),
        tuple_strides = strides_of(Index(ishape.begin(), ishape.end() - 1));
  size_t tuple_rank = ishape.size() - 1;
  return {gather_from(x, shape, [&](const Index& idx) {
    int64_t tuple = flat_of(Index(idx.begin(), idx.begin() + tuple_rank), tuple_strides) *
                    static_cast<int64_t>(m);
    int64_t flat = 0;
    for (size_t d = 0; d < batch; ++d) flat += idx[d] * strides[d];
    for (size_t j = 0; j < m; ++j) {
      flat +=
          wrap_index(get_i(indices, tuple + j), x.shape()[batch + j], node) * strides[batch + j];
    }
    for (size_t d = batch + m; d < x.shape().size(); ++d)
      flat += idx[tuple_rank + d - batch - m] * strides[d];
    return flat;
  })};
}

// out[target] = update, or combined with the existing value per the reduction attribute.
void scatter_element(TensorData& out, int64_t target, const TensorData& updates, int64_t u,
                     const std::string& reduction, const Node& node) {
  if (reduction == "none") return copy_element(out, target, updates, u);
  bool fl = out.dtype().is_float();
  double a = get_f(out, target), b = get_f(updates, u);
  int64_t ia = get_i(out, target), ib = get_i(updates, u);
  if (reduction == "add") {
    fl ? set_f(out, target, a + b) : set_i(out, target, ia + ib);
  } else if (reduction == "mul") {
    fl ? set_f(out, target, a * b) : set_i(out, target, ia * ib);
  } else if (reduction == "max") {
    fl ? set_f(out, target, std::max(a, b)) : set_i(out, target, std::max(ia, ib));
  } else if (reduction == "min") {
    fl ? set_f(out, target, std::min(a, b)) : set_i(out, target, std::min(ia, ib));
  } else {
    throw node_error(node, fmt::format("unsupported reduction '{}'", reduction));
  }
}

Outputs eval_scatter_elements(const Graph&, const Node& node, const Inputs& in) {
  TensorData out = required_input(in, 0, node).clone();
  const TensorData& indices = required_input(in, 1, node);
  const TensorData& updates = required_input(in, 2, node);
  int64_t axis = normalize_axis(node.attr_int("axis", 0), rank_of(out), node);
  std::string reduction = node.attr_string("reduction", "none");
  Index strides = strides_of(out.shape());
  for_each_index(indices.shape(), [&](const Index& idx, int64_t flat) {
    Index target = idx;
    target[axis] = wrap_index(get_i(indices, flat), out.shape()[axis], node);
    scatter_element(out, flat_of(target, strides), updates, flat, reduction, node);
  });
  return {out};
}

Outputs eval_scatter_nd(const Graph&, const Node& node, const Inputs& in) {
  TensorData out = required_input(in, 0, node).clone();
  const TensorData& indices = required_input(in, 1, node);
  const TensorData& updates = required_input(in, 2, node);
  std::string reduction = node.attr_string("reduction", "none");
  auto m = static_cast<size_t>(indices.shape().back());
  Index strides = strides_of(out.shape());
  int64_t slice = numel_of(Index(out.shape().begin() + m, out.shape().end()));
  int64_t tuples = indices.numel() / static_cast<int64_t>(m);
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t base = 0;
    for (size_t j = 0; j < m; ++j)
      base += wrap_index(get_i(indices, t * m + j), out.shape()[j], node) * strides[j];
    for (int64_t e = 0; e < slice; ++e)
      scatter_element(out, base + e, updates, t * slice + e, reduction, node);
  }
  return {out};
}

Outputs eval_expand(const Graph&, const Node& node, const Inputs& in) {
  const TensorData& x = required_input(in, 0, node);
  Index shape = graph::ops::broadcast_shapes(
      x.shape(), graph::ops::tensor_ints(required_input(in, 1, node)), node);
  Index offsets = broadcast_offsets(x.shape(), shape);
  TensorData out(x.dtype(), shape);
  for (int64_t i = 0; i < out.numel(); ++i) copy_element(out, i, x, offsets[i]);
  return {out};
}

Outputs eval_tile(const Graph&, const Node& node, const Inputs& in) {
  const TensorData& x = required_input(in, 0, node);
  Index repeats = graph::ops::tensor_ints(required_input(in, 1, node));
  if (repeats.size() != x.shape().size())
    throw node_error(node, "repeats must have one entry per dim");
  Index shape = x.shape(), strides = strides_of(x.shape());
  for (size_t d = 0; d < shape.size(); ++d) shape[d] *= repeats[d];
  return {gather_from(x, shape, [&](const Index& idx) {
    int64_t flat = 0;
    for (size_t d = 0; d < idx.size(); ++d) flat += idx[d] % x.shape()[d] * strides[d];
    return flat;
  })};
}

// The source index of padded position `i` along a dim of `dim`, or -1 for the constant.
int64_t pad_source(int64_t i, int64_t dim, const std::string& mode) {
  if (i >= 0 && i < dim) return i;
  if (mode == "constant") return -1;
  if (mode == "edge" || dim == 1) return i < 0 ? 0 : dim - 1;
  int64_t period = 2 * (dim - 1);  // reflect: mirror without repeating the edge
  int64_t m = ((i % period) + period) % period;
  return m < dim ? m : period - m;
}

Outputs eval_pad(const Graph&, const Node& node, const Inputs& in) {
  const TensorData& x = required_input(in, 0, node);
  graph::ops::PadSpec spec = graph::ops::pad_spec(node, rank_of(x), runtime_params(in));
  TensorData fill(x.dtype(), {1});  // zero unless constant_value is given
  if (const TensorData* value = optional_input(in, 2); value && value->numel() > 0) {
    x.dtype().is_float() ? set_f(fill, 0, get_f(*value, 0)) : set_i(fill, 0, get_i(*value, 0));
  }
  Index shape = x.shape(), strides = strides_of(x.shape());
  for (size_t d = 0; d < shape.size(); ++d) {
    shape[d] += spec.begins[d] + spec.ends[d];
    if (shape[d] < 0) throw node_error(node, fmt::format("padding makes dim {} negative", d));
    if (x.shape()[d] == 0 && shape[d] > 0 && spec.mode != "constant") {
      throw node_error(node, fmt::format("cannot {}-pad the empty dim {}", spec.mode, d));
    }
  }
  TensorData out(x.dtype(), shape);
  for_each_index(shape, [&](const Index& idx, int64_t flat) {
    int64_t src = 0;
    for (size_t d = 0; d < idx.size() && src >= 0; ++d) {
      int64_t s = pad_source(idx[d] - spec.begins[d], x.shape()[d], spec.mode);
      src = s < 0 ? -1 : src + s * strides[d];
    }
    src < 0 ? copy_element(out, flat, fill, 0) : copy_element(out, flat, x, src);
  });
  return {out};
}

Outputs eval_shape(const Graph&, const Node& node, const Inputs& in) {
  const TensorData& x = required_input(in, 0, node);
  auto [start, end] = graph::ops::shape_range(node, rank_of(x));
  return {int64_tensor({end - start}, Index(x.shape().begin() + start, x.shape().begin() + end))};
}

Outputs eval_constant_of_shape(const Graph&, const Node& node, const Inputs& in) {
  TensorData value = graph::ops::fill_value(node);
  TensorData out(value.dtype(), graph::ops::tensor_ints(required_input(in, 0, node)));
  for (int64_t i = 0; i < out.numel(); ++i) copy_element(out, i, value, 0);
  return {out};
}

Outputs eval_range(const Graph&, const Node& node, const Inputs& in) {
  const TensorData& start = required_input(in, 0, node);
  const TensorData& delta = required_input(in, 2, node);
  int64_t n = graph::ops::range_count(node, start, required_input(in, 1, node), delta);
  TensorData out(start.dtype(), {n});
  for (int64_t i = 0; i < n; ++i) {
    if (start.dtype().is_float()) {
      set_f(out, i, get_f(start, 0) + static_cast<double>(i) * get_f(delta, 0));
    } else {
      set_i(out, i, get_i(start, 0) + i * get_i(delta, 0));
    }
  }
  return {out};
}

// DepthToSpace (to_space) and SpaceToDepth on NCHW, as the index maps of ONNX's
// reshape-transpose-reshape definitions.
EvalFn depth_space(bool to_space) {
  return [to_space](const Graph&, const Node& node, const Inputs& in) -> Outputs {
    const TensorData& x = required_input(in, 0, node);
    int64_t b = node.attr_int("blocksize", 0);
    if (x.shape().size() != 4 || b <= 0)
      throw node_error(node, "needs a 4-D input and a positive blocksize");
    int64_t n = x.shape()[0], c = x.shape()[1], h = x.shape()[2], w = x.shape()[3];
    Index strides = strides_of(x.shape());
    auto at = [&](int64_t in, int64_t ic, int64_t ih, int64_t iw) {
      return in * strides[0] + ic * strides[1] + ih * strides[2] + iw * strides[3];
    };
    if (to_space) {
      if (c % (b * b) != 0)
        throw node_error(node, fmt::format("channels {} are not divisible by {}", c, b * b));
      int64_t oc = c / (b * b);
      bool crd = node.attr_string("mode", "DCR") == "CRD";
      return {gather_from(x, {n, oc, h * b, w * b}, [&](const Index& o) {
        int64_t i = o[2] % b, j = o[3] % b;
        int64_t ic = crd ? (o[1] * b + i) * b + j : (i * b + j) * oc + o[1];
        return at(o[0], ic, o[2] / b, o[3] / b);
      })};
    }
    if (h % b != 0 || w % b != 0)
      throw node_error(node, fmt::format("spatial dims are not divisible by {}", b));
    return {gather_from(x, {n, c * b * b, h / b, w / b}, [&](const Index& o) {
      int64_t i = o[1] / (b * c), j = o[1] / c % b;
      return at(o[0], o[1] % c, o[2] * b + i, o[3] * b + j);
    })};
  };
}

Outputs eval_one_hot(const Graph&, const Node& node, const Inputs& in) {
  const TensorData& indices = required_input(in, 0, node);
  const TensorData& depth_t = required_input(in, 1, node);
  const TensorData& values = required_input(in, 2, node);
  if (depth_t.numel() != 1 || values.numel() != 2)
    throw node_error(node, "depth must be a scalar and values a pair");
  auto depth = static_cast<int64_t>(get_f(depth_t, 0));
  int64_t axis = normalize_axis(node.attr_int("axis", -1), rank_of(indices) + 1, node);
  Index shape = indices.shape();
  shape.insert(shape.begin() + axis, depth);
  Index ind_strides = strides_of(indices.shape());
  return {gather_from(values, shape, [&](const Index& idx) {
    Index at = idx;
    at.erase(at.begin() + axis);
    int64_t v = static_cast<int64_t>(get_f(indices, flat_of(at, ind_strides)));
    if (v < 0) v += depth;
    return v == idx[axis] ? 1 : 0;  // values = [off, on]
  })};
}

Outputs eval_non_zero(const Graph&, const Node& node, const Inputs& in) {
  const TensorData& x = required_input(in, 0, node);
  std::vector<Index> found;
  for_each_index(x.shape(), [&](const Index& idx, int64_t flat) {
    if (get_f(x, flat) != 0) found.push_back(idx);
  });
  auto count = static_cast<int64_t>(found.size());
  TensorData out(DataType::i64(), {rank_of(x), count});
  for (int64_t k = 0; k < count; ++k) {
    for (int64_t d = 0; d < rank_of(x); ++d) out.data<int64_t>()[d * count + k] = found[k][d];
  }
  return {out};
}

Outputs eval_trilu(const Graph&, const Node& node, const Inputs& in) {
  const TensorData& x = required_input(in, 0, node);
  if (rank_of(x) < 2) throw node_error(node, "input must have rank >= 2");
  const TensorData* k_t = optional_input(in, 1);
  int64_t k = k_t ? get_i(*k_t, 0) : 0;
  bool upper = node.attr_int("upper", 1) != 0;
  TensorData out(x.dtype(), x.shape());
  for_each_index(x.shape(), [&](const Index& idx, int64_t flat) {
    int64_t diag = idx[idx.size() - 1] - idx[idx.size() - 2];  // column - row
    if (upper ? diag >= k : diag <= k) copy_element(out, flat, x, flat);
  });
  return {out};
}

Outputs eval_compress(const Graph&, const Node& node, const Inputs& in) {
  const TensorData& x0 = required_input(in, 0, node);
  const TensorData& cond = required_input(in, 1, node);
  bool flat = !node.has_attr("axis");
  TensorData x = flat ? x0.reshaped({x0.numel()}) : x0;
  int64_t axis = flat ? 0 : normalize_axis(node.attr_int("axis", 0), rank_of(x), node);
  Index kept;  // positions along the axis, in order
  for (int64_t i = 0; i < std::min(cond.numel(), x.shape()[axis]); ++i) {
    if (get_i(cond, i)) kept.push_back(i);
  }
  Index shape = x.shape(), strides = strides_of(x.shape());
  shape[axis] = static_cast<int64_t>(kept.size());
  return {gather_from(x, shape, [&](const Index& idx) {
    Index src = idx;
    src[axis] = kept[idx[axis]];
    return flat_of(src, strides);
  })};
}

Outputs eval_reverse_sequence(const Graph&, const Node& node, const Inputs& in) {
  const TensorData& x = required_input(in, 0, node);
  const TensorData& lens = required_input(in, 1, node);
  int64_t batch_axis = normalize_axis(node.attr_int("batch_axis", 1), rank_of(x), node);
  int64_t time_axis = normalize_axis(node.attr_int("time_axis", 0), rank_of(x), node);
  Index strides = strides_of(x.shape());
  return {gather_from(x, x.shape(), [&](const Index& idx) {
    Index src = idx;
    int64_t len = get_i(lens, idx[batch_axis]);
    if (idx[time_axis] < len) src[time_axis] = len - 1 - idx[time_axis];
    return flat_of(src, strides);
  })};
}

Outputs eval_eye_like(const Graph&, const Node& node, const Inputs& in) {
  const TensorData& x = required_input(in, 0, node);
  DataType dtype =
      node.has_attr("dtype") ? graph::ops::onnx_dtype(node.attr_int("dtype", 1), node) : x.dtype();
  int64_t k = node.attr_int("k", 0);
  if (rank_of(x) != 2) throw node_error(node, "input must be 2-D");
  TensorData out(dtype, x.shape());
  for_each_index(x.shape(),
                 [&](const Index& idx, int64_t flat) { set_i(out, flat, idx[1] - idx[0] == k); });
  return {out};
}

}  // namespace

std::vector<RefOp> tensor_ref_ops() {
  return {
      {OpKind::Reshape, eval_reshape},
      {OpKind::Flatten, eval_flatten},
      {OpKind::Squeeze, eval_squeeze},
      {OpKind::Unsqueeze, eval_unsqueeze},
      {OpKind::Transpose, eval_transpose},
      {OpKind::Concat, eval_concat},
      {OpKind::Split, eval_split},
      {OpKind::Slice, eval_slice},
      {OpKind::Gather, eval_gather},
      {OpKind::GatherElements, eval_gather_elements},
      {OpKind::GatherND, eval_gather_nd},
      {OpKind::ScatterElements, eval_scatter_elements},
      {OpKind::Scatter, eval_scatter_elements},
      {OpKind::ScatterND, eval_scatter_nd},
      {OpKind::Expand, eval_expand},
      {OpKind::Tile, eval_tile},
      {OpKind::Pad, eval_pad},
      {OpKind::Shape, eval_shape},
      {OpKind::Size,
       [](const Graph&, const Node& n, const Inputs& in) -> Outputs {
         return {int64_tensor({}, {required_input(in, 0, n).numel()})};
       }},
      {OpKind::ConstantOfShape, eval_constant_of_shape},
      {OpKind::Range, eval_range},
      {OpKind::Constant,
       [](const Graph&, const Node& n, const Inputs&) -> Outputs {
         return {graph::ops::constant_attr_value(n)};
       }},
      {OpKind::DepthToSpace, depth_space(true)},
      {OpKind::SpaceToDepth, depth_space(false)},
      {OpKind::OneHot, eval_one_hot},
      {OpKind::NonZero, eval_non_zero},
      {OpKind::Trilu, eval_trilu},
      {OpKind::Compress, eval_compress},
      {OpKind::ReverseSequence, eval_reverse_sequence},
      {OpKind::EyeLike, eval_eye_like},
  };
}

}  // namespace tessel::reference
