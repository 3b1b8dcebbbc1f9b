// Internal to frontend/: conversions between ONNX protobuf messages and Tessel types. This header
// includes the ONNX protobuf headers, so only frontend .cc files may include it (public headers
// stay free of protobuf).
#pragma once

#include <onnx/onnx_pb.h>

#include <string>

#include "ir/graph.h"

namespace tessel::frontend::detail {

// TensorProto::DataType → DataType; UnsupportedFeatureError naming `what` for strings and
// complex; Error for undefined.
DataType dtype_from_onnx(int32_t elem_type, const std::string& what);
int32_t dtype_to_onnx(DataType dtype);

// The element count the dims declare, checked against the data the tensor holds (raw_data bytes or
// the typed field of its element type) without allocating anything: Error naming `what` for a
// negative dim, a count past int64, a size mismatch, external or segmented data, or an unknown
// element type. libonnx trusts these sizes (its ParseData copies raw_data by the byte count but
// callers index by the dims), so every tensor of a model passes this before libonnx reads it.
int64_t checked_numel(const onnx::TensorProto& proto, const std::string& what);

// Reads raw_data or the typed field matching the dtype, after checked_numel; `what` names the
// tensor in errors.
graph::TensorData tensor_from_proto(const onnx::TensorProto& proto, const std::string& what);
// The same, taking raw_data's bytes from `proto` instead of copying them (a model's weights are
// most of its bytes).
graph::TensorData tensor_from_proto(onnx::TensorProto&& proto, const std::string& what);

// The importer's name for a node: its own, or "<op_type>_<index in its graph>" when it has none.
std::string node_name(const onnx::NodeProto& node, int index);
onnx::TensorProto tensor_to_proto(const graph::TensorData& tensor, const std::string& name);

}  // namespace tessel::frontend::detail
