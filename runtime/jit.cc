#include "runtime/jit.h"

#include <fmt/format.h>
#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/ExecutorProcessControl.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/TaskDispatch.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>

#include <atomic>
#include <mutex>

#include "ir/error.h"
#include "runtime/c_runtime_api.h"
#include "runtime/kernel_table.h"

namespace tessel::runtime {

struct JitSession::Impl {
  std::unique_ptr<llvm::orc::LLJIT> jit;
  llvm::orc::JITDylib* runtime_symbols = nullptr;  // Tessel* functions, then the process (libm)
  std::atomic<int> next_id{0};
  std::atomic<int> live_modules{0};
};

namespace {

template <class T>
T take(llvm::Expected<T> value, const std::string& what) {
  if (!value) throw Error(what + ": " + llvm::toString(value.takeError()));
  return std::move(*value);
}

void check(llvm::Error err, const std::string& what) {
  if (err) throw Error(what + ": " + llvm::toString(std::move(err)));
}

// Registered by address: executables link the runtime statically, so dlsym cannot see them.
llvm::orc::SymbolMap runtime_symbol_map(llvm::orc::LLJIT& jit) {
  llvm::orc::SymbolMap map;
  auto add = [&](const char* name, auto* fn) {
    map[jit.mangleAndIntern(name)] = {
        llvm::orc::ExecutorAddr::fromPtr(fn),
        llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable};
  };
  for (const auto& [name, fn] : runtime_api()) add(name.c_str(), fn);
  add("TesselGetLastError", reinterpret_cast<void*>(&TesselGetLastError));
  return map;
}

// Owns a JITDylib: removing it frees its code. Holds the session, which must outlive the removal.
class DylibOwner {
 public:
  DylibOwner(std::shared_ptr<JitSession> session, JitSession::Impl& impl,
             llvm::orc::JITDylib& dylib)
      : session_(std::move(session)), impl_(impl), dylib_(dylib) {
    ++impl_.live_modules;
  }
  ~DylibOwner() {
    if (auto err = impl_.jit->getExecutionSession().removeJITDylib(dylib_)) {
      llvm::logAllUnhandledErrors(std::move(err), llvm::errs(), "tessel: freeing a JIT module: ");
    }
    --impl_.live_modules;
  }
  DylibOwner(const DylibOwner&) = delete;
  DylibOwner& operator=(const DylibOwner&) = delete;

 private:
  std::shared_ptr<JitSession> session_;
  JitSession::Impl& impl_;
  llvm::orc::JITDylib& dylib_;
};

class JitModuleNode : public ModuleNode, public std::enable_shared_from_this<JitModuleNode> {
 public:
  using Entries = std::vector<std::pair<std::string, TesselBackendFunc>>;
  JitModuleNode(std::unique_ptr<DylibOwner> dylib, Entries entries, std::string ir,
                std::function<std::string()> make_assembly)
      : dylib_(std::move(dylib)),
        entries_(std::move(entries)),
        ir_(std::move(ir)),
        make_assembly_(std::move(make_assembly)) {}

  Function get_function(const std::string& name) override {
    for (const auto& [entry, fn] : entries_) {
      if (entry == name) return Function::from_backend(name, fn, shared_from_this());
    }
    return Function();
  }

  std::vector<std::string> function_names() const override {
    std::vector<std::string> names;
    for (const auto& entry : entries_) names.push_back(entry.first);
    return names;
  }

  std::string source(const std::string& format) const override {
    if (format.empty() || format == "ll") return ir_;
    if (format == "asm") {
      std::call_once(assembly_once_, [&] { assembly_ = make_assembly_(); });
      return assembly_;
    }
    throw Error(fmt::format(
        "unknown source format '{}' for a JIT module (expected \"ll\" or \"asm\")", format));
  }

 private:
  std::unique_ptr<DylibOwner> dylib_;
  Entries entries_;
  std::string ir_;
  std::function<std::string()> make_assembly_;
  mutable std::once_flag assembly_once_;
  mutable std::string assembly_;
};

}  // namespace

JitSession::JitSession() : impl_(std::make_unique<Impl>()) {
  static std::once_flag init;  // LLVM's target registry is process-wide
  std::call_once(init, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
  auto jtmb = take(llvm::orc::JITTargetMachineBuilder::detectHost(), "JIT: detecting the host");
  jtmb.setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  // ORC runs each materialization task in the thread that dispatches it, so that when add_module
  // returns no ORC work on the module (or on the process symbols its linking pulled into the
  // runtime JITDylib) is left. LLJIT's default with concurrent compilation is a thread per task,
  // whose tail can still run after the lookup that waited for it: removing the module's
  // JITDylib or ending the session then raced with it ("JIT session error: Resource tracker ...
  // became defunct", about once in 1,500 sessions). Builds from several threads still compile
  // at once, each in its own thread.
  auto process = take(llvm::orc::SelfExecutorProcessControl::Create(
                          nullptr, std::make_unique<llvm::orc::InPlaceTaskDispatcher>()),
                      "JIT: creating the process control");
  // No platform: generated code has no static constructors, and without one a JITDylib keeps no
  // state outside itself, so removing it frees everything. Concurrent compilation: tuners build
  // from several threads, and each compile then gets its own TargetMachine.
  impl_->jit = take(llvm::orc::LLJITBuilder()
                        .setExecutorProcessControl(std::move(process))
                        .setJITTargetMachineBuilder(std::move(jtmb))
                        .setSupportConcurrentCompilation(true)
                        .setLinkProcessSymbolsByDefault(false)
                        .setPlatformSetUp(llvm::orc::setUpInactivePlatform)
                        .create(),
                    "JIT: creating LLJIT");
  llvm::orc::LLJIT& jit = *impl_->jit;
  llvm::orc::JITDylib& runtime = jit.getExecutionSession().createBareJITDylib("tessel_runtime");
  check(runtime.define(llvm::orc::absoluteSymbols(runtime_symbol_map(jit))),
        "JIT: defining runtime symbols");
  runtime.addGenerator(take(llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
                                jit.getDataLayout().getGlobalPrefix()),
                            "JIT: searching the process's libraries"));
  impl_->runtime_symbols = &runtime;
}

JitSession::~JitSession() {
  // Modules hold the session, so none is alive here.
  if (auto err = impl_->jit->getExecutionSession().endSession()) {
    llvm::logAllUnhandledErrors(std::move(err), llvm::errs(), "tessel: ending the JIT session: ");
  }
  impl_->jit.reset();
}

std::shared_ptr<JitSession> JitSession::create() {
  return std::shared_ptr<JitSession>(new JitSession());
}

std::shared_ptr<JitSession> JitSession::shared() {
  static std::mutex mutex;
  static std::weak_ptr<JitSession> current;  // weak: owning nothing, it cannot outlive main
  std::lock_guard<std::mutex> lock(mutex);
  std::shared_ptr<JitSession> session = current.lock();
  if (!session) {
    session = create();
    current = session;
  }
  return session;
}

int JitSession::num_live_modules() const { return impl_->live_modules.load(); }

Module JitSession::add_module(JitModuleSource source) {
  llvm::orc::LLJIT& jit = *impl_->jit;
  llvm::orc::ExecutionSession& es = jit.getExecutionSession();
  llvm::orc::JITDylib& dylib =
      es.createBareJITDylib(fmt::format("tessel_module_{}", impl_->next_id++));
  dylib.addToLinkOrder(*impl_->runtime_symbols);
  JitModuleNode::Entries entries;
  try {
    check(jit.addIRModule(dylib, llvm::orc::ThreadSafeModule(std::move(source.module),
                                                             std::move(source.context))),
          "JIT: adding a module");
    // Looking the entries up compiles the module now.
    for (const std::string& name : source.entry_names) {
      auto addr = take(jit.lookup(dylib, name), "JIT: compiling '" + name + "'");
      entries.emplace_back(name, addr.toPtr<TesselBackendFunc>());
    }
  } catch (...) {
    llvm::consumeError(es.removeJITDylib(dylib));
    throw;
  }
  return Module(std::make_shared<JitModuleNode>(
      std::make_unique<DylibOwner>(shared_from_this(), *impl_, dylib), std::move(entries),
      std::move(source.ir_text), std::move(source.make_assembly)));
}

Module JitSession::add_objects(const std::vector<std::string>& objects, const std::string& what) {
  llvm::orc::LLJIT& jit = *impl_->jit;
  llvm::orc::ExecutionSession& es = jit.getExecutionSession();
  llvm::orc::JITDylib& dylib =
      es.createBareJITDylib(fmt::format("tessel_module_{}", impl_->next_id++));
  dylib.addToLinkOrder(*impl_->runtime_symbols);
  std::map<std::string, TesselBackendFunc> kernels;
  try {
    for (size_t i = 0; i < objects.size(); ++i) {
      check(jit.addObjectFile(dylib, llvm::MemoryBuffer::getMemBufferCopy(
                                         objects[i], fmt::format("{} object {}", what, i))),
            "JIT: adding an object of " + what);
    }
    // Looking the table up links every object now.
    auto table = take(jit.lookup(dylib, TESSEL_KERNEL_TABLE_SYMBOL), "JIT: linking " + what);
    kernels = read_kernel_table(table.toPtr<const TesselKernelTable*>(), what);
    fill_runtime_slots([&](const std::string& symbol) -> void** {
      auto slot = jit.lookup(dylib, symbol);
      if (!slot) {
        llvm::consumeError(slot.takeError());  // the code calls no such function
        return nullptr;
      }
      return slot->toPtr<void**>();
    });
  } catch (...) {
    llvm::consumeError(es.removeJITDylib(dylib));
    throw;
  }
  return table_module(std::make_shared<DylibOwner>(shared_from_this(), *impl_, dylib),
                      std::move(kernels));
}

}  // namespace tessel::runtime
