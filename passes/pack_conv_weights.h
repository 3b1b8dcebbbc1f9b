// Conv with group 1 and constant weights becomes ConvNCHWc, Tessel's packed convolution, when its
// output rows are not whole vectors (the direct template's vector axis is the width), it strides
// along the width, or the target's register file is too small for the direct template's tile
// (prefers_channel_vectors): the weights are packed once, at compile time, into blocks of output
// channels of one vector each (conv_channel_block; see ir/ops/conv_packing.h), and the kernel
// vectorizes over those channels instead.
// Tuning records can overrule that rule for each conv (ConvLayoutChoice): tuning measures both
// forms. Requires: typed graph. Guarantees: same outputs; the old constant stays for its other
// readers.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "codegen/cpu_model.h"
#include "ir/graph.h"

namespace tessel::passes {

// Channels per packed block of weights and of blocked activations (passes/alter_op_layout) on
// `cpu`: whole vectors of float32, one with 32 registers (16 channels with AVX-512, 4 with NEON),
// two with 16 (16 with AVX2); the .cc has the measurements.
int64_t conv_channel_block(const CpuModel& cpu);

// Whether a Conv whose output rows are `width` wide, whose outputs each sum `channels` x `window`
// products (input channels x kernel points) and whose stride along the width is `stride` computes
// faster with channel vectors on `cpu` (see the .cc for the measurements).
bool prefers_channel_vectors(int64_t width, int64_t channels, int64_t window, int64_t stride,
                             const CpuModel& cpu);

// Whether `node` can become ConvNCHWc: a Conv with group 1, constant float weights of rank >= 3
// whose output channels are whole blocks (or enough blocks that padding the last costs little),
// and a static output type.
bool is_packable(const graph::Graph& g, const graph::Node& node, int64_t block);
// prefers_channel_vectors for a packable Conv.
bool rule_prefers_packed(const graph::Graph& g, const graph::Node& conv, const CpuModel& cpu);
// The type of a packable Conv's weights once packed.
graph::TensorType packed_weight_type(const graph::Graph& g, const graph::Node& conv, int64_t block);
// A packable Conv's attributes once packed: no group, and "output_channels" when the last block is
// padded.
std::map<std::string, graph::Attr> packed_attrs(const graph::Graph& g, const graph::Node& conv,
                                                int64_t block);

// For a packable Conv, given what rule_prefers_packed says for the pass's target: whether it
// becomes ConvNCHWc.
using ConvLayoutChoice =
    std::function<bool(const graph::Graph&, const graph::Node& conv, bool rule)>;

// The packed copy of each weights value: convs sharing weights share it.
using PackedWeights = std::map<graph::ValueId, graph::ValueId>;
// Makes `conv` ConvNCHWc: its weights packed in blocks of `block` output channels (once per value
// in `packed_of`), and, for group 1, packed_attrs. A depthwise conv keeps its group
// (passes/alter_op_layout packs those).
void pack_conv(graph::Graph& g, graph::Node& conv, int64_t block, PackedWeights& packed_of);

// Packs the packable convs that `choose` (unset: rule_prefers_packed for `cpu`) picks.
void pack_conv_weights(graph::Graph& g, const CpuModel& cpu, const ConvLayoutChoice& choose = {});

}  // namespace tessel::passes
