// Serialized ONNX TensorProto files (the test_data_set_N/{input,output}_K.pb files of ONNX's
// backend tests) to and from TensorData. Reading throws tessel::Error naming the file when it is
// missing or corrupt, and UnsupportedFeatureError for string/complex or external data.
#pragma once

#include <string>

#include "ir/graph.h"

namespace tessel::frontend {

graph::TensorData read_tensor_file(const std::string& path);
// `name` is stored in the proto's name field.
void write_tensor_file(const std::string& path, const graph::TensorData& tensor,
                       const std::string& name = "");

}  // namespace tessel::frontend
