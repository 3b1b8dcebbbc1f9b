// LLVM target setup shared by codegen and the JIT: one-time LLVM initialization, TargetMachine
// creation for a tessel::Target, and machine-code emission (assembly text or an object file).
// Internal to codegen/: includes LLVM headers.
#pragma once

#include <llvm/Support/CodeGen.h>
#include <llvm/Target/TargetMachine.h>

#include <memory>
#include <string>

#include "codegen/target.h"

namespace llvm {
class MCSubtargetInfo;
class Module;
}  // namespace llvm

namespace tessel::codegen {

// Registers every LLVM target, asm printer and parser; safe to call from any thread, any number
// of times.
void initialize_llvm();

// The LLVM target for a triple; throws tessel::Error for an unknown or unsupported triple.
const llvm::Target& lookup_llvm_target(const std::string& triple);

// Subtarget info for (triple, cpu, features), used to query CPUs and features.
std::unique_ptr<llvm::MCSubtargetInfo> create_subtarget_info(const Target& target);

// A TargetMachine with the target's cpu/features, PIC relocations and CodeGenOptLevel::Aggressive.
std::unique_ptr<llvm::TargetMachine> create_target_machine(const Target& target);

// Runs the code generator on `module` and returns the assembly text or object bytes. Code
// generation rewrites the IR (CodeGenPrepare), so the module is spent afterwards.
std::string emit_machine_code(llvm::Module& module, llvm::TargetMachine& tm,
                              llvm::CodeGenFileType type);

}  // namespace tessel::codegen
