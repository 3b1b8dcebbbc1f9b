// Helpers shared by the type-inference functions of the op table.
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"

namespace tessel::graph::ops {

// numpy-style broadcast of two shapes (kUnknownDim propagates); Error naming the node on mismatch.
std::vector<int64_t> broadcast_shapes(const std::vector<int64_t>& a, const std::vector<int64_t>& b,
                                      const OpAttrs& node);
// axis in [-rank, rank) → [0, rank); Error naming the node otherwise.
int64_t normalize_axis(int64_t axis, int64_t rank, const OpAttrs& node);
// The type of input i; Error naming the node when the input is missing.
const TensorType& input_type(const Graph& g, const Node& node, size_t i);
// True when input i is present (not omitted).
bool has_input(const Node& node, size_t i);
// Error naming the node, both inputs and both types unless the present inputs among `inputs` all
// have the element type of the first present one. Lowering combines such inputs in one expression,
// which needs a single element type.
void require_same_dtype(const Graph& g, const Node& node, const std::vector<size_t>& inputs);
// The constant value of input i, or nullptr when it is not a constant.
const TensorData* constant_input(const Graph& g, const Node& node, size_t i);
// The constant value of input i (which must be present); ConstantRequiredError naming the node,
// the input and `what` when it is computed at run time.
const TensorData& required_constant(const Graph& g, const Node& node, size_t i,
                                    const std::string& what);
// The constant input i as int64s; ConstantRequiredError when it is not a constant.
std::vector<int64_t> constant_ints(const Graph& g, const Node& node, size_t i, const char* what);

}  // namespace tessel::graph::ops
