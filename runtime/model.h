// A runnable model: a module of fused kernels, the executor plan that wires them (storage, kernel
// order, inputs, outputs; see docs/package-format.md for its JSON form) and the weights. Built by
// tessel::compile (JIT) or by load_package (a shared library, without LLVM); both run the same way.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "runtime/graph_executor.h"
#include "runtime/module.h"
#include "runtime/ndarray.h"

namespace tessel::runtime {

// One array of the executor: planned into a shared buffer, a named weight, or its own allocation.
struct StorageEntry {
  std::vector<int64_t> shape;
  DataType dtype;
  int buffer = -1;    // index into ExecutorPlan::buffer_bytes, or -1
  std::string param;  // name in the weights, or ""
  // Bytes into the buffer where the view starts (a Concat input written in place).
  int64_t offset = 0;
};

struct KernelEntry {
  std::string name;       // the module function
  std::vector<int> args;  // storage indices, in argument order
  std::string ops;        // "Conv+Add+Relu", for profiles
  double flops = 0;       // multiply-adds x 2 of its conv/matmul work; 0 when not counted
};

struct ExecutorPlan {
  static constexpr int kFormatVersion = 1;
  std::string target;                     // Target::str()
  std::string arch;                       // "x86_64", "aarch64"
  std::vector<std::string> cpu_features;  // x86 features the code needs ("avx2", "avx512f", ...)
  std::vector<int64_t> buffer_bytes;
  std::vector<StorageEntry> storage;
  std::vector<KernelEntry> kernels;
  std::vector<ExecutorIO> inputs, outputs;

  std::string to_json() const;
  // Error naming `what` for malformed JSON, a missing field, another format version or an
  // inconsistent plan (check_consistent).
  static ExecutorPlan from_json(const std::string& text, const std::string& what);
  // Error naming `what` for an inconsistent plan: no kernels, an index out of range, a negative
  // buffer size, an input or output listed twice, an input that is a weight or another input's
  // storage.
  void check_consistent(const std::string& what) const;
  // Error when this machine cannot run the plan's code (another architecture, a missing CPU
  // feature).
  void check_host(const std::string& what) const;
};

// Per-kernel wall time of one profiled run.
struct KernelTime {
  const KernelEntry* kernel;
  double ms;
};

// A Model holds the state of one run (its inputs, intermediate buffers and outputs) and shares
// its code (the Module) and its weights. Threads: use one Model per thread. Copying a Model is
// how to get another: the copy shares the module and the weights (kernels only read them) and
// has its own inputs, buffers and outputs, holding the original's current values; copy while no
// thread runs the original. One Model used by two threads at once is an error: set_input or run
// while another thread is in one of them throws tessel::Error, and get_output meanwhile races.
class Model {
 public:
  Model() = default;
  // Allocates the storage (weights from `params`, by StorageEntry::param) and binds the kernels.
  Model(Module module, ExecutorPlan plan, const std::map<std::string, NDArray>& params);
  Model(const Model& other);
  Model& operator=(const Model& other);
  Model(Model&&) noexcept = default;
  Model& operator=(Model&&) noexcept = default;

  int num_inputs() const { return executor_.num_inputs(); }
  int num_outputs() const { return executor_.num_outputs(); }
  const std::string& input_name(int i) const { return executor_.input_name(i); }
  const std::string& output_name(int i) const { return executor_.output_name(i); }
  void set_input(const std::string& name, const NDArray& value) {
    executor_.set_input(name, value);
  }
  void set_input(int i, const NDArray& value) { executor_.set_input(i, value); }
  void run() { executor_.run(); }
  std::vector<KernelTime> run_profiled();
  // Valid until the next run(); copy() to keep.
  NDArray get_output(int i) const { return executor_.get_output(i); }
  NDArray get_output(const std::string& name) const { return executor_.get_output(name); }

  const Module& module() const { return module_; }
  const GraphExecutor& executor() const { return executor_; }
  const ExecutorPlan& plan() const { return plan_; }
  // The weights by name (what mod.params holds).
  std::map<std::string, NDArray> params() const;

 private:
  // Binds the plan's kernels over `storage` (one array per StorageEntry).
  void bind(std::vector<NDArray> storage);

  Module module_;
  ExecutorPlan plan_;
  GraphExecutor executor_;
};

// mod.params: the weights in the binary format of docs/package-format.md.
std::string save_params(const std::map<std::string, NDArray>& params);
std::map<std::string, NDArray> load_params(const std::string& bytes, const std::string& what);

// A package: a tar of mod.so, mod.json and mod.params. write_package writes atomically (a temporary
// file renamed over `path`, which must be a regular file or absent: runtime/output_file.h).
// load_package checks the format version, the plan's consistency, the host and the weights, and
// loads the library, whose kernel table must list every kernel of the plan
// (docs/package-format.md).
void write_package(const std::string& path, const std::string& library_path,
                   const ExecutorPlan& plan, const std::map<std::string, NDArray>& params);
Model load_package(const std::string& path);

}  // namespace tessel::runtime
