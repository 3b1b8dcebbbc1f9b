#include "codegen/llvm/target_machine.h"

#include <fmt/format.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>

#include <mutex>

#include "ir/error.h"

namespace tessel::codegen {

void initialize_llvm() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeAllTargetInfos();
    llvm::InitializeAllTargets();
    llvm::InitializeAllTargetMCs();
    llvm::InitializeAllAsmPrinters();
    llvm::InitializeAllAsmParsers();
  });
}

const llvm::Target& lookup_llvm_target(const std::string& triple) {
  initialize_llvm();
  std::string error;
  const llvm::Target* t = llvm::TargetRegistry::lookupTarget(triple, error);
  if (t == nullptr) throw Error(fmt::format("unsupported target triple '{}': {}", triple, error));
  return *t;
}

std::unique_ptr<llvm::MCSubtargetInfo> create_subtarget_info(const Target& target) {
  const llvm::Target& t = lookup_llvm_target(target.triple);
  return std::unique_ptr<llvm::MCSubtargetInfo>(
      t.createMCSubtargetInfo(target.triple, target.cpu, target.features));
}

std::unique_ptr<llvm::TargetMachine> create_target_machine(const Target& target) {
  const llvm::Target& t = lookup_llvm_target(target.triple);
  llvm::TargetOptions options;
  std::unique_ptr<llvm::TargetMachine> tm(
      t.createTargetMachine(target.triple, target.cpu, target.features, options, llvm::Reloc::PIC_,
                            std::nullopt, llvm::CodeGenOptLevel::Aggressive));
  TESSEL_ICHECK(tm != nullptr) << "no TargetMachine for " << target.str();
  return tm;
}

std::string emit_machine_code(llvm::Module& module, llvm::TargetMachine& tm,
                              llvm::CodeGenFileType type) {
  llvm::SmallString<0> out;
  llvm::raw_svector_ostream os(out);
  llvm::legacy::PassManager passes;
  bool unsupported = tm.addPassesToEmitFile(passes, os, nullptr, type);
  TESSEL_ICHECK(!unsupported) << "the target cannot emit this file type";
  passes.run(module);
  return std::string(out.str());
}

}  // namespace tessel::codegen
