// ONNX model bytes -> what `tessel inspect` does, LLVM-free: the unsupported-op report, the import
// (checker, shape inference, conversion), static-input check, the graph pipeline (type inference,
// folding, fusion) and the memory plan. Models with unsupported ops are imported as inspect shows
// them (every op allowed) and stop there.
#include <cstdint>
#include <string>
#include <vector>

#include "frontend/onnx_importer.h"
#include "passes/fuse_ops.h"
#include "passes/pipeline.h"
#include "tests/fuzz/fuzz_util.h"

using namespace tessel;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string bytes = fuzz::as_string(data, size);
  fuzz::expect_clean_failure([&] {
    if (!frontend::overview_onnx_bytes(bytes, {}, "fuzz.onnx").unsupported.empty()) return;
    graph::Graph g = frontend::import_onnx_bytes(bytes, {}, "fuzz.onnx");
    frontend::require_static_inputs(g);
    passes::GraphPipelineResult result = passes::run_graph_pipeline(g);
    passes::plan_kernel_memory(g, result).summary();
  });
  return 0;
}
