// The ORC JIT owner. A JitSession owns one llvm::orc::LLJIT; every module compiled into it holds
// the session alive (a shared_ptr), and each module lives in its own JITDylib whose resources are
// removed when the module dies, so a tuner can build and drop thousands of candidates. Only this
// file's .cc and codegen/ include LLVM; here LLVM types are only forward-declared.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "runtime/module.h"

namespace llvm {
class LLVMContext;
class Module;
}  // namespace llvm

namespace tessel::runtime {

// What codegen hands to the JIT for one module.
struct JitModuleSource {
  std::unique_ptr<llvm::LLVMContext> context;  // moves with its module into the JIT
  std::unique_ptr<llvm::Module> module;
  std::vector<std::string> entry_names;        // functions with the TesselBackendFunc signature
  std::string ir_text;                         // source("ll")
  std::function<std::string()> make_assembly;  // source("asm"), run on first request
};

class JitSession : public std::enable_shared_from_this<JitSession> {
 public:
  // The session that builds share. No static owns it: the process keeps only a weak reference,
  // so it is created on demand and destroyed with the last module (or holder) using it. Keep the
  // returned pointer to reuse one session across builds that drop their modules.
  static std::shared_ptr<JitSession> shared();
  static std::shared_ptr<JitSession> create();
  ~JitSession();
  JitSession(const JitSession&) = delete;
  JitSession& operator=(const JitSession&) = delete;

  // Compiles the module now (so errors surface here, as tessel::Error) and returns it.
  Module add_module(JitModuleSource source);
  // Links relocatable objects that hold a kernel table (codegen/kernel_objects.h) into this
  // process, fills their runtime pointer slots, and serves the table's kernels. `what` names the
  // code in errors.
  Module add_objects(const std::vector<std::string>& objects, const std::string& what);
  // Modules of this session that are still alive.
  int num_live_modules() const;

  struct Impl;

 private:
  JitSession();
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessel::runtime
