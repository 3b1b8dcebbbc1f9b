#include "runtime/library.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <memory>

#include "ir/error.h"
#include "runtime/kernel_table.h"

namespace tessel::runtime {

Module load_library(const std::string& path, const std::vector<std::string>& entries,
                    const std::string& what) {
  void* raw = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (raw == nullptr) throw Error(fmt::format("cannot load {}: {}", what, dlerror()));
  std::shared_ptr<void> handle(raw, [](void* h) { dlclose(h); });
  std::map<std::string, TesselBackendFunc> kernels = read_kernel_table(
      static_cast<const TesselKernelTable*>(dlsym(raw, TESSEL_KERNEL_TABLE_SYMBOL)), what);
  for (const std::string& name : entries) {
    if (!kernels.count(name))
      throw Error(fmt::format("{} has no kernel '{}' in its kernel table", what, name));
  }
  // dlopen hands every thread loading the same file the same image.
  fill_runtime_slots(
      [raw](const std::string& symbol) { return static_cast<void**>(dlsym(raw, symbol.c_str())); });
  return table_module(std::move(handle), std::move(kernels));
}

}  // namespace tessel::runtime
