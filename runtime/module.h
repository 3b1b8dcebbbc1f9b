// Modules hold compiled functions; Function calls them with NDArray and scalar arguments.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "runtime/c_runtime_api.h"
#include "runtime/ndarray.h"

namespace tessel::runtime {

// One argument of a call: an NDArray, an integer or a float.
class Arg {
 public:
  Arg(const NDArray& a) : array_(a) {}  // NOLINT
  template <class T, class = std::enable_if_t<std::is_integral_v<T>>>
  Arg(T v) : code_(kTesselArgInt) {
    value_.v_int64 = static_cast<int64_t>(v);
  }  // NOLINT
  Arg(double v) : code_(kTesselArgFloat) { value_.v_float64 = v; }  // NOLINT
  Arg(float v) : Arg(static_cast<double>(v)) {}                     // NOLINT
  // Fills the packed value; arrays pass their DLTensor.
  TesselValue value() const;
  int32_t type_code() const { return array_.defined() ? kTesselArgDLTensor : code_; }

 private:
  NDArray array_;
  TesselValue value_{};
  int32_t code_ = kTesselArgInt;
};

class Function {
 public:
  using Packed = std::function<void(const TesselValue*, const int32_t*, int32_t)>;
  Function() = default;
  Function(std::string name, Packed fn) : name_(std::move(name)), fn_(std::move(fn)) {}
  bool defined() const { return static_cast<bool>(fn_); }
  const std::string& name() const { return name_; }
  // Calls the function; errors reported by the kernel are thrown as tessel::Error.
  void call(const std::vector<Arg>& args) const;
  template <class... Args>
  void operator()(Args&&... args) const {
    call({Arg(std::forward<Args>(args))...});
  }
  // Wraps a raw generated entry point; its nonzero return becomes an Error with the last message.
  static Function from_backend(std::string name, TesselBackendFunc fn,
                               std::shared_ptr<void> keep_alive);

 private:
  std::string name_;
  Packed fn_;
};

class ModuleNode {
 public:
  virtual ~ModuleNode() = default;
  // Undefined Function when there is no such function.
  virtual Function get_function(const std::string& name) = 0;
  virtual std::vector<std::string> function_names() const = 0;
  // Text of the module in a format: "ll" (LLVM IR), "asm", or "" for the default.
  virtual std::string source(const std::string& format) const = 0;
};

class Module {
 public:
  Module() = default;
  explicit Module(std::shared_ptr<ModuleNode> node) : node_(std::move(node)) {}
  bool defined() const { return static_cast<bool>(node_); }
  // Throws tessel::Error naming the function and listing those available when it is missing.
  Function get_function(const std::string& name) const;
  std::string source(const std::string& format = "") const { return node_->source(format); }
  ModuleNode* node() const { return node_.get(); }

 private:
  std::shared_ptr<ModuleNode> node_;
};

}  // namespace tessel::runtime
