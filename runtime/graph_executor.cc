#include "runtime/graph_executor.h"

#include <fmt/format.h>

#include <chrono>
#include <cstring>

#include "ir/error.h"

namespace tessel::runtime {

namespace {
std::string describe(const NDArray& a) {
  return fmt::format("{}[{}]", a.dtype().str(), fmt::join(a.shape(), ", "));
}

int find_io(const std::vector<ExecutorIO>& ios, const std::string& name, const char* what) {
  for (size_t i = 0; i < ios.size(); ++i) {
    if (ios[i].name == name) return static_cast<int>(i);
  }
  std::vector<std::string> names;
  for (const auto& io : ios) names.push_back(io.name);
  throw Error(fmt::format("the model has no {} named '{}'; its {}s are: {}", what, name, what,
                          fmt::join(names, ", ")));
}
}  // namespace

// Holds the busy flag for one set_input or run. Two threads in them at once would race on the
// arrays; the second one gets an Error instead.
class GraphExecutor::ExclusiveUse {
 public:
  ExclusiveUse(BusyFlag& busy, const char* call) : busy_(busy) {
    if (busy_.held.exchange(true, std::memory_order_acquire)) {
      throw Error(fmt::format(
          "model {}: another thread is in set_input or run of the same model; give each thread "
          "its own copy of the Model (docs/runtime.md)",
          call));
    }
  }
  ~ExclusiveUse() { busy_.held.store(false, std::memory_order_release); }
  ExclusiveUse(const ExclusiveUse&) = delete;
  ExclusiveUse& operator=(const ExclusiveUse&) = delete;

 private:
  BusyFlag& busy_;
};

GraphExecutor::GraphExecutor(std::vector<NDArray> storage, std::vector<ExecutorOp> ops,
                             std::vector<ExecutorIO> inputs, std::vector<ExecutorIO> outputs)
    : storage_(std::move(storage)),
      ops_(std::move(ops)),
      inputs_(std::move(inputs)),
      outputs_(std::move(outputs)) {
  for (const auto& op : ops_) {
    std::vector<Arg> args;
    for (int s : op.args) args.emplace_back(storage_.at(s));
    call_args_.push_back(std::move(args));
  }
}

int GraphExecutor::input_index(const std::string& name) const {
  return find_io(inputs_, name, "input");
}
int GraphExecutor::output_index(const std::string& name) const {
  return find_io(outputs_, name, "output");
}

void GraphExecutor::set_input(int i, const NDArray& value) {
  if (i < 0 || i >= num_inputs()) {
    throw Error(
        fmt::format("input index {} is out of range; the model has {} inputs", i, num_inputs()));
  }
  ExclusiveUse use(busy_, "set_input");
  NDArray& dst = storage_[inputs_[i].storage];
  if (value.dtype() != dst.dtype() || value.shape() != dst.shape()) {
    throw Error(fmt::format("input '{}' is {} but the model expects {}", inputs_[i].name,
                            describe(value), describe(dst)));
  }
  std::memcpy(dst.raw_data(), value.raw_data(), dst.nbytes());
}

void GraphExecutor::run() {
  ExclusiveUse use(busy_, "run");
  for (size_t i = 0; i < ops_.size(); ++i) run_op(i);
}

std::vector<double> GraphExecutor::run_timed() {
  ExclusiveUse use(busy_, "run");
  std::vector<double> ms;
  for (size_t i = 0; i < ops_.size(); ++i) {
    auto start = std::chrono::steady_clock::now();
    run_op(i);
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                     .count());
  }
  return ms;
}

void GraphExecutor::run_op(size_t i) { ops_.at(i).fn.call(call_args_[i]); }

size_t GraphExecutor::storage_bytes() const {
  size_t total = 0;
  for (const auto& a : storage_) total += a.nbytes();
  return total;
}

}  // namespace tessel::runtime
