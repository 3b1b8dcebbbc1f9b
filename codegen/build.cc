#include "codegen/build.h"

#include <fmt/format.h>
#include <llvm/AsmParser/Parser.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/GlobalVariable.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/TargetParser/Host.h>
#include <llvm/TargetParser/Triple.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>

#include "codegen/llvm/codegen_cpu.h"
#include "codegen/llvm/optimize.h"
#include "codegen/llvm/target_machine.h"
#include "runtime/c_runtime_api.h"
#include "runtime/jit.h"

namespace tessel {
namespace {

struct Compiled {
  std::unique_ptr<llvm::LLVMContext> context;
  std::unique_ptr<llvm::Module> module;
  std::unique_ptr<llvm::TargetMachine> tm;
};

// The constant TesselKernelTable (runtime/c_runtime_api.h) listing `funcs`' entry points, exported
// as TESSEL_KERNEL_TABLE_SYMBOL: a loader calls only the kernels it lists.
void add_kernel_table(llvm::Module& module, const std::vector<PrimFunc>& funcs) {
  llvm::LLVMContext& ctx = module.getContext();
  auto* ptr = llvm::PointerType::getUnqual(ctx);
  auto* i32 = llvm::Type::getInt32Ty(ctx);
  auto* entry_type = llvm::StructType::get(ctx, {ptr, ptr});
  std::vector<llvm::Constant*> entries;
  for (const PrimFunc& f : funcs) {
    llvm::Constant* text = llvm::ConstantDataArray::getString(ctx, f->name);
    auto* name =
        new llvm::GlobalVariable(module, text->getType(), true, llvm::GlobalValue::PrivateLinkage,
                                 text, f->name + ".kernel_name");
    name->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
    entries.push_back(llvm::ConstantStruct::get(entry_type, {name, module.getFunction(f->name)}));
  }
  auto* array_type = llvm::ArrayType::get(entry_type, entries.size());
  auto* kernels =
      new llvm::GlobalVariable(module, array_type, true, llvm::GlobalValue::PrivateLinkage,
                               llvm::ConstantArray::get(array_type, entries), "tessel.kernels");
  auto* table_type = llvm::StructType::get(ctx, {i32, i32, ptr});
  llvm::Constant* table = llvm::ConstantStruct::get(
      table_type, {llvm::ConstantInt::get(i32, TESSEL_KERNEL_TABLE_VERSION),
                   llvm::ConstantInt::get(i32, entries.size()), kernels});
  new llvm::GlobalVariable(module, table_type, true, llvm::GlobalValue::ExternalLinkage, table,
                           TESSEL_KERNEL_TABLE_SYMBOL);
}

// Generates, verifies and optimizes the LLVM module for `funcs`.
Compiled compile(const std::vector<PrimFunc>& funcs, const Target& target,
                 codegen::RuntimeLinkage linkage = codegen::RuntimeLinkage::kSymbols) {
  if (funcs.empty()) throw Error("build: no functions to compile");
  Compiled c;
  c.tm = codegen::create_target_machine(target);
  c.context = std::make_unique<llvm::LLVMContext>();
  c.module =
      std::make_unique<llvm::Module>(funcs.size() == 1 ? funcs[0]->name : "tessel", *c.context);
  c.module->setTargetTriple(target.triple);
  c.module->setDataLayout(c.tm->createDataLayout());
  codegen::CodeGenCPU codegen(*c.module, target, linkage);
  for (const PrimFunc& f : funcs) codegen.add_function(f);
  // Objects for shared libraries carry the kernel table their loader reads.
  if (linkage == codegen::RuntimeLinkage::kPointers) add_kernel_table(*c.module, funcs);
  std::string problems;
  llvm::raw_string_ostream os(problems);
  TESSEL_ICHECK(!llvm::verifyModule(*c.module, &os)) << "invalid LLVM IR generated:\n" << problems;
  codegen::optimize(*c.module, *c.tm);
  return c;
}

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

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw Error(fmt::format("cannot write {}", path));
}

// Runs argv (found on PATH) and waits; stdout and stderr go to *log. Returns the exit status.
int run_command(const std::vector<std::string>& argv, std::string* log) {
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) throw Error("run_command: pipe failed");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], 1);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], 2);
  posix_spawn_file_actions_addclose(&actions, pipe_fds[0]);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid;
  int err = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(pipe_fds[1]);
  if (err != 0) {
    close(pipe_fds[0]);
    throw Error(fmt::format("cannot run '{}': {}", argv[0], std::strerror(err)));
  }
  char buf[4096];
  for (ssize_t n; (n = read(pipe_fds[0], buf, sizeof buf)) > 0;)
    log->append(buf, static_cast<size_t>(n));
  close(pipe_fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace

runtime::Module build(const std::vector<PrimFunc>& funcs, const Target& target) {
  llvm::Triple triple(target.triple), host(llvm::sys::getProcessTriple());
  if (triple.getArch() != host.getArch() || triple.getOS() != host.getOS()) {
    throw Error(fmt::format("build: cannot run code for {} on this {} host; use emit_object",
                            target.triple, host.str()));
  }
  Compiled c = compile(funcs, target);
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

std::string emit_llvm_ir(const std::vector<PrimFunc>& funcs, const Target& target) {
  return ir_text(*compile(funcs, target).module);
}

std::string emit_assembly(const std::vector<PrimFunc>& funcs, const Target& target) {
  Compiled c = compile(funcs, target);
  return codegen::emit_machine_code(*c.module, *c.tm, llvm::CodeGenFileType::AssemblyFile);
}

std::string emit_object(const std::vector<PrimFunc>& funcs, const Target& target) {
  Compiled c = compile(funcs, target, codegen::RuntimeLinkage::kPointers);
  return codegen::emit_machine_code(*c.module, *c.tm, llvm::CodeGenFileType::ObjectFile);
}

void export_library(const std::vector<PrimFunc>& funcs, const Target& target,
                    const std::string& path) {
  llvm::Triple triple(target.triple), host(llvm::sys::getProcessTriple());
  if (triple.getArch() != host.getArch() || triple.getOS() != host.getOS()) {
    throw Error(
        fmt::format("export_library: linking a shared library for {} needs a cross linker; "
                    "use emit_object and link it with the target's toolchain",
                    target.triple));
  }
  std::string object = path + ".o";
  write_file(object, emit_object(funcs, target));
  std::string log;
  int rc = run_command({"cc", "-shared", "-o", path, object, "-lm"}, &log);
  std::remove(object.c_str());
  if (rc != 0)
    throw Error(fmt::format("export_library: linking {} failed (cc exit {}): {}", path, rc, log));
}

}  // namespace tessel
