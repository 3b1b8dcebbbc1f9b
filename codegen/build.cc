#include "codegen/build.h"

#include <fmt/format.h>
#include <llvm/AsmParser/Parser.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/raw_ostream.h>

#include "codegen/kernel_objects.h"
#include "codegen/llvm/compile_module.h"
#include "codegen/llvm/kernel_table.h"
#include "codegen/llvm/target_machine.h"
#include "runtime/c_runtime_api.h"
#include "runtime/jit.h"

namespace tessel {
namespace {

using codegen::ArgNames;
using codegen::compile_module;
using codegen::RuntimeLinkage;

std::string ir_text(const llvm::Module& module) {
  std::string text;
  llvm::raw_string_ostream os(text);
  module.print(os, nullptr);
  return text;
}

// Assembly for IR text, in a fresh context (the JIT owns the original module by then).
std::string assembly_from_ir(const std::string& ir, const Target& target) {
  llvm::LLVMContext context;
  llvm::SMDiagnostic diag;
  std::unique_ptr<llvm::Module> module = llvm::parseAssemblyString(ir, diag, context);
  TESSEL_ICHECK(module != nullptr) << "cannot re-parse generated IR: " << diag.getMessage().str();
  auto tm = codegen::create_target_machine(target);
  return codegen::emit_machine_code(*module, *tm, llvm::CodeGenFileType::AssemblyFile);
}

}  // namespace

runtime::Module build(const std::vector<PrimFunc>& funcs, const Target& target) {
  target.check_runs_on_host("build");
  codegen::CompiledModule c =
      compile_module(funcs, target, RuntimeLinkage::kSymbols, ArgNames::kInMessages);
  runtime::JitModuleSource source;
  source.ir_text = ir_text(*c.module);
  for (const PrimFunc& f : funcs) source.entry_names.push_back(f->name);
  // Assembly is made only when asked for: tuners build thousands of modules and never read it.
  source.make_assembly = [ir = source.ir_text, target] { return assembly_from_ir(ir, target); };
  source.module = std::move(c.module);
  source.context = std::move(c.context);
  return runtime::JitSession::shared()->add_module(std::move(source));
}

runtime::Module build(const PrimFunc& func, const Target& target) {
  return build(std::vector<PrimFunc>{func}, target);
}

runtime::Module build_cached(const std::vector<PrimFunc>& funcs, const Target& target) {
  target.check_runs_on_host("build");
  std::optional<KernelCache> cache = KernelCache::from_environment();
  KernelObjects objects =
      compile_kernel_objects(funcs, target, {.cache = cache ? &*cache : nullptr});
  return runtime::JitSession::shared()->add_objects(objects.objects, "the kernels");
}

tir::PipelineOptions pipeline_options(const CpuModel& cpu) {
  tir::PipelineOptions opt;
  opt.parallel_threads = cpu.cores;
  return opt;
}

std::string emit_llvm_ir(const std::vector<PrimFunc>& funcs, const Target& target) {
  return ir_text(
      *compile_module(funcs, target, RuntimeLinkage::kSymbols, ArgNames::kInMessages).module);
}

std::string emit_assembly(const std::vector<PrimFunc>& funcs, const Target& target) {
  codegen::CompiledModule c =
      compile_module(funcs, target, RuntimeLinkage::kSymbols, ArgNames::kInMessages);
  return codegen::emit_machine_code(*c.module, *c.tm, llvm::CodeGenFileType::AssemblyFile);
}

std::string emit_object(const std::vector<PrimFunc>& funcs, const Target& target) {
  // The object carries the kernel table its loader reads.
  codegen::CompiledModule c = compile_module(
      funcs, target, RuntimeLinkage::kPointers, ArgNames::kInMessages, [&](llvm::Module& module) {
        std::vector<std::pair<std::string, std::string>> entries;
        for (const PrimFunc& f : funcs) entries.emplace_back(f->name, f->name);
        codegen::add_kernel_table(module, entries);
      });
  return codegen::emit_machine_code(*c.module, *c.tm, llvm::CodeGenFileType::ObjectFile);
}

void export_library(const std::vector<PrimFunc>& funcs, const Target& target,
                    const std::string& path) {
  if (!target.runs_on_host()) {
    throw Error(
        fmt::format("export_library: linking a shared library for {} needs a cross linker; "
                    "use emit_object and link it with the target's toolchain",
                    target.triple));
  }
  std::optional<KernelCache> cache = KernelCache::from_environment();
  link_shared_library(
      compile_kernel_objects(funcs, target, {.cache = cache ? &*cache : nullptr}).objects, path);
}

}  // namespace tessel
