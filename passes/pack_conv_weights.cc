#include "passes/pack_conv_weights.h"

#include <map>
#include <string>

#include "ir/ops/conv_packing.h"

namespace tessel::passes {

// Vectors along the width waste the lanes past the row's end; channel vectors waste none, but the
// epilogue unpacks their blocks with one scalar move per output, which only a long enough
// reduction amortizes. Measured (bench/tune_bench kernels, AVX-512, GFLOP/s fallback/tuned, direct
// -> packed): ResNet-50 3x3 convs at width 7: 140/159 -> 209/213, 14: 199/200 -> 212/218, 28:
// 180/192 -> 201/214, 56: 200/208 -> 186/211; 1x1 at width 28 with 256 channels: 162/163 -> 166/217.
// At widths of whole vectors (ResNet-style 32 and 16, 16 channels) packed ran 3x slower.
bool prefers_channel_vectors(int64_t width, int64_t reduction) {
  return width % kConvChannelBlock != 0 && reduction >= 256;
}

void pack_conv_weights(graph::Graph& g) {
  std::map<graph::ValueId, graph::ValueId> packed_of;  // convs sharing weights share the packed copy
  for (graph::Node& node : g.nodes) {
    if (node.op_type != "Conv" || node.attr_int("group", 1) != 1 || node.inputs.size() < 2) continue;
    const graph::Value& w = g.value(node.inputs[1]);
    const graph::TensorType& y = g.value(node.outputs[0]).type;
    if (!w.constant || w.constant->shape().size() < 3 || w.constant->shape()[0] % kConvChannelBlock != 0 ||
        !w.type.dtype.is_float() || !y.is_static()) {
      continue;
    }
    int64_t reduction = w.constant->numel() / w.constant->shape()[0];
    if (!prefers_channel_vectors(y.shape.back(), reduction)) continue;
    auto [it, fresh] = packed_of.emplace(node.inputs[1], graph::kNoValue);
    if (fresh) {
      graph::TensorData packed = graph::ops::pack_output_channels(*w.constant, kConvChannelBlock);
      it->second = g.add_constant(w.name + "_packed", std::move(packed));  // may move g's values: w is dead
    }
    node.inputs[1] = it->second;
    node.op_type = "ConvNCHWc";
    node.attrs.erase("group");
  }
}

}  // namespace tessel::passes
