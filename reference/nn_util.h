// Private helpers of the nn and sequence reference ops: tensors as flat double vectors and back
// (element access from ref_util.h), and the per-file op lists that nn.cc / sequence.cc join.
#pragma once

#include <cstdint>
#include <vector>

#include "reference/ref_util.h"
#include "reference/reference.h"

namespace tessel::reference::nn {

// All elements converted to double (float16 and integers included).
std::vector<double> to_doubles(const TensorData& t);
// A tensor of `dtype` holding `values` (converted as ref_util's set_f does).
TensorData from_doubles(DataType dtype, std::vector<int64_t> shape,
                        const std::vector<double>& values);
// The product of dims[begin, end).
int64_t product(const std::vector<int64_t>& dims, size_t begin, size_t end);

std::vector<RefOp> conv_pool_ref_ops();  // reference/nn_conv.cc: Conv, ConvTranspose, pools
std::vector<RefOp> norm_ref_ops();    // reference/nn_norm.cc: normalizations, LRN, Softmax family
std::vector<RefOp> rnn_ref_ops();     // reference/sequence_rnn.cc: LSTM, GRU, RNN
std::vector<RefOp> resize_ref_ops();  // reference/sequence_resize.cc: Resize

}  // namespace tessel::reference::nn
