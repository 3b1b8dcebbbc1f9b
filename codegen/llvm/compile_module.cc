#include "codegen/llvm/compile_module.h"

#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

#include "codegen/llvm/optimize.h"
#include "codegen/llvm/target_machine.h"
#include "ir/error.h"

namespace tessel::codegen {

CompiledModule compile_module(const std::vector<PrimFunc>& funcs, const Target& target,
                              RuntimeLinkage linkage, ArgNames arg_names,
                              const std::function<void(llvm::Module&)>& before_optimize) {
  if (funcs.empty()) throw Error("build: no functions to compile");
  CompiledModule c;
  c.tm = create_target_machine(target);
  c.context = std::make_unique<llvm::LLVMContext>();
  c.module =
      std::make_unique<llvm::Module>(funcs.size() == 1 ? funcs[0]->name : "tessel", *c.context);
  c.module->setTargetTriple(target.triple);
  c.module->setDataLayout(c.tm->createDataLayout());
  CodeGenCPU codegen(*c.module, target, linkage, arg_names);
  for (const PrimFunc& f : funcs) codegen.add_function(f);
  if (before_optimize) before_optimize(*c.module);
  std::string problems;
  llvm::raw_string_ostream os(problems);
  TESSEL_ICHECK(!llvm::verifyModule(*c.module, &os)) << "invalid LLVM IR generated:\n" << problems;
  optimize(*c.module, *c.tm);
  return c;
}

}  // namespace tessel::codegen
