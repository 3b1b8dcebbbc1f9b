// Internal to frontend/: reading the protobuf files users name (ONNX models, TensorProto files).
#pragma once

#include <string>

namespace tessel::frontend::detail {

// Protobuf refuses messages over 2 GiB, so no valid model or tensor file is larger.
constexpr long long kMaxProtobufBytes = (1LL << 31) - 1;

// The whole file. Refuses anything but a regular file (a FIFO would block, /dev/zero never ends)
// and files over kMaxProtobufBytes, before reading any of it. `what` says what the file holds, for
// errors ("ONNX model").
std::string read_protobuf_file(const std::string& path, const std::string& what);

}  // namespace tessel::frontend::detail
