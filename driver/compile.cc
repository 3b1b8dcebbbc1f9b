#include "driver/compile.h"

#include <fmt/format.h>

#include <chrono>
#include <cstring>

#include "codegen/build.h"
#include "frontend/onnx_importer.h"
#include "ir/error.h"
#include "passes/lower_to_te.h"
#include "passes/pipeline.h"
#include "te/lower.h"

namespace tessel {

CompiledModel::CompiledModel(runtime::Module module, runtime::GraphExecutor executor, std::vector<StageTiming> timings,
                             std::string fusion_summary)
    : module_(std::move(module)), executor_(std::move(executor)), timings_(std::move(timings)),
      fusion_summary_(std::move(fusion_summary)) {}

runtime::NDArray to_ndarray(const graph::TensorData& t) {
  runtime::NDArray a = runtime::NDArray::empty(t.shape(), t.dtype());
  if (t.nbytes()) std::memcpy(a.raw_data(), t.raw(), t.nbytes());
  return a;
}

graph::TensorData to_tensor_data(const runtime::NDArray& a) {
  graph::TensorData t(a.dtype(), a.shape());
  if (t.nbytes()) std::memcpy(t.raw(), a.raw_data(), t.nbytes());
  return t;
}

namespace {

class Timer {
 public:
  explicit Timer(std::vector<StageTiming>* out) : out_(out) {}
  template <class Fn>
  auto operator()(const std::string& stage, Fn fn) {
    auto t0 = std::chrono::steady_clock::now();
    auto done = [&] {
      out_->push_back({stage, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count()});
    };
    if constexpr (std::is_void_v<decltype(fn())>) {
      fn();
      done();
    } else {
      auto r = fn();
      done();
      return r;
    }
  }

 private:
  std::vector<StageTiming>* out_;
};

}  // namespace

CompiledModel compile_graph(graph::Graph g, const CompileOptions& opt) {
  std::vector<StageTiming> timings;
  Timer time(&timings);
  Target target = Target::parse(opt.target);
  frontend::require_static_inputs(g);

  passes::GraphPipelineOptions popt;
  popt.opt_level = opt.opt_level;
  passes::GraphPipelineResult plan = passes::run_graph_pipeline(g, popt);
  for (const auto& t : plan.timings) timings.push_back({"graph:" + t.pass, t.ms});

  int lanes = std::max(1, target.vector_bits() / 32);
  std::vector<passes::LoweredGroup> lowered;
  std::vector<PrimFunc> funcs = time("lower", [&] {
    std::vector<PrimFunc> out;
    for (size_t i = 0; i < plan.groups.size(); ++i) {
      lowered.push_back(passes::lower_to_te(g, plan.groups[i], static_cast<int>(i), lanes));
      out.push_back(te::lower(lowered.back().schedule, lowered.back().args, lowered.back().name));
    }
    return out;
  });
  runtime::Module module;
  if (!funcs.empty()) module = time("codegen", [&] { return build(funcs, target); });

  // One array per graph value that a kernel, an input or an output touches.
  std::vector<runtime::NDArray> storage;
  std::map<graph::ValueId, int> slot;
  auto slot_of = [&](graph::ValueId v) {
    auto it = slot.find(v);
    if (it != slot.end()) return it->second;
    const graph::Value& val = g.value(v);
    storage.push_back(val.constant ? to_ndarray(*val.constant) : runtime::NDArray::empty(val.type.shape, val.type.dtype));
    return slot[v] = static_cast<int>(storage.size() - 1);
  };
  std::vector<runtime::ExecutorIO> inputs, outputs;
  for (graph::ValueId v : g.inputs) inputs.push_back({g.value(v).name, slot_of(v)});
  std::vector<runtime::ExecutorOp> ops;
  for (const auto& lg : lowered) {
    runtime::ExecutorOp op{lg.name, module.get_function(lg.name), {}};
    for (graph::ValueId v : lg.arg_values) op.args.push_back(slot_of(v));
    ops.push_back(std::move(op));
  }
  for (graph::ValueId v : g.outputs) outputs.push_back({g.value(v).name, slot_of(v)});
  runtime::GraphExecutor exec(std::move(storage), std::move(ops), std::move(inputs), std::move(outputs));
  return CompiledModel(module, std::move(exec), std::move(timings), passes::to_string(g, plan.groups));
}

CompiledModel compile(const std::string& onnx_path, const CompileOptions& opt) {
  auto t0 = std::chrono::steady_clock::now();
  frontend::ImportOptions iopt;
  iopt.input_shapes = opt.input_shapes;
  graph::Graph g = frontend::import_onnx(onnx_path, iopt);
  double import_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  CompiledModel m = compile_graph(std::move(g), opt);
  auto timings = m.timings();
  timings.insert(timings.begin(), {"import", import_ms});
  return CompiledModel(m.module(), m.executor(), timings, m.fusion_summary());
}

}  // namespace tessel
