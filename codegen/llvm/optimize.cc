#include "codegen/llvm/optimize.h"

#include <llvm/Analysis/TargetLibraryInfo.h>
#include <llvm/IR/Module.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/TargetParser/Triple.h>

namespace tessel::codegen {

void optimize(llvm::Module& module, llvm::TargetMachine& tm) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;

  // PipelineTuningOptions leave vectorization off by default; clang turns it on at -O3 too.
  llvm::PipelineTuningOptions options;
  options.LoopVectorization = true;
  options.SLPVectorization = true;
  options.LoopUnrolling = true;
  options.LoopInterleaving = true;
  llvm::PassBuilder pb(&tm, options);

  // Registered first so that it wins over the default: libm calls are known for this triple.
  llvm::TargetLibraryInfoImpl tlii{llvm::Triple(module.getTargetTriple())};
  fam.registerPass([&] { return llvm::TargetLibraryAnalysis(tlii); });
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);

  llvm::ModulePassManager mpm = pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
  mpm.run(module, mam);
}

}  // namespace tessel::codegen
