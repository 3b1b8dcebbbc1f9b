// Shape rules shared by the type inference of Einsum / Resize and their reference
// evaluation: the parsed einsum equation and the resized output dims. Resize's attributes,
// coordinate transformation and interpolation weights are also defined here once, for the
// reference executor (on doubles) and the te lowering (on PrimExprs).
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/ops/op_params.h"

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
EinsumSpec parse_einsum(const OpAttrs& node, const std::vector<std::vector<int64_t>>& shapes);

// Resize's inputs after X (Upsample and Resize-10 are rewritten into this form at import,
// frontend/canonicalize_ops.h).
enum ResizeInput : size_t { kResizeRoi = 1, kResizeScales = 2, kResizeSizes = 3 };
// The output dims: `sizes` when non-empty, else floor(in * scale). Error naming the node otherwise.
std::vector<int64_t> resize_output_dims(const OpAttrs& node, const std::vector<int64_t>& in,
                                        const std::vector<double>& scales,
                                        const std::vector<int64_t>& sizes);

// Resize attributes.
struct ResizeAttrs {
  std::string mode;             // "nearest", "linear" or "cubic"
  std::string coordinate_mode;  // coordinate_transformation_mode
  std::string nearest_mode;
  double cubic_a = -0.75;
  bool exclude_outside = false;
  double extrapolation = 0;  // tf_crop_and_resize: the value of points outside the input
};

// The input coordinate of output index x along one dim, as (x + offset) * mul / div + shift: each
// coordinate_transformation_mode's formula fits this form operation for operation, so every
// evaluator that follows it rounds exactly alike (nearest ties depend on it).
struct ResizeCoordinate {
  double offset = 0, mul = 1, div = 1, shift = 0;
  bool crop = false;  // tf_crop_and_resize: points outside [0, in - 1] take the extrapolation value
  template <class T>
  T at(const T& x) const {
    return (x + offset) * mul / div + shift;
  }
};

struct ResizeSpec {
  ResizeAttrs attrs;
  std::vector<int64_t> out;              // output dims
  std::vector<ResizeCoordinate> coords;  // per dim
};

// Everything a Resize evaluation needs for an input of static shape `in`; the roi, scales and
// sizes inputs (an empty tensor counts as omitted) are read through `input`. Error naming the node
// for an unsupported mode or mismatched scales/sizes.
ResizeSpec resize_spec(const OpAttrs& node, const std::vector<int64_t>& in,
                       const ParamInput& input);

// An output point with input coordinate `src` interpolates from the taps around base = ceil(src) -
// 1, at ratio = src - base in (0, 1] (ONNX takes the left neighbour of an integral coordinate).
template <class T>
T resize_base(const T& src) {
  using std::ceil;
  return ceil(src) - 1.0;
}
// Nearest mode: whether the point reads base + 1 rather than base.
template <class T>
auto resize_rounds_up(const ResizeAttrs& a, const T& ratio) {
  if (a.nearest_mode == "floor") return ratio == 1.0;
  if (a.nearest_mode == "ceil") return ratio > 0.0;
  if (a.nearest_mode == "round_prefer_ceil") return ratio >= 0.5;
  return ratio > 0.5;  // round_prefer_floor
}
// Linear and cubic modes: the weights of the taps base + resize_first_tap(a), base +
// resize_first_tap(a) + 1, ...
inline int64_t resize_first_tap(const ResizeAttrs& a) { return a.mode == "cubic" ? -1 : 0; }
template <class T>
std::vector<T> resize_weights(const ResizeAttrs& a, const T& ratio) {
  if (a.mode != "cubic") return {1.0 - ratio, ratio};
  double c = a.cubic_a;
  auto far = [c](const T& t) { return ((c * t - 5 * c) * t + 8 * c) * t - 4 * c; };  // 1 < |t| < 2
  auto near = [c](const T& t) { return ((c + 2) * t - (c + 3)) * t * t + 1.0; };     // |t| <= 1
  return {far(ratio + 1.0), near(ratio), near(1.0 - ratio), far(2.0 - ratio)};
}

}  // namespace tessel::graph::ops
