#include "runtime/library.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <map>
#include <memory>
#include <mutex>

#include "ir/error.h"

namespace tessel::runtime {

namespace {

// The runtime functions a library may call, by name.
const std::map<std::string, void*>& runtime_api() {
  static const std::map<std::string, void*> api = {
      {"TesselSetLastError", reinterpret_cast<void*>(&TesselSetLastError)},
      {"TesselBackendParallelLaunch", reinterpret_cast<void*>(&TesselBackendParallelLaunch)},
      {"TesselBackendNumThreads", reinterpret_cast<void*>(&TesselBackendNumThreads)},
      {"TesselBackendAllocWorkspace", reinterpret_cast<void*>(&TesselBackendAllocWorkspace)},
      {"TesselBackendFreeWorkspace", reinterpret_cast<void*>(&TesselBackendFreeWorkspace)},
  };
  return api;
}

// A table with more kernels than this is corrupt (a model has hundreds at most).
constexpr uint32_t kMaxKernels = 1 << 20;

class LibraryModule : public ModuleNode {
 public:
  LibraryModule(std::shared_ptr<void> handle, std::map<std::string, TesselBackendFunc> kernels)
      : handle_(std::move(handle)), kernels_(std::move(kernels)) {}

  Function get_function(const std::string& name) override {
    auto it = kernels_.find(name);
    if (it == kernels_.end()) return {};
    return Function::from_backend(name, it->second, handle_);
  }
  std::vector<std::string> function_names() const override {
    std::vector<std::string> names;
    for (const auto& [name, fn] : kernels_) names.push_back(name);
    return names;
  }
  std::string source(const std::string& format) const override {
    throw Error(fmt::format(
        "a loaded shared library has no '{}' source; compile with --dump-ir to see it", format));
  }

 private:
  std::shared_ptr<void> handle_;
  std::map<std::string, TesselBackendFunc> kernels_;
};

// The library's kernel table by name; Error naming `what` when it is missing or malformed.
std::map<std::string, TesselBackendFunc> read_kernel_table(void* handle, const std::string& what) {
  const auto* table =
      static_cast<const TesselKernelTable*>(dlsym(handle, TESSEL_KERNEL_TABLE_SYMBOL));
  if (table == nullptr) {
    throw Error(fmt::format(
        "{} has no kernel table ({}): it was built by an older Tessel; recompile the model", what,
        TESSEL_KERNEL_TABLE_SYMBOL));
  }
  if (table->version != TESSEL_KERNEL_TABLE_VERSION) {
    throw Error(fmt::format(
        "{} has kernel table version {}; this Tessel reads version {} (recompile the model)", what,
        table->version, TESSEL_KERNEL_TABLE_VERSION));
  }
  if (table->num_kernels > kMaxKernels || (table->num_kernels > 0 && table->kernels == nullptr)) {
    throw Error(
        fmt::format("{} has a corrupt kernel table ({} kernels)", what, table->num_kernels));
  }
  std::map<std::string, TesselBackendFunc> kernels;
  for (uint32_t i = 0; i < table->num_kernels; ++i) {
    const TesselKernelEntry& k = table->kernels[i];
    if (k.name == nullptr || k.func == nullptr)
      throw Error(fmt::format("{}: kernel table entry {} is null", what, i));
    if (!kernels.emplace(k.name, k.func).second) {
      throw Error(fmt::format("{}: the kernel table lists '{}' twice", what, k.name));
    }
  }
  return kernels;
}

}  // namespace

Module load_library(const std::string& path, const std::vector<std::string>& entries,
                    const std::string& what) {
  void* raw = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (raw == nullptr) throw Error(fmt::format("cannot load {}: {}", what, dlerror()));
  std::shared_ptr<void> handle(raw, [](void* h) { dlclose(h); });
  std::map<std::string, TesselBackendFunc> kernels = read_kernel_table(raw, what);
  for (const std::string& name : entries) {
    if (!kernels.count(name))
      throw Error(fmt::format("{} has no kernel '{}' in its kernel table", what, name));
  }
  // dlopen hands every thread loading the same file the same image, whose kernels may already be
  // running and reading these slots: fill a slot once, under a lock, and never rewrite one that
  // already holds the address.
  static std::mutex slots_mutex;
  std::lock_guard<std::mutex> lock(slots_mutex);
  for (const auto& [name, fn] : runtime_api()) {
    auto* slot = static_cast<void**>(dlsym(raw, (TESSEL_RUNTIME_POINTER_PREFIX + name).c_str()));
    if (slot != nullptr && *slot != fn) *slot = fn;
  }
  return Module(std::make_shared<LibraryModule>(std::move(handle), std::move(kernels)));
}

}  // namespace tessel::runtime
