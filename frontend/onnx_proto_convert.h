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

// Reads raw_data or the typed field matching the dtype; `what` names the tensor in errors.
graph::TensorData tensor_from_proto(const onnx::TensorProto& proto, const std::string& what);
onnx::TensorProto tensor_to_proto(const graph::TensorData& tensor, const std::string& name);

}  // namespace tessel::frontend::detail
