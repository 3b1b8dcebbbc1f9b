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
#include "passes/fuse_ops.h"
#include "passes/plan_memory.h"
#include "runtime/model.h"
#include "runtime/tensor_data.h"

namespace tessel {

struct StageTiming {
  std::string stage;
  double ms;
};

struct CompileOptions {
  std::string target = "llvm -mcpu=native";
  int opt_level = 3;
  std::vector<std::string> disabled_passes;  // graph passes to skip (passes::GraphPipelineOptions)
  std::map<std::string, std::vector<int64_t>> input_shapes;
  // Graph inputs bound to fixed values at compile time (TVM's params / freeze_params): they become
  // constants, so shapes, axes and bounds computed from them fold away, and the compiled model no
  // longer takes them as inputs. A ConstantRequiredError from compile names the inputs to bind.
  std::map<std::string, graph::TensorData> params;
  // IR stages to write into dump_dir: any of "graph", "te", "tir", "llvm", "asm".
  std::vector<std::string> dump;
  std::string dump_dir;
  // Tuning records (autotune/records.h) to apply: each templated kernel whose workload has a
  // successful record for this target takes the best one's config; the others use the fallback.
  std::string tuning_records;
  // Kernels lowered and compiled by LLVM at once; 0: one per hardware thread. The output is the
  // same for any number.
  int compile_jobs = 0;
  // Called as each compilation stage ends (for progress output).
  std::function<void(const StageTiming&)> on_stage;
};

// What LLVM compiled: distinct kernels (equal up to names) are compiled once, and a kernel found
// in the kernel cache (codegen/kernel_cache.h, TESSEL_CACHE_DIR) is not compiled at all.
struct CodegenSummary {
  int kernels = 0, distinct = 0, from_cache = 0, jobs = 0;
  double optimize_ms = 0, machine_code_ms = 0;  // summed over the jobs
};

// The IR stages that CompileOptions::dump accepts.
const std::vector<std::string>& dump_stages();

// How the tuning records applied to the kernels with schedule templates.
struct TuningSummary {
  struct Kernel {
    std::string name, workload;
    std::string config;         // the config its schedule follows (JSON)
    bool tuned;                 // from a record; otherwise the fallback
    uint64_t config_index = 0;  // the config's index in its template's space
  };
  std::vector<Kernel> kernels;  // every kernel, in order
  int tuned = 0;                // kernels compiled with a record's config
  int kept_fallback =
      0;            // of those, kernels whose record is the fallback's: no measured config beat it
  int untuned = 0;  // kernels with a template but no usable record: the fallback config
  int auto_scheduled = 0;        // of the tuned, kernels following an auto-scheduler program
  int layouts_from_records = 0;  // convs whose layout (direct or packed) records of both chose
  // Skipped record lines, and records whose config does not fit the template any more.
  std::vector<std::string> warnings;
};

class CompiledModel : public runtime::Model {
 public:
  CompiledModel() = default;
  CompiledModel(runtime::Model model, std::vector<PrimFunc> funcs, std::vector<std::string> objects,
                Target target, std::vector<StageTiming> timings, std::string fusion_summary,
                passes::MemoryPlan memory_plan);

  // Wall time of each compilation stage (import, graph passes, lowering, codegen), in order.
  const std::vector<StageTiming>& timings() const { return timings_; }
  // The fused groups, one line each.
  const std::string& fusion_summary() const { return fusion_summary_; }
  // How the intermediate values share buffers, and the peak bytes.
  const passes::MemoryPlan& memory_plan() const { return memory_plan_; }
  const std::vector<PrimFunc>& funcs() const { return funcs_; }
  const Target& target() const { return target_; }
  const TuningSummary& tuning() const { return tuning_; }
  const CodegenSummary& codegen() const { return codegen_; }
  // Writes a package (docs/package-format.md): the kernels' objects linked into a shared library
  // (no second compile), the executor plan and the weights. (compile already required the host's
  // OS and architecture.) Returns the time of each step ("link library", "write package").
  std::vector<StageTiming> export_package(const std::string& path) const;

 private:
  friend CompiledModel compile(const std::string& onnx_path, const CompileOptions& opt);
  friend CompiledModel compile_graph(graph::Graph g, const CompileOptions& opt);
  std::vector<PrimFunc> funcs_;
  std::vector<std::string> objects_;  // codegen/kernel_objects.h
  Target target_;
  std::vector<StageTiming> timings_;
  std::string fusion_summary_;
  passes::MemoryPlan memory_plan_;
  TuningSummary tuning_;
  CodegenSummary codegen_;
};

CompiledModel compile(const std::string& onnx_path, const CompileOptions& opt = {});

// A model's graph after the graph passes (opt.input_shapes, params and opt_level apply), and its
// fused groups: what compile lowers, and what tuning extracts its tasks from.
struct GraphPlan {
  graph::Graph graph;
  std::vector<passes::FusedGroup> groups;
};
GraphPlan plan_graph(const std::string& onnx_path, const CompileOptions& opt = {});
// The same with every packable Conv in the layout that passes::pack_conv_weights' rule does not
// pick: where tuning measures the other form of each conv.
GraphPlan plan_graph_other_conv_layouts(const std::string& onnx_path,
                                        const CompileOptions& opt = {});
// Compiles an imported graph (its input shapes must be static; opt.input_shapes is not used).
CompiledModel compile_graph(graph::Graph g, const CompileOptions& opt = {});

// Host tensor conversions between the graph IR and the runtime.
using runtime::to_ndarray;
using runtime::to_tensor_data;

}  // namespace tessel
