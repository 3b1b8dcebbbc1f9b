// tir to optimized LLVM IR: one module in its own context, with the TargetMachine that optimized
// it (which emit_machine_code then uses). What build, emit_* and the kernel objects share.
// Internal to codegen/.
#pragma once

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Target/TargetMachine.h>

#include <functional>
#include <memory>
#include <vector>

#include "codegen/llvm/codegen_cpu.h"
#include "codegen/target.h"
#include "ir/stmt.h"

namespace tessel::codegen {

struct CompiledModule {
  std::unique_ptr<llvm::LLVMContext> context;
  std::unique_ptr<llvm::Module> module;
  std::unique_ptr<llvm::TargetMachine> tm;
};

// Generates the functions, runs `before_optimize` on the module (e.g. to add a kernel table),
// verifies it and runs the O3 pipeline. An empty `funcs` is an Error.
CompiledModule compile_module(const std::vector<PrimFunc>& funcs, const Target& target,
                              RuntimeLinkage linkage, ArgNames arg_names,
                              const std::function<void(llvm::Module&)>& before_optimize = {});

}  // namespace tessel::codegen
