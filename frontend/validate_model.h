// Internal to frontend/: the checks an untrusted ModelProto passes before libonnx reads it.
//
// libonnx's checker and shape inference assume well-formed input and crash on malformed models
// (issue 22): ParseData copies raw_data by its byte count while callers index by the dims
// (SIGSEGV), and the conv/pool inference divides by strides (SIGFPE). validate_model checks,
// without allocating, everything of that kind that needs no shape information; what depends on
// input ranks or values is checked node by node during inference (frontend/onnx_shape_inference.h).
#pragma once

#include <onnx/onnx_pb.h>

#include <functional>
#include <string>

namespace tessel::frontend::detail {

// Every TensorProto (initializers, sparse initializers, Constant values and other tensor
// attributes, in the graph, every subgraph and every model function) holds the data its dims
// declare (checked_numel), no declared type has a negative dim, and the window attributes of
// conv/pool ops and DepthToSpace / SpaceToDepth's blocksize are in range. Throws Error naming
// `source` and the tensor, or the node and attribute.
void validate_model(const onnx::ModelProto& model, const std::string& source);

// The first attribute of an ai.onnx `op_type` node outside the range validate_model enforces, as
// "attribute 'strides' has 0; it must be between 1 and 2147483647"; empty when all are in range.
// `find(name)` is the node's attribute of that name or nullptr. Shape inference repeats the check
// on every node it infers, nodes of the function bodies it expands included.
using FindAttribute = std::function<const onnx::AttributeProto*(const std::string& name)>;
std::string attribute_range_problem(const std::string& op_type, const FindAttribute& find);

}  // namespace tessel::frontend::detail
