// Runs a compiled model: fused kernels in order over preallocated storage (one array per
// value; weights preloaded), with inputs and outputs by name or index. Needs no LLVM.
#pragma once

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
  GraphExecutor(std::vector<NDArray> storage, std::vector<ExecutorOp> ops, std::vector<ExecutorIO> inputs,
                std::vector<ExecutorIO> outputs);

  int num_inputs() const { return static_cast<int>(inputs_.size()); }
  int num_outputs() const { return static_cast<int>(outputs_.size()); }
  const std::string& input_name(int i) const { return inputs_.at(i).name; }
  const std::string& output_name(int i) const { return outputs_.at(i).name; }
  int input_index(const std::string& name) const;   // Error listing the inputs when unknown
  int output_index(const std::string& name) const;  // Error listing the outputs when unknown

  // Copies `value` into input i; its shape and dtype must match (Error naming the input).
  void set_input(int i, const NDArray& value);
  void set_input(const std::string& name, const NDArray& value) { set_input(input_index(name), value); }
  void run();
  // Runs kernel i alone (for per-kernel profiles); run_op over every i in order equals run().
  void run_op(size_t i);
  // The output array itself: valid until the next run(); copy() it to keep it.
  NDArray get_output(int i) const { return storage_.at(outputs_.at(i).storage); }
  NDArray get_output(const std::string& name) const { return get_output(output_index(name)); }
  // The input array (for its shape and dtype; set_input copies into it).
  NDArray get_input(int i) const { return storage_.at(inputs_.at(i).storage); }
  const std::vector<ExecutorOp>& ops() const { return ops_; }
  const NDArray& storage(int i) const { return storage_.at(static_cast<size_t>(i)); }
  size_t storage_bytes() const;

 private:
  std::vector<NDArray> storage_;
  std::vector<ExecutorOp> ops_;
  std::vector<ExecutorIO> inputs_, outputs_;
  std::vector<std::vector<Arg>> call_args_;
};

}  // namespace tessel::runtime
