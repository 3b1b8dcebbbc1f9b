// The reference implementations, one list per operator family (same families as ir/ops/).
#pragma once

#include <vector>

#include "reference/reference.h"

namespace tessel::reference {

std::vector<RefOp> elementwise_ref_ops();  // reference/elementwise.cc
std::vector<RefOp> reduce_ref_ops();       // reference/reduce.cc
std::vector<RefOp> tensor_ref_ops();       // reference/tensor.cc
std::vector<RefOp> nn_ref_ops();           // reference/nn.cc
std::vector<RefOp>
sequence_ref_ops();  // reference/sequence.cc (LSTM, GRU, RNN, Resize, Einsum, If)
std::vector<RefOp>
loss_ref_ops();  // reference/loss.cc (NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss)

}  // namespace tessel::reference
