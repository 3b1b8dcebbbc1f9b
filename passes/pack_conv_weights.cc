#include "passes/pack_conv_weights.h"

#include <string>

#include "ir/ops/conv_packing.h"

namespace tessel::passes {

// Vectors along the width waste the lanes past the row's end; channel vectors waste none, but the
// epilogue unpacks their blocks with one scalar move per output, which only a long reduction
// amortizes. Measured (bench/tune_bench kernels, AVX-512, GFLOP/s direct -> packed): 3x3 convs of
// ResNet-50 at width 7: 140 -> 205, 14: 199 -> 210, 28: 180 -> 207, 56 (64 channels): 200 -> 190;
// 1x1 convs at 56 with 64 channels: 210 -> 134, at 28 with 32: 186 -> 106, with 256: 162 -> 166.
bool prefers_channel_vectors(int64_t width, int64_t reduction) {
  if (width % kConvChannelBlock == 0) return false;
  int64_t padded = (width + kConvChannelBlock - 1) / kConvChannelBlock * kConvChannelBlock;
  bool mostly_wasted = 2 * width < padded;
  return reduction >= (mostly_wasted ? 256 : 1024);
}

void pack_conv_weights(graph::Graph& g) {
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
    std::string name = w.name + "_packed";
    graph::TensorData packed = graph::ops::pack_output_channels(*w.constant, kConvChannelBlock);
    node.inputs[1] = g.add_constant(name, std::move(packed));  // may move g's values: w is not used after
    node.op_type = "ConvNCHWc";
    node.attrs.erase("group");
  }
}

}  // namespace tessel::passes
