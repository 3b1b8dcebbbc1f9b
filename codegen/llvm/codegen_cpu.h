// CodeGenCPU: the host layer over CodeGenLLVM (x86-64 and AArch64 differ only in their Target).
// Each PrimFunc becomes the entry `int32_t NAME(const TesselValue*, const int32_t*, int32_t)`
// that checks every argument against the PrimFunc's buffers and calls an internal NAME_compute
// with noalias buffer pointers. Parallel loops are outlined into closures run by
// TesselBackendParallelLaunch (a parallel loop nested in another runs serially inside its task).
// Error messages omit the function name: Function::from_backend prefixes it.
// With RuntimeLinkage::kPointers (shared libraries) the Tessel* runtime functions are called
// through pointer variables `__tessel_fp_<name>` that the loader fills (runtime/package.h), so a
// library needs no runtime symbols from the process that loads it. The variables are weak: every
// kernel object defines them, and linking several objects keeps one of each.
#pragma once

#include "codegen/llvm/codegen_llvm.h"
#include "ir/stmt.h"

namespace tessel::codegen {

enum class RuntimeLinkage { kSymbols, kPointers };

// How argument errors name an argument: "argument 1 (B)" or, for code shared by kernels whose
// buffers have other names (codegen/kernel_objects.h), "argument 1".
enum class ArgNames { kInMessages, kPositional };

class CodeGenCPU : public CodeGenLLVM {
 public:
  CodeGenCPU(llvm::Module& module, const Target& target,
             RuntimeLinkage linkage = RuntimeLinkage::kSymbols,
             ArgNames arg_names = ArgNames::kInMessages);
  // Emits the entry point named func->name and its helpers into the module.
  void add_function(const PrimFunc& func);

 protected:
  void emit_parallel_for(const ForNode* op) override;
  void emit_allocate(const AllocateNode* op) override;
  void emit_assert(const AssertStmtNode* op) override;

 private:
  // Allocations up to this size (compile-time constant) live on the stack.
  static constexpr int64_t kMaxStackBytes = 32 * 1024;
  // A parallel loop's tasks per pool thread (emit_parallel_for): the pool lets a thread that is
  // done take the tasks left in a slower one's share. On the 2-core Intel Xeon VM, whose virtual
  // CPUs run slowly for seconds at a time, 8 tasks a thread against 1 (every kernel of the model,
  // the builds in turns, 10-12 rounds at two threads): median end-to-end time ResNet-50 39.4 ->
  // 34.5 ms, DenseNet-121 30.0 -> 26.0, SqueezeNet 3.18 -> 2.84, the transformer encoder 5.07 ->
  // 4.67, MobileNetV2 3.26 -> 3.37; the fastest rounds within 6% either way.
  static constexpr int64_t kTasksPerThread = 8;

  // Entry-point pieces, in the order add_function runs them.
  struct TensorArg {
    llvm::Value* strides;            // int64_t*, may be NULL
    std::vector<llvm::Value*> dims;  // shape[d] as i64
  };
  TensorArg unpack_tensor(int index, llvm::Value* handle);
  void unpack_scalar(int index, llvm::Value* packed, llvm::Value* code);
  void bind_shape_vars(int index, const TensorArg& tensor);
  void check_shape(int index, const TensorArg& tensor);
  void check_compact_strides(int index, const TensorArg& tensor);
  std::string describe_arg(int index) const;  // "argument i (B)" or "argument i", %-escaped

  // Runs `on_failure` (which must end the block) when `ok` is false; continues where it is true.
  void emit_unless(llvm::Value* ok, const std::function<void()>& on_failure);
  // When `ok` is false: formats the message (a printf format with `args`) into the last error
  // and returns -1 from the current function.
  void check_or_fail(llvm::Value* ok, const std::string& format,
                     const std::vector<llvm::Value*>& args = {});
  // Frees the live workspaces and returns `code` from the current function.
  void emit_return(llvm::Value* code);
  llvm::FunctionCallee free_workspace();
  llvm::FunctionCallee runtime_function(const char* name, llvm::Type* result,
                                        std::vector<llvm::Type*> params, bool vararg = false);
  // Runs `emit` with no live workspaces and `in_parallel` set, restoring both afterwards.
  void with_task_state(bool in_parallel, const std::function<void()>& emit);

  RuntimeLinkage linkage_;
  ArgNames arg_names_;
  PrimFunc func_;
  int num_parallel_ = 0;
  bool in_parallel_ = false;
  std::vector<llvm::Value*> live_workspaces_;
  std::unordered_map<llvm::Function*, llvm::Value*> message_buffers_;  // one per function
  llvm::StructType* dltensor_type_;
};

}  // namespace tessel::codegen
