// The C++ API for models: compile an ONNX file (or a graph) for a target and run it.
//   tessel::CompileOptions opt;
//   opt.input_shapes = {{"data", {1, 3, 224, 224}}};
//   tessel::CompiledModel m = tessel::compile("resnet50.onnx", opt);
//   m.set_input("data", x);  m.run();  runtime::NDArray y = m.get_output(0);
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "runtime/graph_executor.h"

namespace tessel {

struct CompileOptions {
  std::string target = "llvm -mcpu=native";
  int opt_level = 3;
  std::map<std::string, std::vector<int64_t>> input_shapes;
};

struct StageTiming {
  std::string stage;
  double ms;
};

class CompiledModel {
 public:
  CompiledModel() = default;
  CompiledModel(runtime::Module module, runtime::GraphExecutor executor, std::vector<StageTiming> timings,
                std::string fusion_summary);

  int num_inputs() const { return executor_.num_inputs(); }
  int num_outputs() const { return executor_.num_outputs(); }
  const std::string& input_name(int i) const { return executor_.input_name(i); }
  const std::string& output_name(int i) const { return executor_.output_name(i); }
  void set_input(const std::string& name, const runtime::NDArray& value) { executor_.set_input(name, value); }
  void set_input(int i, const runtime::NDArray& value) { executor_.set_input(i, value); }
  void run() { executor_.run(); }
  // Valid until the next run(); copy() to keep.
  runtime::NDArray get_output(int i) const { return executor_.get_output(i); }
  runtime::NDArray get_output(const std::string& name) const { return executor_.get_output(name); }

  // Wall time of each compilation stage (graph passes, lowering, codegen), in order.
  const std::vector<StageTiming>& timings() const { return timings_; }
  // The fused groups, one line each.
  const std::string& fusion_summary() const { return fusion_summary_; }
  const runtime::Module& module() const { return module_; }
  const runtime::GraphExecutor& executor() const { return executor_; }

 private:
  runtime::Module module_;
  runtime::GraphExecutor executor_;
  std::vector<StageTiming> timings_;
  std::string fusion_summary_;
};

CompiledModel compile(const std::string& onnx_path, const CompileOptions& opt = {});
// Compiles an imported graph (its input shapes must be static).
CompiledModel compile_graph(graph::Graph g, const CompileOptions& opt = {});

// Host tensor conversions between the graph IR and the runtime.
runtime::NDArray to_ndarray(const graph::TensorData& t);
graph::TensorData to_tensor_data(const runtime::NDArray& a);

}  // namespace tessel
