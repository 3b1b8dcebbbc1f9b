#include "frontend/onnx_tensor.h"

#include <fmt/format.h>

#include <fstream>

#include "frontend/onnx_proto_convert.h"
#include "frontend/proto_file.h"
#include "ir/error.h"

namespace tessel::frontend {

graph::TensorData read_tensor_file(const std::string& path) {
  onnx::TensorProto proto;
  if (!proto.ParseFromString(detail::read_protobuf_file(path, "tensor file"))) {
    throw Error(fmt::format("'{}' is not a serialized ONNX TensorProto", path));
  }
  std::string what = proto.name().empty() ? fmt::format("tensor in '{}'", path)
                                          : fmt::format("tensor '{}' in '{}'", proto.name(), path);
  return detail::tensor_from_proto(proto, what);
}

void write_tensor_file(const std::string& path, const graph::TensorData& tensor,
                       const std::string& name) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out || !detail::tensor_to_proto(tensor, name).SerializeToOstream(&out)) {
    throw Error(fmt::format("cannot write tensor file '{}'", path));
  }
}

}  // namespace tessel::frontend
