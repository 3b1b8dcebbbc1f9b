// Keeps chains of packed convs in the blocked activation layout NCHW[b]c (ir/ops/conv_packing.h),
// TVM's AlterOpLayout idea: ConvNCHWc and ConvWinograd read and write blocks, MaxPool and
// AveragePool pool them,
// the global pools read them, and elementwise ops and channel Concats run on them unchanged (their
// per-channel constants reshaped to blocks). A packed conv then stores whole vectors instead of
// unpacking its register tile, and its readers load blocks of channels.
//
// Values fall into classes that must share one layout: an elementwise op's activations and its
// output, a windowed pool's input and output, a Concat's inputs and output. A class turns blocked
// when every reader and writer of its values handles blocks, none of them is a graph input or
// output, and it touches a ConvNCHWc or ConvWinograd (else nothing gains). Channels that leave
// the last block padded count as handled only where a packed conv writes them (the padding zero,
// its bias padded) and elementwise ops without per-channel constants or global pools (given
// "output_channels") read them. So layouts change only inside those convs and the global pools,
// never in a transform kernel of their own. A depthwise Conv, or a packable one that
// pack_conv_weights left direct, becomes ConvNCHWc when both its input and its output are blocked.
// Requires: typed graph, winograd_conv, pack_conv_weights. Guarantees: same outputs; the graph's
// inputs and outputs keep their layouts.
#pragma once

#include "codegen/cpu_model.h"
#include "ir/graph.h"

namespace tessel::passes {

// Blocks of passes::conv_channel_block(cpu) channels, as pack_conv_weights packed for `cpu`.
void alter_op_layout(graph::Graph& g, const CpuModel& cpu);

}  // namespace tessel::passes
