// ONNX model → graph IR. Models are untrusted: a malformed one is a tessel::Error, never a crash
// (docs/graph.md, "Importer"). The importer reads only regular files of at most 2 GiB, parses the
// model, checks the ai.onnx opset (1..17, else UnsupportedFeatureError), validates what libonnx
// trusts (frontend/validate_model.h), runs the ONNX checker, rejects every unsupported op at once
// (UnsupportedOpsError), and converts initializers to constants and value types from ONNX shape
// inference (guarded: frontend/onnx_shape_inference.h). A value whose type ONNX could not infer
// has dtype void (DataType::void_type()) and an empty shape; a later pass infers it with the op
// table. Graph attributes (If/Loop bodies) become self-contained graphs: the outer values they
// read become their trailing inputs (after a body's own inputs), and the node passes them as
// trailing inputs, in the same order (see graph.h).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "frontend/frontend_error.h"
#include "ir/graph.h"

namespace tessel::frontend {

constexpr int kMinOpset = 1;
constexpr int kMaxOpset = 17;

// Whether the importer keeps an ai.onnx op at the model's opset.
using OpSupportFn = std::function<bool(const std::string& op_type, int opset)>;
// The op table's answer: find_op(op_type) exists and opset >= its since_opset. The importer keeps
// exactly these: every graph node names an OpDef.
bool op_in_table(const std::string& op_type, int opset);

struct ImportOptions {
  // Overrides the model's dims of these graph inputs (rank must match).
  std::map<std::string, std::vector<int64_t>> input_shapes;
  // When set, an op the table supports is still refused where this says no (tests of the
  // unsupported-op report).
  OpSupportFn op_supported;
};

// `path` names the file in errors; import_onnx_bytes names `source` instead.
graph::Graph import_onnx(const std::string& path, const ImportOptions& opt = {});
graph::Graph import_onnx_bytes(const std::string& bytes, const ImportOptions& opt = {},
                               const std::string& source = "<onnx bytes>");

// What a model declares, read without converting it, so also for a model with unsupported ops:
// its ai.onnx opset, its graph inputs (input_shapes applied) and outputs with their declared types
// (dtype void where none is declared), its node count per op ("Conv", "com.example.MyOp";
// subgraphs included) and the unsupported-op report (empty when the model imports). Still throws
// for a missing or corrupt model or an opset out of range.
struct ModelOverview {
  int opset = 0;
  std::vector<std::pair<std::string, graph::TensorType>> inputs, outputs;
  std::map<std::string, int> op_counts;
  std::vector<UnsupportedOp> unsupported;
};
ModelOverview overview_onnx(const std::string& path, const ImportOptions& opt = {});
ModelOverview overview_onnx_bytes(const std::string& bytes, const ImportOptions& opt = {},
                                  const std::string& source = "<onnx bytes>");

// Throws Error naming the first graph input with an unknown dim, and the dim.
void require_static_inputs(const graph::Graph& g);

// Parses ONNX's textual model syntax (`<ir_version: 8, opset_import: ["" : 13]> g (float[2] x)
// => (float[2] y) { y = Relu(x) }`) into serialized ModelProto bytes, for tests and tools.
std::string onnx_text_to_model_bytes(const std::string& text);

}  // namespace tessel::frontend
