// Internal to frontend/: reading the protobuf files users name (ONNX models, TensorProto files).
#pragma once

#include <google/protobuf/message_lite.h>

#include <string>

namespace tessel::frontend::detail {

// Protobuf refuses messages over 2 GiB, so no valid model or tensor file is larger.
constexpr long long kMaxProtobufBytes = (1LL << 31) - 1;

// The whole file. Refuses anything but a regular file (a FIFO would block, /dev/zero never ends)
// and files over kMaxProtobufBytes, before reading any of it. `what` says what the file holds, for
// errors ("ONNX model").
std::string read_protobuf_file(const std::string& path, const std::string& what);

// Parses the file into `message` as it reads it, after the same checks, without holding the whole
// file in memory (a model's weights are most of its bytes). False when protobuf cannot parse it.
bool parse_protobuf_file(const std::string& path, const std::string& what,
                         google::protobuf::MessageLite& message);

}  // namespace tessel::frontend::detail
