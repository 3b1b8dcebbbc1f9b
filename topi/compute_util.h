// Helpers shared by the graph-op computes (topi/compute_*.cc): output shapes from the typed
// graph, axis normalization, and index expressions that can never read out of bounds (a te
// select evaluates both branches, so every load in it must be in range).
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"
#include "te/operation.h"
#include "topi/op_compute.h"

namespace tessel::topi {

// A compute's input tensors (undefined for an omitted optional input) and its output tensors.
using Inputs = std::vector<te::Tensor>;
using Outputs = std::vector<te::Tensor>;

// The static shape of the op's output i, from type inference (lowering and inference agree).
std::vector<PrimExpr> output_shape(const OpCall& call, size_t i);
// The node's `axis` attribute (default `def`) in [0, rank).
int64_t axis_attr(const OpCall& call, int64_t rank, int64_t def);
// `index` clamped to [0, dim - 1], as int32.
PrimExpr clamp_index(PrimExpr index, int64_t dim);
// A runtime index value (any integer dtype) into a dim: negative values wrap (ONNX), then it is
// clamped so that an out-of-range value still reads inside the tensor.
PrimExpr wrap_index(PrimExpr value, int64_t dim);
// The constant dims of a te tensor (an Error naming `what` for a symbolic dim).
std::vector<int64_t> const_shape(const te::Tensor& t, const std::string& what);
// Row-major indices into `shape` for a flat offset (0 for size-1 dims).
std::vector<PrimExpr> unflatten(PrimExpr flat, const std::vector<int64_t>& shape);
// Integer division truncating toward zero (ONNX's and C's; te's `/` floors).
PrimExpr trunc_div(PrimExpr a, PrimExpr b);
// Output indices as expressions.
std::vector<PrimExpr> exprs(const std::vector<Var>& vars);

}  // namespace tessel::topi
