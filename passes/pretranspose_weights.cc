#include "passes/pretranspose_weights.h"

#include <map>
#include <string>

#include "ir/ops/conv_packing.h"

namespace tessel::passes {

namespace {

// A 2-D tensor's transpose: [rows, cols] packed into one block of all its rows is [1, cols, rows].
graph::TensorData transposed(const graph::TensorData& t) {
  return graph::ops::pack_output_channels(t, t.shape()[0]).reshaped({t.shape()[1], t.shape()[0]});
}

}  // namespace

void pretranspose_weights(graph::Graph& g) {
  std::map<graph::ValueId, graph::ValueId> transposed_of;  // Gemms sharing B share B^T
  for (graph::Node& node : g.nodes) {
    if (node.op != graph::OpKind::Gemm || node.attr_int("transB", 0) == 0 || node.inputs.size() < 2)
      continue;
    const graph::Value& b = g.value(node.inputs[1]);
    if (!b.constant || b.constant->shape().size() != 2 || b.constant->nbytes() == 0) continue;
    auto [it, fresh] = transposed_of.emplace(node.inputs[1], graph::kNoValue);
    if (fresh)
      it->second =
          g.add_constant(b.name + "_transposed", transposed(*b.constant));  // b is dead after
    node.inputs[1] = it->second;
    node.attrs.erase("transB");
  }
}

}  // namespace tessel::passes
