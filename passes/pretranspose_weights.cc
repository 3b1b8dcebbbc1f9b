#include "passes/pretranspose_weights.h"

#include <cstring>
#include <map>
#include <string>

namespace tessel::passes {

namespace {

// A 2-D tensor's transpose, element by element (any dtype: elements move as bytes).
graph::TensorData transposed(const graph::TensorData& t) {
  int64_t rows = t.shape()[0], cols = t.shape()[1];
  graph::TensorData out(t.dtype(), {cols, rows});
  size_t bytes = static_cast<size_t>(t.dtype().bytes());
  const char* src = static_cast<const char*>(t.raw());
  char* dst = static_cast<char*>(out.raw());
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      std::memcpy(dst + static_cast<size_t>(c * rows + r) * bytes, src + static_cast<size_t>(r * cols + c) * bytes,
                  bytes);
    }
  }
  return out;
}

}  // namespace

void pretranspose_weights(graph::Graph& g) {
  std::map<graph::ValueId, graph::ValueId> transposed_of;  // Gemms sharing B share B^T
  for (graph::Node& node : g.nodes) {
    if (node.op_type != "Gemm" || node.attr_int("transB", 0) == 0 || node.inputs.size() < 2) continue;
    const graph::Value& b = g.value(node.inputs[1]);
    if (!b.constant || b.constant->shape().size() != 2 || b.constant->nbytes() == 0) continue;
    auto [it, fresh] = transposed_of.emplace(node.inputs[1], graph::kNoValue);
    if (fresh) it->second = g.add_constant(b.name + "_transposed", transposed(*b.constant));  // b is dead after
    node.inputs[1] = it->second;
    node.attrs.erase("transB");
  }
}

}  // namespace tessel::passes
