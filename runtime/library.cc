#include "runtime/library.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <map>
#include <memory>

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

class LibraryModule : public ModuleNode {
 public:
  LibraryModule(std::shared_ptr<void> handle, std::vector<std::string> entries)
      : handle_(std::move(handle)), entries_(std::move(entries)) {}

  Function get_function(const std::string& name) override {
    void* fn = dlsym(handle_.get(), name.c_str());
    if (fn == nullptr) return {};
    return Function::from_backend(name, reinterpret_cast<TesselBackendFunc>(fn), handle_);
  }
  std::vector<std::string> function_names() const override { return entries_; }
  std::string source(const std::string& format) const override {
    throw Error(fmt::format("a loaded shared library has no '{}' source; compile with --dump-ir to see it", format));
  }

 private:
  std::shared_ptr<void> handle_;
  std::vector<std::string> entries_;
};

}  // namespace

Module load_library(const std::string& path, const std::vector<std::string>& entries) {
  void* raw = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (raw == nullptr) throw Error(fmt::format("cannot load {}: {}", path, dlerror()));
  std::shared_ptr<void> handle(raw, [](void* h) { dlclose(h); });
  for (const auto& [name, fn] : runtime_api()) {
    void* slot = dlsym(raw, (TESSEL_RUNTIME_POINTER_PREFIX + name).c_str());
    if (slot != nullptr) *static_cast<void**>(slot) = fn;
  }
  for (const std::string& name : entries) {
    if (dlsym(raw, name.c_str()) == nullptr) throw Error(fmt::format("{} has no function '{}'", path, name));
  }
  return Module(std::make_shared<LibraryModule>(std::move(handle), entries));
}

}  // namespace tessel::runtime
