#include "passes/winograd_conv.h"

#include <map>

#include "ir/ops/nn_window.h"
#include "ir/ops/winograd.h"
#include "passes/pack_conv_weights.h"

namespace tessel::passes {

// Measured on ResNet-50 at one thread (AVX-512, Zen 5), direct (packed) -> Winograd, ms per conv:
// 56 x 56, 64 channels: 1.23 -> 0.59 (m = 4; m = 2: 1.40-1.49); 28 x 28, 128: 1.21-1.25 ->
// 0.56-0.59 (m = 4; m = 2: 0.87-0.93); 14 x 14, 256: 1.27-1.28 -> 0.96-1.01 (m = 2, 49 tiles; m =
// 4: 1.16-1.20); 7 x 7, 512: 1.64 -> 1.8 (m = 2, 16 tiles) or 2.1 (m = 4, 4 tiles), so those stay
// direct. SqueezeNet's expand convs: 55 x 55, 16 -> 64: 0.36 -> 0.21-0.29; 27 x 27, 32 -> 128: 0.33
// -> 0.15-0.17; 13 x 13, 48 -> 192: 0.18 -> 0.13 (m = 2); 64 -> 256: 0.30 -> 0.24 (m = 2; 0.32 with
// m = 4).
constexpr int64_t kMinTiles = 32;
constexpr int64_t kMinOutputChannels = 64;

namespace {

graph::ops::WindowGeometry conv_geometry(const graph::Graph& g, const graph::Node& conv) {
  const graph::TensorType& x = g.value(conv.inputs[0]).type;
  return graph::ops::window_geometry(conv, {x.shape[2], x.shape[3]}, {3, 3}, false);
}

}  // namespace

int64_t winograd_tile_size(const graph::Graph& g, const graph::Node& node, int64_t block) {
  if (node.op != graph::OpKind::Conv || node.attr_int("group", 1) != 1 || node.inputs.size() < 2)
    return 0;
  const graph::Value& w = g.value(node.inputs[1]);
  const graph::TensorType& x = g.value(node.inputs[0]).type;
  const graph::TensorType& y = g.value(node.outputs[0]).type;
  if (!w.constant || w.type.dtype != DataType::f32() || !y.is_static() || !x.is_static() ||
      x.shape.size() != 4)
    return 0;
  const std::vector<int64_t>& ws = w.constant->shape();
  // Fewer input channels than a block leave the GEMMs too short a reduction (a stem conv's 3).
  // Fewer output channels than kMinOutputChannels leave too few GEMM products to pay for the
  // transformed input, which is (m + 2)^2 / m^2 times the input's size and written and read once:
  // DenseNet-121, whose 3x3 convs are 128 -> 32 channels, took 83 ms against 38.6 as a whole
  // model at one thread with them as Winograd convs (not analysed further).
  if (ws.size() != 4 || ws[2] != 3 || ws[3] != 3 || ws[0] % block != 0 ||
      ws[0] < kMinOutputChannels || ws[1] < block)
    return 0;
  graph::ops::WindowGeometry geo = conv_geometry(g, node);
  if (geo.strides != std::vector<int64_t>{1, 1} || geo.dilations != std::vector<int64_t>{1, 1})
    return 0;
  // m = 4 needs 4x fewer products than the direct conv, m = 2 2.25x fewer; 4 unless its tiles
  // overhang the output by more than 10% beyond 2's (13 x 13 and 14 x 14 maps).
  auto covered = [&](int64_t m) {
    return (geo.out[0] + m - 1) / m * m * ((geo.out[1] + m - 1) / m * m);
  };
  int64_t m = 10 * covered(4) <= 11 * covered(2) ? 4 : 2;
  // The GEMMs read each transformed weight once per tile of an image, and those weights are
  // (m + 2)^2 / 9 times the conv's: with few tiles their memory traffic costs more than the
  // products saved.
  return covered(m) / (m * m) >= kMinTiles ? m : 0;
}

void winograd_conv(graph::Graph& g, const CpuModel& cpu) {
  std::map<std::pair<graph::ValueId, int64_t>, graph::ValueId> transformed_of;
  int64_t block = conv_channel_block(cpu);
  for (graph::Node& node : g.nodes) {
    int64_t m = winograd_tile_size(g, node, block);
    if (m == 0) continue;
    graph::ops::WindowGeometry geo = conv_geometry(g, node);
    auto [it, fresh] = transformed_of.emplace(std::make_pair(node.inputs[1], m), graph::kNoValue);
    if (fresh) {
      const graph::Value& w = g.value(node.inputs[1]);
      graph::TensorData u = graph::ops::winograd_weights(*w.constant, m, block);
      it->second = g.add_constant(w.name + "_winograd" + std::to_string(m), std::move(u));
    }
    std::vector<int64_t> pads = geo.pads_begin;
    pads.insert(pads.end(), geo.pads_end.begin(), geo.pads_end.end());
    node.attrs = {{"pads", graph::Attr(pads)}, {"tile_size", graph::Attr(m)}};
    node.inputs[1] = it->second;
    node.op = graph::OpKind::ConvWinograd;
  }
}

}  // namespace tessel::passes
