#include "ir/ops/shape_util.h"

#include <fmt/format.h>

#include "ir/error.h"

namespace tessel::graph::ops {

std::vector<int64_t> broadcast_shapes(const std::vector<int64_t>& a, const std::vector<int64_t>& b,
                                      const Node& node) {
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

int64_t normalize_axis(int64_t axis, int64_t rank, const Node& node) {
  if (axis < -rank || axis >= rank) {
    throw Error(fmt::format("{}: axis {} is out of range for rank {}", node.describe(), axis, rank));
  }
  return axis < 0 ? axis + rank : axis;
}

bool has_input(const Node& node, size_t i) { return i < node.inputs.size() && node.inputs[i] != kNoValue; }

const TensorType& input_type(const Graph& g, const Node& node, size_t i) {
  if (!has_input(node, i)) throw Error(fmt::format("{}: input {} is required", node.describe(), i));
  return g.value(node.inputs[i]).type;
}

const TensorData* constant_input(const Graph& g, const Node& node, size_t i) {
  if (!has_input(node, i)) return nullptr;
  const auto& c = g.value(node.inputs[i]).constant;
  return c ? &*c : nullptr;
}

std::vector<int64_t> constant_ints(const Graph& g, const Node& node, size_t i, const char* what) {
  const TensorData* t = constant_input(g, node, i);
  if (!t) {
    throw Error(fmt::format("{}: input {} ({}) must be a constant once input shapes are known", node.describe(), i,
                            what));
  }
  std::vector<int64_t> out(static_cast<size_t>(t->numel()));
  for (int64_t k = 0; k < t->numel(); ++k) out[k] = t->get_int(k);
  return out;
}

}  // namespace tessel::graph::ops
