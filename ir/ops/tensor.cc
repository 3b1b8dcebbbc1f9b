// Type inference for data-movement ops: reshapes, transposes, concat/split, slicing, gathers and
// scatters, padding and tiling, and the shape-producing ops (Shape, Size, Range, ...).
#include <fmt/format.h>

#include "ir/ops/op_defs.h"
#include "ir/ops/op_params.h"
#include "ir/ops/shape_util.h"

namespace tessel::graph::ops {
namespace {

using Types = std::vector<TensorType>;

int64_t rank_of(const TensorType& t) { return static_cast<int64_t>(t.shape.size()); }
int64_t mul_dims(int64_t a, int64_t b) {
  return a == kUnknownDim || b == kUnknownDim ? kUnknownDim : a * b;
}

// Two dims that must agree; an unknown dim takes the other's value.
int64_t merge_dims(int64_t a, int64_t b, const Node& node, const char* what) {
  if (a == kUnknownDim) return b;
  if (b != kUnknownDim && a != b)
    throw node_error(node, fmt::format("{}: dims {} and {} differ", what, a, b));
  return a;
}

// Output like input 0, with a new shape.
Types like_input(const Graph& g, const Node& node, std::vector<int64_t> shape) {
  return {TensorType{input_type(g, node, 0).dtype, std::move(shape), {}}};
}

Types infer_reshape(const Graph& g, const Node& node) {
  const TensorType& in = input_type(g, node, 0);
  return like_input(g, node, reshape_shape(node, in.shape, constant_ints(g, node, 1, "shape")));
}

Types infer_flatten(const Graph& g, const Node& node) {
  const TensorType& in = input_type(g, node, 0);
  int64_t rank = rank_of(in);
  int64_t axis = node.attr_int("axis", 1);
  if (axis < -rank || axis > rank) {
    throw node_error(node, fmt::format("axis {} is out of range for rank {}", axis, rank));
  }
  if (axis < 0) axis += rank;
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t& part = d < axis ? outer : inner;
    part = mul_dims(part, in.shape[d]);
  }
  return like_input(g, node, {outer, inner});
}

Types infer_transpose(const Graph& g, const Node& node) {
  const TensorType& in = input_type(g, node, 0);
  std::vector<int64_t> shape;
  for (int64_t p : transpose_perm(node, rank_of(in))) shape.push_back(in.shape[p]);
  return like_input(g, node, shape);
}

Types infer_concat(const Graph& g, const Node& node) {
  TensorType out = input_type(g, node, 0);
  if (!node.has_attr("axis")) throw node_error(node, "attribute 'axis' is required");
  int64_t axis = normalize_axis(node.attr_int("axis", 0), rank_of(out), node);
  for (size_t i = 1; i < node.inputs.size(); ++i) {
    const TensorType& t = input_type(g, node, i);
    if (t.dtype != out.dtype || t.shape.size() != out.shape.size()) {
      throw node_error(node,
                       fmt::format("input {} is {} but input 0 is {}", i, t.str(), out.str()));
    }
    for (size_t d = 0; d < t.shape.size(); ++d) {
      if (static_cast<int64_t>(d) == axis) {
        out.shape[d] = out.shape[d] == kUnknownDim || t.shape[d] == kUnknownDim
                           ? kUnknownDim
                           : out.shape[d] + t.shape[d];
      } else {
        out.shape[d] = merge_dims(out.shape[d], t.shape[d], node, "concatenated inputs");
      }
    }
  }
  out.dim_params.clear();
  return {out};
}

Types infer_split(const Graph& g, const Node& node) {
  const TensorType& in = input_type(g, node, 0);
  int64_t axis = normalize_axis(node.attr_int("axis", 0), rank_of(in), node);
  Types out;
  for (int64_t size :
       split_sizes(node, in.shape[axis], node.outputs.size(), constant_params(g, node))) {
    out.push_back(in);
    out.back().shape[axis] = size;
    out.back().dim_params.clear();
  }
  return out;
}

Types infer_slice(const Graph& g, const Node& node) {
  const TensorType& in = input_type(g, node, 0);
  return like_input(g, node, slice_spec(node, in.shape, constant_params(g, node)).sizes);
}

Types infer_gather(const Graph& g, const Node& node) {
  const TensorType& data = input_type(g, node, 0);
  const TensorType& indices = input_type(g, node, 1);
  int64_t axis = normalize_axis(node.attr_int("axis", 0), rank_of(data), node);
  std::vector<int64_t> shape(data.shape.begin(), data.shape.begin() + axis);
  shape.insert(shape.end(), indices.shape.begin(), indices.shape.end());
  shape.insert(shape.end(), data.shape.begin() + axis + 1, data.shape.end());
  return like_input(g, node, shape);
}

Types infer_gather_elements(const Graph& g, const Node& node) {
  const TensorType& data = input_type(g, node, 0);
  const TensorType& indices = input_type(g, node, 1);
  if (indices.shape.size() != data.shape.size()) {
    throw node_error(
        node, fmt::format("indices {} and data {} differ in rank", indices.str(), data.str()));
  }
  normalize_axis(node.attr_int("axis", 0), rank_of(data), node);
  return like_input(g, node, indices.shape);
}

Types infer_gather_nd(const Graph& g, const Node& node) {
  const TensorType& data = input_type(g, node, 0);
  const TensorType& indices = input_type(g, node, 1);
  int64_t batch = node.attr_int("batch_dims", 0);
  int64_t m = indices.shape.empty() ? kUnknownDim : indices.shape.back();
  if (m == kUnknownDim || batch < 0 || batch + m > rank_of(data) || batch >= rank_of(indices)) {
    throw node_error(node, fmt::format("indices {} do not index data {} with batch_dims {}",
                                       indices.str(), data.str(), batch));
  }
  std::vector<int64_t> shape(indices.shape.begin(), indices.shape.end() - 1);
  shape.insert(shape.end(), data.shape.begin() + batch + m, data.shape.end());
  return like_input(g, node, shape);
}

Types infer_scatter(const Graph& g, const Node& node) {
  input_type(g, node, 1);
  input_type(g, node, 2);
  require_same_dtype(g, node, {0, 2});  // data and updates
  return {input_type(g, node, 0)};
}

Types infer_squeeze(const Graph& g, const Node& node) {
  return like_input(g, node,
                    squeeze_shape(node, input_type(g, node, 0).shape, constant_params(g, node)));
}

Types infer_unsqueeze(const Graph& g, const Node& node) {
  return like_input(g, node,
                    unsqueeze_shape(node, input_type(g, node, 0).shape, constant_params(g, node)));
}

Types infer_expand(const Graph& g, const Node& node) {
  const TensorType& in = input_type(g, node, 0);
  return like_input(g, node, broadcast_shapes(in.shape, constant_ints(g, node, 1, "shape"), node));
}

Types infer_tile(const Graph& g, const Node& node) {
  const TensorType& in = input_type(g, node, 0);
  std::vector<int64_t> repeats = constant_ints(g, node, 1, "repeats");
  if (repeats.size() != in.shape.size()) {
    throw node_error(node, fmt::format("{} repeats for rank {}", repeats.size(), in.shape.size()));
  }
  std::vector<int64_t> shape;
  for (size_t d = 0; d < repeats.size(); ++d) shape.push_back(mul_dims(in.shape[d], repeats[d]));
  return like_input(g, node, shape);
}

Types infer_pad(const Graph& g, const Node& node) {
  const TensorType& in = input_type(g, node, 0);
  require_same_dtype(g, node, {0, 2});  // data and constant_value
  PadSpec spec = pad_spec(node, rank_of(in), constant_params(g, node));
  std::vector<int64_t> shape = in.shape;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] != kUnknownDim) shape[d] += spec.begins[d] + spec.ends[d];
    if (shape[d] < kUnknownDim)
      throw node_error(node, fmt::format("padding makes dim {} negative", d));
  }
  return like_input(g, node, shape);
}

Types infer_shape(const Graph& g, const Node& node) {
  auto [start, end] = shape_range(node, rank_of(input_type(g, node, 0)));
  return {TensorType{DataType::i64(), {end - start}, {}}};
}

Types infer_size(const Graph& g, const Node& node) {
  input_type(g, node, 0);
  return {TensorType{DataType::i64(), {}, {}}};
}

Types infer_constant_of_shape(const Graph& g, const Node& node) {
  return {TensorType{fill_value(node).dtype(), constant_ints(g, node, 0, "shape"), {}}};
}

Types infer_range(const Graph& g, const Node& node) {
  auto params = constant_params(g, node);
  for (size_t i = 0; i < 3; ++i) {
    if (!params(i)) throw node_error(node, fmt::format("input {} is required", i));
  }
  require_same_dtype(g, node, {0, 1, 2});
  int64_t n = range_count(node, *params(0), *params(1), *params(2));
  return {TensorType{input_type(g, node, 0).dtype, {n}, {}}};
}

Types infer_constant(const Graph& g, const Node& node) {
  TensorData value = constant_attr_value(node);
  return {TensorType{value.dtype(), value.shape(), {}}};
}

// DepthToSpace (to_space) and SpaceToDepth on NCHW.
Types infer_depth_space(const Graph& g, const Node& node, bool to_space) {
  const TensorType& in = input_type(g, node, 0);
  int64_t b = node.attr_int("blocksize", 0);
  if (in.shape.size() != 4)
    throw node_error(node, fmt::format("input must be 4-D, got {}", in.str()));
  if (b <= 0) throw node_error(node, "blocksize must be positive");
  auto scale = [&](int64_t d, int64_t num, int64_t den) {
    if (d == kUnknownDim) return kUnknownDim;
    if (d * num % den != 0)
      throw node_error(node, fmt::format("dim {} is not divisible by {}", d, den));
    return d * num / den;
  };
  auto s = in.shape;
  if (to_space)
    return like_input(g, node, {s[0], scale(s[1], 1, b * b), scale(s[2], b, 1), scale(s[3], b, 1)});
  return like_input(g, node, {s[0], scale(s[1], b * b, 1), scale(s[2], 1, b), scale(s[3], 1, b)});
}

Types infer_one_hot(const Graph& g, const Node& node) {
  const TensorType& indices = input_type(g, node, 0);
  const TensorData* depth = constant_params(g, node)(1);
  if (!depth || depth->numel() != 1) throw node_error(node, "depth must be a one-element constant");
  const TensorType& values = input_type(g, node, 2);
  int64_t axis = normalize_axis(node.attr_int("axis", -1), rank_of(indices) + 1, node);
  std::vector<int64_t> shape = indices.shape;
  shape.insert(shape.begin() + axis, static_cast<int64_t>(depth->get_double(0)));
  return {TensorType{values.dtype, shape, {}}};
}

// NonZero's output size depends on the data: known only for a constant input.
Types infer_non_zero(const Graph& g, const Node& node) {
  const TensorType& in = input_type(g, node, 0);
  const TensorData* t =
      &required_constant(g, node, 0, "the data, on whose values the output shape depends");
  int64_t count = 0;
  for (int64_t i = 0; i < t->numel(); ++i) count += t->get_double(i) != 0;
  return {TensorType{DataType::i64(), {rank_of(in), count}, {}}};
}

Types infer_trilu(const Graph& g, const Node& node) {
  const TensorType& in = input_type(g, node, 0);
  if (in.shape.size() < 2)
    throw node_error(node, fmt::format("input must have rank >= 2, got {}", in.str()));
  return {in};
}

// Compress keeps the slices where the condition is true: known only for a constant condition.
Types infer_compress(const Graph& g, const Node& node) {
  const TensorType& in = input_type(g, node, 0);
  const TensorData* cond =
      &required_constant(g, node, 1, "the condition, on whose values the output shape depends");
  int64_t kept = 0;
  for (int64_t i = 0; i < cond->numel(); ++i) kept += cond->get_int(i) != 0;
  if (!node.has_attr("axis")) return like_input(g, node, {kept});
  std::vector<int64_t> shape = in.shape;
  shape[normalize_axis(node.attr_int("axis", 0), rank_of(in), node)] = kept;
  return like_input(g, node, shape);
}

Types infer_eye_like(const Graph& g, const Node& node) {
  TensorType t = input_type(g, node, 0);
  if (t.shape.size() != 2)
    throw node_error(node, fmt::format("input must be 2-D, got {}", t.str()));
  if (node.has_attr("dtype")) t.dtype = onnx_dtype(node.attr_int("dtype", 1), node);
  return {t};
}

}  // namespace

std::vector<OpDef> tensor_defs() {
  const auto I = OpPattern::kInjective, O = OpPattern::kOpaque;
  return {
      {OpKind::Reshape, 5, I, infer_reshape},
      {OpKind::Flatten, 1, I, infer_flatten},
      {OpKind::Transpose, 1, I, infer_transpose},
      {OpKind::Concat, 4, I, infer_concat},
      {OpKind::Split, 2, I, infer_split},
      {OpKind::Slice, 1, I, infer_slice},
      {OpKind::Gather, 1, I, infer_gather},
      {OpKind::GatherElements, 11, I, infer_gather_elements},
      {OpKind::GatherND, 11, I, infer_gather_nd},
      {OpKind::ScatterElements, 11, O, infer_scatter},
      {OpKind::Scatter, 9, O, infer_scatter},
      {OpKind::ScatterND, 11, O, infer_scatter},
      {OpKind::Squeeze, 1, I, infer_squeeze},
      {OpKind::Unsqueeze, 1, I, infer_unsqueeze},
      {OpKind::Expand, 8, I, infer_expand},
      {OpKind::Tile, 6, I, infer_tile},
      {OpKind::Pad, 2, I, infer_pad},
      {OpKind::Shape, 1, O, infer_shape},
      {OpKind::Size, 1, O, infer_size},
      {OpKind::ConstantOfShape, 9, I, infer_constant_of_shape},
      {OpKind::Range, 11, I, infer_range},
      {OpKind::Constant, 1, O, infer_constant},
      {OpKind::DepthToSpace, 1, I,
       [](const Graph& g, const Node& n) { return infer_depth_space(g, n, true); }},
      {OpKind::SpaceToDepth, 1, I,
       [](const Graph& g, const Node& n) { return infer_depth_space(g, n, false); }},
      {OpKind::OneHot, 9, I, infer_one_hot},
      {OpKind::NonZero, 9, O, infer_non_zero},
      {OpKind::Trilu, 14, I, infer_trilu},
      {OpKind::Compress, 9, O, infer_compress},
      {OpKind::ReverseSequence, 10, I,
       [](const Graph& g, const Node& n) { return Types{input_type(g, n, 0)}; }},
      {OpKind::EyeLike, 9, I, infer_eye_like},
  };
}

}  // namespace tessel::graph::ops
