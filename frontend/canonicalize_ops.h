// Opset canonicalization: the importer rewrites every node written against an older ai.onnx opset
// into the form the newest supported opset (kMaxOpset) gives the same computation, so that type
// inference, topi and the reference executor see one form per op:
//   ReduceSum < 13, Slice < 10, Split < 13, Squeeze/Unsqueeze < 13, TopK < 10: the attribute that
//     later became an input (axes, starts/ends/axes, split, k) becomes a constant input;
//   Pad < 11 and Clip < 11: pads/value and min/max become constant inputs of the data's type;
//   Dropout < 12: the training-only ratio and is_test attributes go (these opsets always infer);
//   Softmax/LogSoftmax/Hardmax < 13: the input coerced to 2-D at `axis` becomes one explicit axis
//     when that axis is the last, else Flatten -> op(axis 1) -> Reshape to the input's shape;
//   Upsample and Resize < 11: Resize with a scales input and the legacy coordinate mapping
//     (asymmetric, floor) spelled out; the modes "bilinear" and "trilinear" become "linear".
// Subgraphs (If branches) are rewritten too, and every graph's opset becomes kMaxOpset.
#pragma once

#include "ir/graph.h"

namespace tessel::frontend {

// Rewrites `g` in place; Error naming the node when an old form cannot be expressed (a Clip or Pad
// whose data type ONNX could not infer).
void canonicalize_ops(graph::Graph& g);

}  // namespace tessel::frontend
