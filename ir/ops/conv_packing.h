// The weight layout of ConvNCHWc, Tessel's internal packed convolution (passes/pack_conv_weights
// produces it; ONNX models never contain it), and the blocked activation layout that
// passes/alter_op_layout gives chains of packed convs. Its weights are Conv's [O, C, k...] blocked
// by output channel, [O / b, C, k..., b], so that b output channels are one contiguous vector. When
// O is not a multiple of b, the last block is padded with zero weights and the node's
// "output_channels" attribute keeps O.
#pragma once

#include "ir/graph.h"

namespace tessel::graph::ops {

// `channels` rounded up to whole blocks of `block`.
inline int64_t padded_channels(int64_t channels, int64_t block) {
  return (channels + block - 1) / block * block;
}

// [O, C, k...] -> [ceil(O / block), C, k..., block], the channels past O zero.
std::vector<int64_t> packed_output_channels_shape(const std::vector<int64_t>& shape, int64_t block);
TensorData pack_output_channels(const TensorData& w, int64_t block);

// The inverse: [O' / b, C, k..., b] -> [O, C, k...], the first `channels` of the O' packed ones
// (all of them when negative).
TensorData unpack_output_channels(const TensorData& packed, int64_t channels = -1);

// Activations blocked by channel, NCHW[b]c: [N, C, s...] <-> [N, ceil(C / b), s..., b], the last
// block's channels past C zero when b does not divide C (unblocked, they are channels of their
// own: a global pool's "output_channels" keeps C). A node that reads its X (input 0) in this layout
// has the attribute "input_block" = b, one that writes its Y (output 0) so "output_block" = b
// (ConvNCHWc, ConvWinograd, MaxPool, AveragePool; the global pools read blocks and write NCHW).
// Elementwise ops and Concat over axis 1 need no attribute.
std::vector<int64_t> blocked_channels_shape(const std::vector<int64_t>& nchw, int64_t block);
std::vector<int64_t> unblocked_channels_shape(const std::vector<int64_t>& blocked);
TensorData block_channels(const TensorData& x, int64_t block);
TensorData unblock_channels(const TensorData& x);
// [N, C, s...] -> [N, channels, s...]: the first channels of x, then zeros.
TensorData resize_channels(const TensorData& x, int64_t channels);
int64_t input_block(const Node& node);   // 0: NCHW
int64_t output_block(const Node& node);  // 0: NCHW
// The ops that take each attribute; check_channel_blocks throws an Error naming any other node
// that has one.
bool reads_channel_blocks(OpKind op);
bool writes_channel_blocks(OpKind op);
void check_channel_blocks(const Node& node);

}  // namespace tessel::graph::ops
