#include "passes/pack_conv_weights.h"

#include <map>
#include <string>

#include "ir/ops/conv_packing.h"

namespace tessel::passes {

// Vectors along the width waste the lanes past the row's end; channel vectors waste none, but the
// epilogue unpacks their blocks with one scalar move per output, which only a long enough
// reduction amortizes. Measured (bench/tune_bench kernels, AVX-512, GFLOP/s fallback/tuned, direct
// -> packed): ResNet-50 3x3 convs at width 7: 140/159 -> 209/213, 14: 199/200 -> 212/218, 28:
// 180/192 -> 201/214, 56: 200/208 -> 186/211; 1x1 at width 28 with 256 channels: 162/163 ->
// 166/217. A stride along the width makes the direct template gather every stride-th input column
// into vectors (a phase split of the input); channel vectors broadcast one input element at a time
// and need none: 1x1 stride 2, 16 -> 32 channels at 32x32: 35 -> 118; 3x3 stride 2 at 32x32 and
// ResNet-50's 7x7 stride 2 stem: equal within noise (130 and 200). Since the packed fallback
// blocks two channel blocks per tile, reductions from 128 pay too (whole models at one thread,
// AVX-512, threshold 256 -> 128: MobileNetV2 7.0 -> 6.7 ms, SqueezeNet 6.6 -> 6.1, the others
// equal within noise); packing every conv of a row that is not whole vectors made MobileNetV2
// slower (7.0 -> 7.3). A 1x1 conv packs from 64 channels (Intel Xeon, Emerald Rapids, threshold 128
// -> 64, kernels timed in the model, per-kernel minimum of 5 rounds in turns): ResNet-50 0.89x the
// time at one thread and 0.86x at two, its 56x56 stage blocked throughout (its 256 -> 64 convs had
// unpacked their output for the 64 -> 256 ones: 1.70 -> 0.76 ms); SqueezeNet 0.86x (its stem, max
// pool and first squeeze blocked); DenseNet-121 equal; MobileNetV2 unchanged.
// With 16 vector registers the direct template's tile is 8 rows of one vector, two FMA chains per
// pipe on Zen 3, and channel vectors pay whatever the width from a reduction of 24 (Zen 3, AVX2,
// one thread, `tessel tune --trials 1`, direct -> packed: MobileNetV2's 1x1 convs 96 -> 576 at
// 14x14 0.70 -> 0.30 ms, 64 -> 384 0.31 -> 0.15, 32 -> 192 at 28x28 0.25 -> 0.18, 24 -> 144 at
// 56x56 0.56 -> 0.47, 32 -> 16 at 112x112 0.33 -> 0.26; 16 -> 96 at 112x112 0.86 -> 1.11). A 1x1
// conv's direct tile is two vectors wide there (topi/schedule_nn.cc), and it packs from 64
// channels: direct -> packed, 24 -> 144 at 56x56 0.44 -> 0.57 ms, 32 -> 16 at 112x112 0.25 -> 0.31,
// 32 -> 192 at 28x28 0.19 -> 0.19; at 64 channels mixed (ResNet-50's 64 -> 256 at 56x56 1.71
// -> 2.15, DenseNet-121's 64 -> 128 0.86 -> 0.79), from 96 packed (96 -> 128 1.42 -> 1.11). In
// MobileNetV2's profile (kernels timed in the model) the two convs that turned direct moved less:
// 24 -> 144 0.41 -> 0.38-0.39 ms, 32 -> 16 0.24 -> 0.26. With 32 registers a 1x1 conv packs from
// 16 channels whatever the width, and output channels pad to whole blocks when a quarter of those
// computed are padding (pads_little): MobileNetV2's 1x1 convs at 112x112 and 56x56 had run direct
// at 56-110 GFLOP/s where ONNX Runtime's blocked ones took 0.51-0.72x their time (its 144 -> 24
// projection with the residual add: 0.387 against 0.199 ms). Intel Xeon (Emerald Rapids), `tessel
// run --print-time` in turns, minimum of 4 rounds: MobileNetV2 6.31 -> 5.64 ms at one thread,
// 3.85 -> 3.17 at two; SqueezeNet 5.12 -> 4.99 and 3.62 -> 3.03; ResNet-18, ResNet-50 and
// DenseNet-121 unchanged (the same graphs). With padding alone (AVX2 code, `-mcpu=haswell`):
// MobileNetV2 11.49 -> 11.22 and 6.89 -> 6.07.
bool prefers_channel_vectors(int64_t width, int64_t channels, int64_t window, int64_t stride,
                             const CpuModel& cpu) {
  if (stride > 1) return true;
  if (cpu.vector_registers < 32) return window == 1 ? channels >= 64 : channels * window >= 24;
  if (window == 1) return channels >= 16;
  return width % cpu.lanes(DataType::f32()) != 0 && channels * window >= 128;
}

// One vector of float32 with 32 registers, two with fewer. On AVX2 (Zen 3, one thread) blocks of
// 8 channels, whose tiles span two blocks (two weight streams), ran slower than blocks of 16 with
// the same 12 accumulators: LLVM spilled the 2 x 6 tiles of 1x1 convs (MobileNetV2's 144 -> 32 at
// 28x28 46 GFLOP/s, 87 with 2 x 5), and with 2 x 5 and 3 x 3 tiles SqueezeNet, ResNet-50 and
// DenseNet-121 ran 1.15x, 1.06x and 1.2x longer (MobileNetV2 equal: its 24-channel layers gained).
int64_t conv_channel_block(const CpuModel& cpu) {
  return cpu.lanes(DataType::f32()) * (cpu.vector_registers < 32 ? 2 : 1);
}

// Output channels that do not fill whole blocks are padded with zero weights when at most a
// quarter of the channels computed are padding (SqueezeNet's 1000-class conv: 1008 computed;
// MobileNetV2's 24-channel projections: 32).
bool pads_little(int64_t channels, int64_t block) {
  int64_t padded = (channels + block - 1) / block * block;
  return 4 * (padded - channels) <= padded;
}

bool is_packable(const graph::Graph& g, const graph::Node& node, int64_t block) {
  if (node.op != graph::OpKind::Conv || node.attr_int("group", 1) != 1 || node.inputs.size() < 2)
    return false;
  const graph::Value& w = g.value(node.inputs[1]);
  if (!w.constant || w.constant->shape().size() < 3) return false;
  int64_t channels = w.constant->shape()[0];
  return pads_little(channels, block) && w.type.dtype.is_float() &&
         g.value(node.outputs[0]).type.is_static();
}

bool rule_prefers_packed(const graph::Graph& g, const graph::Node& conv, const CpuModel& cpu) {
  const graph::TensorData& w = *g.value(conv.inputs[1]).constant;
  std::vector<int64_t> strides = conv.attr_ints("strides", {});
  return prefers_channel_vectors(g.value(conv.outputs[0]).type.shape.back(), w.shape()[1],
                                 w.numel() / w.shape()[0] / w.shape()[1],
                                 strides.empty() ? 1 : strides.back(), cpu);
}

graph::TensorType packed_weight_type(const graph::Graph& g, const graph::Node& conv,
                                     int64_t block) {
  graph::TensorType t = g.value(conv.inputs[1]).type;
  t.shape = graph::ops::packed_output_channels_shape(t.shape, block);
  return t;
}

std::map<std::string, graph::Attr> packed_attrs(const graph::Graph& g, const graph::Node& conv,
                                                int64_t block) {
  std::map<std::string, graph::Attr> attrs = conv.attrs;
  attrs.erase("group");
  int64_t channels = g.value(conv.inputs[1]).type.shape[0];
  if (channels % block != 0) attrs["output_channels"] = graph::Attr(channels);
  return attrs;
}

void pack_conv(graph::Graph& g, graph::Node& conv, int64_t block, PackedWeights& packed_of) {
  auto [it, fresh] = packed_of.emplace(conv.inputs[1], graph::kNoValue);
  if (fresh) {
    const graph::Value& w = g.value(conv.inputs[1]);
    graph::TensorData packed = graph::ops::pack_output_channels(*w.constant, block);
    it->second =
        g.add_constant(w.name + "_packed", std::move(packed));  // may move g's values: w is dead
  }
  if (conv.attr_int("group", 1) == 1) conv.attrs = packed_attrs(g, conv, block);
  conv.inputs[1] = it->second;
  conv.op = graph::OpKind::ConvNCHWc;
}

void pack_conv_weights(graph::Graph& g, const CpuModel& cpu, const ConvLayoutChoice& choose) {
  PackedWeights packed_of;
  int64_t block = conv_channel_block(cpu);
  for (graph::Node& node : g.nodes) {
    if (!is_packable(g, node, block)) continue;
    bool rule = rule_prefers_packed(g, node, cpu);
    if (choose ? choose(g, node, rule) : rule) pack_conv(g, node, block, packed_of);
  }
}

}  // namespace tessel::passes
