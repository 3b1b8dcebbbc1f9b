// The C++ API for models: compile an ONNX file (or a graph) for a target and run it.
//   tessel::CompileOptions opt;
//   opt.input_shapes = {{"data", {1, 3, 224, 224}}};
//   tessel::CompiledModel m = tessel::compile("resnet50.onnx", opt);
//   m.set_input("data", x);  m.run();  runtime::NDArray y = m.get_output(0);
//   m.export_package("model.tar");   // later, without LLVM: runtime::load_package("model.tar")
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "codegen/target.h"
#include "ir/graph.h"
#include "ir/stmt.h"
#include "passes/plan_memory.h"
#include "runtime/model.h"

namespace tessel {

struct StageTiming {
  std::string stage;
  double ms;
};

struct CompileOptions {
  std::string target = "llvm -mcpu=native";
  int opt_level = 3;
  std::map<std::string, std::vector<int64_t>> input_shapes;
  // Graph inputs bound to fixed values at compile time (TVM's params / freeze_params): they become
  // constants, so shapes, axes and bounds computed from them fold away, and the compiled model no
  // longer takes them as inputs. A ConstantRequiredError from compile names the inputs to bind.
  std::map<std::string, graph::TensorData> params;
  // IR stages to write into dump_dir: any of "graph", "te", "tir", "llvm", "asm".
  std::vector<std::string> dump;
  std::string dump_dir;
  // Called as each compilation stage ends (for progress output).
  std::function<void(const StageTiming&)> on_stage;
};

// The IR stages that CompileOptions::dump accepts.
const std::vector<std::string>& dump_stages();

class CompiledModel : public runtime::Model {
 public:
  CompiledModel() = default;
  CompiledModel(runtime::Model model, std::vector<PrimFunc> funcs, Target target, std::vector<StageTiming> timings,
                std::string fusion_summary, passes::MemoryPlan memory_plan);

  // Wall time of each compilation stage (import, graph passes, lowering, codegen), in order.
  const std::vector<StageTiming>& timings() const { return timings_; }
  // The fused groups, one line each.
  const std::string& fusion_summary() const { return fusion_summary_; }
  // How the intermediate values share buffers, and the peak bytes.
  const passes::MemoryPlan& memory_plan() const { return memory_plan_; }
  const std::vector<PrimFunc>& funcs() const { return funcs_; }
  const Target& target() const { return target_; }
  // Writes a package (docs/package-format.md): the kernels as a shared library, the executor plan
  // and the weights. The target must be the host's OS and architecture (for the system linker).
  void export_package(const std::string& path) const;

 private:
  friend CompiledModel compile(const std::string& onnx_path, const CompileOptions& opt);
  std::vector<PrimFunc> funcs_;
  Target target_;
  std::vector<StageTiming> timings_;
  std::string fusion_summary_;
  passes::MemoryPlan memory_plan_;
};

CompiledModel compile(const std::string& onnx_path, const CompileOptions& opt = {});
// Compiles an imported graph (its input shapes must be static; opt.input_shapes is not used).
CompiledModel compile_graph(graph::Graph g, const CompileOptions& opt = {});

// Host tensor conversions between the graph IR and the runtime.
runtime::NDArray to_ndarray(const graph::TensorData& t);
graph::TensorData to_tensor_data(const runtime::NDArray& a);

}  // namespace tessel
