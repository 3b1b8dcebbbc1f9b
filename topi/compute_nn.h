// Shared pieces of the nn computes (topi/compute_nn_*.cc): static shapes from the graph, the padded
// (and, for ConvTranspose, stride-dilated) input of a sliding window, and the op families' tables.
// Window ops read a padded stage so that their reductions carry no bounds checks; the schedules
// (topi/schedule_nn.h) compute such stages at root.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/ops/nn_window.h"
#include "topi/op_compute.h"

namespace tessel::topi::nn {

// An int32 index constant (te index arithmetic is int32).
inline PrimExpr idx(int64_t v) { return PrimExpr(static_cast<int>(v)); }
std::vector<PrimExpr> idx_exprs(const std::vector<int64_t>& v);

// The static shape of an input tensor (compile_graph requires static shapes).
std::vector<int64_t> static_shape(const te::Tensor& t);

// x[N, C, spatial...] placed into a tensor of spatial extents `extent`: position q of spatial dim d
// holds x[(q - shift[d]) / stride[d]] when that is a whole in-range index, else `fill`. Returns x
// itself when no position falls outside it (no shift, unit stride, extents within x). Axes after
// the spatial ones (a channel block, ir/ops/conv_packing.h) pass through.
te::Tensor pad_spatial(const te::Tensor& x, const std::vector<int64_t>& shift,
                       const std::vector<int64_t>& stride, const std::vector<int64_t>& extent,
                       PrimExpr fill, const std::string& name);

// The spatial extents a window op reads: (out - 1) * stride + (kernel - 1) * dilation + 1.
std::vector<int64_t> window_extent(const graph::ops::WindowGeometry& geo);

// Indices [n, c, out[d] * stride[d] + r[d] * dilation[d]...] into a padded window input.
std::vector<PrimExpr> window_index(PrimExpr n, PrimExpr c, const std::vector<PrimExpr>& out,
                                   const std::vector<te::IterVar>& r,
                                   const graph::ops::WindowGeometry& geo);

// Softmax (or, with log_softmax, LogSoftmax) of x over `dims`, shifted by the max so exp cannot
// overflow: max and sum-of-exp reduce stages, then the elementwise result named `name`.
te::Tensor softmax_over(const te::Tensor& x, const std::set<size_t>& dims, bool log_softmax,
                        const std::string& name);

// One reduce axis per kernel dim, named rk0, rk1, ...
std::vector<te::IterVar> kernel_axes(const std::vector<int64_t>& kernel);

std::vector<OpCompute> conv_computes();      // topi/compute_nn_conv.cc: Conv, ConvTranspose
std::vector<OpCompute> winograd_computes();  // topi/compute_nn_winograd.cc: ConvWinograd
std::vector<OpCompute> pool_computes();      // topi/compute_nn_pool.cc: windowed and global pools
std::vector<OpCompute> dense_computes();     // topi/compute_nn_dense.cc: Gemm, MatMul
std::vector<OpCompute>
norm_computes();  // topi/compute_nn_norm.cc: softmax family, normalizations, LRN

}  // namespace tessel::topi::nn
