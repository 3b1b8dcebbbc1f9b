#include "ir/ops/shape_util.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <optional>

#include "ir/error.h"

namespace tessel::graph::ops {

std::vector<int64_t> broadcast_shapes(const std::vector<int64_t>& a, const std::vector<int64_t>& b,
                                      const OpAttrs& node) {
  size_t rank = std::max(a.size(), b.size());
  std::vector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t x = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t y = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (x == 1) {
      out[i] = y;
    } else if (y == 1 || x == y) {
      out[i] = x;
    } else if (x == kUnknownDim || y == kUnknownDim) {
      out[i] = x == kUnknownDim ? y : x;
    } else {
      throw Error(fmt::format("{}: shapes [{}] and [{}] do not broadcast", node.describe(),
                              fmt::join(a, ", "), fmt::join(b, ", ")));
    }
  }
  return out;
}

int64_t normalize_axis(int64_t axis, int64_t rank, const OpAttrs& node) {
  if (axis < -rank || axis >= rank) {
    throw Error(
        fmt::format("{}: axis {} is out of range for rank {}", node.describe(), axis, rank));
  }
  return axis < 0 ? axis + rank : axis;
}

bool has_input(const Node& node, size_t i) {
  return i < node.inputs.size() && node.inputs[i] != kNoValue;
}

const TensorType& input_type(const Graph& g, const Node& node, size_t i) {
  if (!has_input(node, i)) throw Error(fmt::format("{}: input {} is required", node.describe(), i));
  return g.value(node.inputs[i]).type;
}

void require_same_dtype(const Graph& g, const Node& node, const std::vector<size_t>& inputs) {
  std::optional<size_t> first;
  for (size_t i : inputs) {
    if (!has_input(node, i)) continue;
    if (!first) {
      first = i;
      continue;
    }
    const Value& a = g.value(node.inputs[*first]);
    const Value& b = g.value(node.inputs[i]);
    if (a.type.dtype != b.type.dtype) {
      throw Error(fmt::format(
          "{}: input {} ('{}') is {} but input {} ('{}') is {}; they must have the same "
          "element type",
          node.describe(), i, b.name, b.type.dtype.str(), *first, a.name, a.type.dtype.str()));
    }
  }
}

const TensorData* constant_input(const Graph& g, const Node& node, size_t i) {
  if (!has_input(node, i)) return nullptr;
  const auto& c = g.value(node.inputs[i]).constant;
  return c ? &*c : nullptr;
}

const TensorData& required_constant(const Graph& g, const Node& node, size_t i,
                                    const std::string& what) {
  const TensorData* t = constant_input(g, node, i);
  if (t) return *t;
  input_type(g, node, i);  // an Error when the input is omitted
  ValueId v = node.inputs[i];
  std::vector<std::string> names;
  for (ValueId in : g.input_ancestors(v)) names.push_back(g.value(in).name);
  std::string from =
      names.empty()
          ? ""
          : fmt::format(
                "; it is computed from the graph input(s) {} (bind them as constants to compile)",
                fmt::join(names, ", "));
  throw ConstantRequiredError(
      fmt::format("{}: input {} ('{}', {}) must be a constant once input shapes are known{}",
                  node.describe(), i, g.value(v).name, what, from),
      std::move(names));
}

std::vector<int64_t> constant_ints(const Graph& g, const Node& node, size_t i, const char* what) {
  const TensorData& t = required_constant(g, node, i, what);
  std::vector<int64_t> out(static_cast<size_t>(t.numel()));
  for (int64_t k = 0; k < t.numel(); ++k) out[k] = t.get_int(k);
  return out;
}

}  // namespace tessel::graph::ops
