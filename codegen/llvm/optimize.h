// LLVM's new-pass-manager O3 pipeline for a target machine (its TargetTransformInfo drives
// vectorization and unrolling costs), with loop and SLP vectorization and unrolling enabled.
#pragma once

namespace llvm {
class Module;
class TargetMachine;
}  // namespace llvm

namespace tessel::codegen {

void optimize(llvm::Module& module, llvm::TargetMachine& tm);

}  // namespace tessel::codegen
