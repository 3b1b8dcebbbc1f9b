// Runs a compiled model: fused kernels in order over preallocated storage (one array per
// value; weights preloaded), with inputs and outputs by name or index. Needs no LLVM.
// One executor serves one thread at a time: set_input and run from a second thread while a first
// is in one of them is refused with an Error (their arrays would race). It cannot be copied (a
// copy would share those arrays); runtime::Model's copy gives a thread its own (docs/runtime.md).
#pragma once

#include <atomic>
#include <string>
#include <vector>

#include "runtime/module.h"
#include "runtime/ndarray.h"

namespace tessel::runtime {

struct ExecutorOp {
  std::string name;
  Function fn;
  std::vector<int> args;  // storage indices, in the kernel's argument order
};

struct ExecutorIO {
  std::string name;
  int storage;
};

class GraphExecutor {
 public:
  GraphExecutor() = default;
  GraphExecutor(std::vector<NDArray> storage, std::vector<ExecutorOp> ops,
                std::vector<ExecutorIO> inputs, std::vector<ExecutorIO> outputs);
  GraphExecutor(const GraphExecutor&) = delete;
  GraphExecutor& operator=(const GraphExecutor&) = delete;
  GraphExecutor(GraphExecutor&&) noexcept = default;
  GraphExecutor& operator=(GraphExecutor&&) noexcept = default;

  int num_inputs() const { return static_cast<int>(inputs_.size()); }
  int num_outputs() const { return static_cast<int>(outputs_.size()); }
  const std::string& input_name(int i) const { return inputs_.at(i).name; }
  const std::string& output_name(int i) const { return outputs_.at(i).name; }
  int input_index(const std::string& name) const;   // Error listing the inputs when unknown
  int output_index(const std::string& name) const;  // Error listing the outputs when unknown

  // Copies `value` into input i; its shape and dtype must match (Error naming the input).
  void set_input(int i, const NDArray& value);
  void set_input(const std::string& name, const NDArray& value) {
    set_input(input_index(name), value);
  }
  void run();
  // run() timing each kernel: the wall time of op i in milliseconds, in op order.
  std::vector<double> run_timed();
  // The output array itself: valid until the next run(); copy() it to keep it.
  NDArray get_output(int i) const { return storage_.at(outputs_.at(i).storage); }
  NDArray get_output(const std::string& name) const { return get_output(output_index(name)); }
  // The input array (for its shape and dtype; set_input copies into it).
  NDArray get_input(int i) const { return storage_.at(inputs_.at(i).storage); }
  const std::vector<ExecutorOp>& ops() const { return ops_; }
  const NDArray& storage(int i) const { return storage_.at(static_cast<size_t>(i)); }
  size_t storage_bytes() const;

 private:
  // Set while a thread is in set_input or run (held by an ExclusiveUse); a moved-to executor
  // starts clear.
  struct BusyFlag {
    BusyFlag() = default;
    BusyFlag(BusyFlag&&) noexcept {}
    BusyFlag& operator=(BusyFlag&&) noexcept { return *this; }
    std::atomic<bool> held{false};
  };
  class ExclusiveUse;

  void run_op(size_t i);

  BusyFlag busy_;
  std::vector<NDArray> storage_;
  std::vector<ExecutorOp> ops_;
  std::vector<ExecutorIO> inputs_, outputs_;
  std::vector<std::vector<Arg>> call_args_;
};

}  // namespace tessel::runtime
