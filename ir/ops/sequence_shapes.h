// Shape rules shared by the type inference of Einsum / Resize / Upsample and their reference
// evaluation: the parsed einsum equation and the resized output dims.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace tessel::graph::ops {

// An einsum equation with each label (letter, or one ellipsis dim) numbered. Letters sort in ASCII
// order (that is the implicit output order); ellipsis dims come after them, right-aligned.
struct EinsumSpec {
  std::vector<std::vector<int>> operand_labels;  // per operand, per dim
  std::vector<int> output_labels;                // per output dim
  std::vector<int64_t> label_dims;               // per label; kUnknownDim when not known
};

// Parses `equation` for operands of the given shapes (dims may be kUnknownDim). Explicit ("->")
// and implicit outputs, repeated labels (diagonals), "..." with broadcasting of size-1 dims.
// Throws Error naming the node on a malformed equation or mismatched dims.
EinsumSpec parse_einsum(const Node& node, const std::vector<std::vector<int64_t>>& shapes);

// The input positions of Resize / Upsample for the graph's opset (-1: no such input), and the
// output dims: `sizes` when non-empty, else floor(in * scale). Error naming the node otherwise.
struct ResizeInputs {
  int roi = -1, scales = -1, sizes = -1;
};
ResizeInputs resize_inputs(const Node& node, int opset);
std::vector<int64_t> resize_output_dims(const Node& node, const std::vector<int64_t>& in,
                                        const std::vector<double>& scales, const std::vector<int64_t>& sizes);

}  // namespace tessel::graph::ops
