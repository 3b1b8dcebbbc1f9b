// The op table is assembled from one list per operator family (ir/op_table.cc).
#pragma once

#include <vector>

#include "ir/op_table.h"

namespace tessel::graph::ops {

std::vector<OpDef>
elementwise_defs();  // ir/ops/elementwise.cc: unary/binary math, compare, logic, Where, Clip, Cast
std::vector<OpDef> reduce_defs();  // ir/ops/reduce.cc: Reduce*, ArgMax/ArgMin, CumSum, TopK
std::vector<OpDef>
tensor_defs();  // ir/ops/tensor.cc: Reshape, Transpose, Concat, Slice, Gather, Pad, Shape, ...
std::vector<OpDef>
nn_defs();  // ir/ops/nn.cc: Conv, ConvTranspose, Gemm, MatMul, pools, norms, Softmax, ...
std::vector<OpDef> sequence_defs();  // ir/ops/sequence.cc: LSTM, GRU, RNN, Resize, Einsum, If
std::vector<OpDef>
loss_defs();  // ir/ops/loss.cc: NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss

}  // namespace tessel::graph::ops
