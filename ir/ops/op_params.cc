#include "ir/ops/op_params.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include "ir/error.h"
#include "ir/ops/shape_util.h"

namespace tessel::graph::ops {

ParamInput constant_params(const Graph& g, const Node& node) {
  return [&g, &node](size_t i) -> const TensorData* {
    if (!has_input(node, i)) return nullptr;
    return &required_constant(g, node, i, "a parameter");
  };
}

Error node_error(const OpAttrs& node, const std::string& msg) {
  return Error(node.describe() + ": " + msg);
}

DataType onnx_dtype(int64_t code, const OpAttrs& node) {
  switch (code) {
    case 1:
      return DataType::f32();
    case 2:
      return DataType::u8();
    case 3:
      return DataType::i8();
    case 4:
      return DataType::u16();
    case 5:
      return DataType::i16();
    case 6:
      return DataType::i32();
    case 7:
      return DataType::i64();
    case 9:
      return DataType::boolean();
    case 10:
      return DataType::f16();
    case 11:
      return DataType::f64();
    case 12:
      return DataType::u32();
    case 13:
      return DataType::u64();
    case 16:
      return DataType::bf16();
  }
  throw node_error(node, fmt::format("unsupported ONNX element type {}", code));
}

std::vector<int64_t> tensor_ints(const TensorData& t) {
  std::vector<int64_t> out(static_cast<size_t>(t.numel()));
  for (int64_t k = 0; k < t.numel(); ++k) out[k] = t.get_int(k);
  return out;
}

namespace {
// The ints of input `index`; nullopt when it is omitted.
std::optional<std::vector<int64_t>> input_ints(const ParamInput& input, size_t index) {
  const TensorData* t = input(index);
  if (!t) return std::nullopt;
  return tensor_ints(*t);
}

int64_t ceil_div(int64_t a, int64_t b) {
  return a / b + ((a % b != 0) && ((a < 0) == (b < 0)) ? 1 : 0);
}
}  // namespace

ReduceSpec reduce_spec(const OpAttrs& node, int64_t rank, const ParamInput& input) {
  // In the opset-17 form ReduceSum (with noop_with_empty_axes) takes its axes as input 1, the other
  // reductions as an attribute; whichever the node has is read.
  std::vector<int64_t> axes = node.has_attr("axes")
                                  ? node.attr_ints("axes", {})
                                  : input_ints(input, 1).value_or(std::vector<int64_t>{});
  bool noop_if_empty = node.attr_int("noop_with_empty_axes", 0) != 0;
  ReduceSpec spec;
  spec.keepdims = node.attr_int("keepdims", 1) != 0;
  spec.reduced.assign(static_cast<size_t>(rank), axes.empty() && !noop_if_empty);
  for (int64_t a : axes) spec.reduced[normalize_axis(a, rank, node)] = true;
  return spec;
}

std::vector<int64_t> reduced_shape(const std::vector<int64_t>& shape, const ReduceSpec& spec) {
  std::vector<int64_t> out;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (!spec.reduced[d]) {
      out.push_back(shape[d]);
    } else if (spec.keepdims) {
      out.push_back(1);
    }
  }
  return out;
}

SliceSpec slice_spec(const OpAttrs& node, const std::vector<int64_t>& shape,
                     const ParamInput& input) {
  int64_t rank = static_cast<int64_t>(shape.size());
  auto starts = input_ints(input, 1);
  auto ends = input_ints(input, 2);
  if (!starts || !ends) throw node_error(node, "starts and ends are required");
  if (starts->size() != ends->size()) {
    throw node_error(node, fmt::format("{} starts but {} ends", starts->size(), ends->size()));
  }
  std::vector<int64_t> axes(starts->size());
  for (size_t i = 0; i < axes.size(); ++i) axes[i] = static_cast<int64_t>(i);
  axes = input_ints(input, 3).value_or(axes);
  std::vector<int64_t> steps = input_ints(input, 4).value_or(std::vector<int64_t>{});
  if (steps.empty()) steps.assign(starts->size(), 1);
  if (axes.size() != starts->size() || steps.size() != starts->size()) {
    throw node_error(node, "starts, ends, axes and steps must have the same length");
  }
  SliceSpec spec{std::vector<int64_t>(rank, 0), std::vector<int64_t>(rank, 1), shape};
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t axis = normalize_axis(axes[i], rank, node);
    int64_t dim = shape[axis], start = (*starts)[i], end = (*ends)[i], step = steps[i];
    if (step == 0) throw node_error(node, fmt::format("step for axis {} is 0", axes[i]));
    if (dim == kUnknownDim) {
      spec.sizes[axis] = kUnknownDim;
      continue;
    }
    if (start < 0) start += dim;
    if (end < 0) end += dim;
    int64_t size;
    if (step > 0) {
      start = std::clamp<int64_t>(start, 0, dim);
      end = std::clamp<int64_t>(end, 0, dim);
      size = end > start ? ceil_div(end - start, step) : 0;
    } else {
      start = std::clamp<int64_t>(start, 0, dim - 1);
      end = std::clamp<int64_t>(end, -1, dim - 1);
      size = start > end ? ceil_div(start - end, -step) : 0;
    }
    spec.starts[axis] = start;
    spec.steps[axis] = step;
    spec.sizes[axis] = size;
  }
  return spec;
}

std::vector<int64_t> split_sizes(const OpAttrs& node, int64_t dim, size_t num_outputs,
                                 const ParamInput& input) {
  auto split = input_ints(input, 1);
  if (split) {
    if (split->size() != num_outputs) {
      throw node_error(
          node, fmt::format("split has {} entries for {} outputs", split->size(), num_outputs));
    }
    int64_t total = 0;
    for (int64_t s : *split) total += s;
    if (dim != kUnknownDim && total != dim) {
      throw node_error(
          node, fmt::format("split sizes sum to {} but the axis has {} elements", total, dim));
    }
    return *split;
  }
  int64_t n = static_cast<int64_t>(num_outputs);
  if (dim == kUnknownDim) return std::vector<int64_t>(num_outputs, kUnknownDim);
  if (dim % n != 0) {
    throw node_error(
        node, fmt::format("axis of {} elements does not split evenly into {} outputs", dim, n));
  }
  return std::vector<int64_t>(num_outputs, dim / n);
}

std::vector<int64_t> squeeze_shape(const OpAttrs& node, const std::vector<int64_t>& shape,
                                   const ParamInput& input) {
  int64_t rank = static_cast<int64_t>(shape.size());
  auto axes = input_ints(input, 1);
  std::vector<bool> drop(shape.size(), false);
  if (!axes || axes->empty()) {
    for (size_t d = 0; d < shape.size(); ++d) drop[d] = shape[d] == 1;
  } else {
    for (int64_t a : *axes) {
      int64_t d = normalize_axis(a, rank, node);
      if (shape[d] != 1 && shape[d] != kUnknownDim) {
        throw node_error(node, fmt::format("cannot squeeze axis {} of size {}", a, shape[d]));
      }
      drop[d] = true;
    }
  }
  std::vector<int64_t> out;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (!drop[d]) out.push_back(shape[d]);
  }
  return out;
}

std::vector<int64_t> unsqueeze_shape(const OpAttrs& node, const std::vector<int64_t>& shape,
                                     const ParamInput& input) {
  auto axes = input_ints(input, 1);
  if (!axes) throw node_error(node, "axes are required");
  int64_t out_rank = static_cast<int64_t>(shape.size() + axes->size());
  std::vector<bool> inserted(static_cast<size_t>(out_rank), false);
  for (int64_t a : *axes) {
    int64_t d = normalize_axis(a, out_rank, node);
    if (inserted[d]) throw node_error(node, fmt::format("axis {} is repeated", a));
    inserted[d] = true;
  }
  std::vector<int64_t> out;
  size_t next = 0;
  for (int64_t d = 0; d < out_rank; ++d) out.push_back(inserted[d] ? 1 : shape[next++]);
  return out;
}

PadSpec pad_spec(const OpAttrs& node, int64_t rank, const ParamInput& input) {
  auto pads = input_ints(input, 1);
  if (!pads) throw node_error(node, "pads are required");
  if (static_cast<int64_t>(pads->size()) != 2 * rank) {
    throw node_error(node, fmt::format("pads has {} entries, expected {}", pads->size(), 2 * rank));
  }
  PadSpec spec{std::vector<int64_t>(pads->begin(), pads->begin() + rank),
               std::vector<int64_t>(pads->begin() + rank, pads->end()),
               node.attr_string("mode", "constant")};
  if (spec.mode != "constant" && spec.mode != "reflect" && spec.mode != "edge") {
    throw node_error(node, fmt::format("unsupported pad mode '{}'", spec.mode));
  }
  return spec;
}

std::vector<int64_t> reshape_shape(const OpAttrs& node, const std::vector<int64_t>& in_shape,
                                   const std::vector<int64_t>& target) {
  bool allowzero = node.attr_int("allowzero", 0) != 0;
  std::vector<int64_t> out(target.size());
  int64_t known = 1, infer_at = -1;
  bool unknown = false;
  for (size_t i = 0; i < target.size(); ++i) {
    int64_t s = target[i];
    if (s == 0 && !allowzero) {
      if (i >= in_shape.size())
        throw node_error(
            node, fmt::format("shape entry {} is 0 but the input has rank {}", i, in_shape.size()));
      s = in_shape[i];
    } else if (s == -1) {
      if (infer_at >= 0) throw node_error(node, "shape has more than one -1");
      infer_at = static_cast<int64_t>(i);
      continue;
    } else if (s < 0) {
      throw node_error(node, fmt::format("invalid shape entry {}", s));
    }
    out[i] = s;
    if (s == kUnknownDim)
      unknown = true;
    else
      known *= s;
  }
  int64_t total = 1;
  for (int64_t d : in_shape) {
    if (d == kUnknownDim)
      unknown = true;
    else
      total *= d;
  }
  if (infer_at >= 0) {
    if (unknown) {
      out[infer_at] = kUnknownDim;
    } else if (known == 0 || total % known != 0) {
      throw node_error(node, fmt::format("cannot infer the -1 entry: {} elements into [{}]", total,
                                         fmt::join(target, ", ")));
    } else {
      out[infer_at] = total / known;
    }
  } else if (!unknown && known != total) {
    throw node_error(
        node, fmt::format("cannot reshape {} elements to [{}]", total, fmt::join(out, ", ")));
  }
  return out;
}

std::vector<int64_t> transpose_perm(const OpAttrs& node, int64_t rank) {
  std::vector<int64_t> perm(static_cast<size_t>(rank));
  for (int64_t d = 0; d < rank; ++d) perm[d] = rank - 1 - d;
  perm = node.attr_ints("perm", perm);
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  if (static_cast<int64_t>(perm.size()) != rank) {
    throw node_error(node, fmt::format("perm has {} entries for rank {}", perm.size(), rank));
  }
  for (int64_t& p : perm) {
    p = normalize_axis(p, rank, node);
    if (seen[p])
      throw node_error(node, fmt::format("perm [{}] is not a permutation", fmt::join(perm, ", ")));
    seen[p] = true;
  }
  return perm;
}

int64_t topk_k(const OpAttrs& node, const ParamInput& input) {
  const TensorData* t = input(1);
  if (!t || t->numel() != 1) throw node_error(node, "input K must be a single value");
  int64_t k = t->get_int(0);
  if (k < 0) throw node_error(node, fmt::format("k = {} is negative", k));
  return k;
}

std::pair<int64_t, int64_t> shape_range(const OpAttrs& node, int64_t rank) {
  auto clamp = [rank](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + rank : v, 0, rank); };
  int64_t start = clamp(node.attr_int("start", 0));
  int64_t end = clamp(node.attr_int("end", rank));
  return {start, std::max(start, end)};
}

int64_t range_count(const OpAttrs& node, const TensorData& start, const TensorData& limit,
                    const TensorData& delta) {
  for (const TensorData* t : {&start, &limit, &delta}) {
    if (t->numel() != 1) throw node_error(node, "start, limit and delta must be scalars");
  }
  if (start.dtype().is_float()) {
    double d = delta.get_double(0);
    if (d == 0) throw node_error(node, "delta is 0");
    return std::max<int64_t>(
        0, static_cast<int64_t>(std::ceil((limit.get_double(0) - start.get_double(0)) / d)));
  }
  int64_t d = delta.get_int(0);
  if (d == 0) throw node_error(node, "delta is 0");
  return std::max<int64_t>(0, ceil_div(limit.get_int(0) - start.get_int(0), d));
}

TensorData constant_attr_value(const OpAttrs& node) {
  if (const TensorData* t = node.attr_tensor("value")) return *t;
  auto filled = [](DataType dtype, std::vector<int64_t> shape, const auto& values) {
    TensorData t(dtype, std::move(shape));
    for (size_t i = 0; i < values.size(); ++i) {
      if (dtype.is_float()) {
        t.data<float>()[i] = static_cast<float>(values[i]);
      } else {
        t.data<int64_t>()[i] = static_cast<int64_t>(values[i]);
      }
    }
    return t;
  };
  if (node.has_attr("value_float")) {
    return filled(DataType::f32(), {}, std::vector<double>{node.attr_float("value_float", 0)});
  }
  if (node.has_attr("value_floats")) {
    auto v = node.attr_floats("value_floats", {});
    return filled(DataType::f32(), {static_cast<int64_t>(v.size())}, v);
  }
  if (node.has_attr("value_int"))
    return filled(DataType::i64(), {}, std::vector<int64_t>{node.attr_int("value_int", 0)});
  if (node.has_attr("value_ints")) {
    auto v = node.attr_ints("value_ints", {});
    return filled(DataType::i64(), {static_cast<int64_t>(v.size())}, v);
  }
  throw node_error(node, "needs a value, value_float(s) or value_int(s) attribute");
}

TensorData fill_value(const OpAttrs& node) {
  const TensorData* t = node.attr_tensor("value");
  if (!t) return TensorData(DataType::f32(), {1});
  if (t->numel() != 1) throw node_error(node, "value must have exactly one element");
  return *t;
}

bool dropout_may_train(const Graph& g, const Node& node) {
  if (node.inputs.size() < 3 || node.inputs[2] == kNoValue) return false;
  const auto& mode = g.value(node.inputs[2]).constant;
  if (mode && mode->get_int(0) == 0) return false;
  // Training with a constant ratio of 0 drops nothing: the identity again.
  const auto& ratio = node.inputs[1] != kNoValue ? g.value(node.inputs[1]).constant : std::nullopt;
  return !(ratio && ratio->get_double(0) == 0.0);
}

std::vector<std::vector<RnnActivation>> rnn_activations(const OpAttrs& node, int64_t dirs) {
  std::vector<std::string> defaults =
      node.op == OpKind::LSTM  ? std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"}
      : node.op == OpKind::GRU ? std::vector<std::string>{"Sigmoid", "Tanh"}
                               : std::vector<std::string>{"Tanh"};
  size_t per_dir = defaults.size();
  std::vector<std::string> names;
  auto it = node.attrs.find("activations");
  if (it != node.attrs.end()) {
    const auto* list = std::get_if<std::vector<std::string>>(&it->second);
    if (!list)
      throw Error(
          fmt::format("{}: attribute 'activations' must be a list of strings", node.describe()));
    names = *list;
  }
  if (names.empty()) names = defaults;
  if (names.size() == per_dir && dirs == 2) {
    std::vector<std::string> forward = names;
    names.insert(names.end(), forward.begin(), forward.end());
  }
  if (names.size() != per_dir * static_cast<size_t>(dirs)) {
    throw Error(fmt::format("{}: {} activations given, expected {}", node.describe(), names.size(),
                            per_dir * dirs));
  }
  std::vector<double> alphas = node.attr_floats("activation_alpha", {}),
                      betas = node.attr_floats("activation_beta", {});
  size_t next_alpha = 0, next_beta = 0;
  std::vector<std::vector<RnnActivation>> out(static_cast<size_t>(dirs));
  for (size_t i = 0; i < names.size(); ++i) {
    const std::string& n = names[i];
    // ONNX's activation functions: the op computing each, whether it takes alpha and beta, and
    // their defaults.
    using K = OpKind;
    static const std::map<std::string, RnnActivation> kActivations = {
        {"Sigmoid", {"Sigmoid", K::Sigmoid}},
        {"Tanh", {"Tanh", K::Tanh}},
        {"Relu", {"Relu", K::Relu}},
        {"Affine", {"Affine", std::nullopt, true, true, 1.0, 0.0}},
        {"LeakyRelu", {"LeakyRelu", K::LeakyRelu, true, false, 0.01}},
        {"ThresholdedRelu", {"ThresholdedRelu", K::ThresholdedRelu, true, false, 1.0}},
        {"ScaledTanh", {"ScaledTanh", std::nullopt, true, true, 1.0, 1.0}},
        {"HardSigmoid", {"HardSigmoid", K::HardSigmoid, true, true, 0.2, 0.5}},
        {"Elu", {"Elu", K::Elu, true, false, 1.0}},
        {"Softsign", {"Softsign", K::Softsign}},
        {"Softplus", {"Softplus", K::Softplus}}};
    auto d = kActivations.find(n);
    if (d == kActivations.end())
      throw Error(fmt::format("{}: unsupported activation '{}'", node.describe(), n));
    RnnActivation a = d->second;
    if (a.takes_alpha && next_alpha < alphas.size()) a.alpha = alphas[next_alpha++];
    if (a.takes_beta && next_beta < betas.size()) a.beta = betas[next_beta++];
    out[i / per_dir].push_back(a);
  }
  return out;
}

}  // namespace tessel::graph::ops
