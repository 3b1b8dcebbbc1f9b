// Internal to frontend/: ONNX shape inference for untrusted models.
//
// libonnx's inference functions assume what they read matches the schema: LayerNormalization
// indexes dims by its axis attribute, Gemm (opset 6) reads dim 1 of rank-1 inputs, ConstantOfShape
// adds as many dims as its shape input declares, each unchecked (SIGSEGV or a hang on a malformed
// model). What those assumptions need is known only once the node's input types are, so
// infer_shapes runs every node's inference function behind a check of them, made with the node's
// real input types. A node that fails the check is left uninferred, as any node ONNX cannot infer
// is; Tessel's own type inference (ir/op_table.h) then reports the problem with the node named.
#pragma once

#include <onnx/onnx_pb.h>

namespace tessel::frontend::detail {

// ONNX shape inference into `model`'s value_info; errors it reports leave values untyped.
// Expects a model that passed validate_model and the ONNX checker.
void infer_shapes(onnx::ModelProto& model);

}  // namespace tessel::frontend::detail
