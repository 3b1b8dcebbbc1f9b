#include "runtime/kernel_table.h"

#include <fmt/format.h>

#include <mutex>

#include "ir/error.h"

namespace tessel::runtime {
namespace {

// A table with more kernels than this is corrupt (a model has hundreds at most).
constexpr uint32_t kMaxKernels = 1 << 20;

class TableModule : public ModuleNode {
 public:
  TableModule(std::shared_ptr<void> keep_alive, std::map<std::string, TesselBackendFunc> kernels)
      : keep_alive_(std::move(keep_alive)), kernels_(std::move(kernels)) {}

  Function get_function(const std::string& name) override {
    auto it = kernels_.find(name);
    if (it == kernels_.end()) return {};
    return Function::from_backend(name, it->second, keep_alive_);
  }
  std::vector<std::string> function_names() const override {
    std::vector<std::string> names;
    for (const auto& [name, fn] : kernels_) names.push_back(name);
    return names;
  }
  std::string source(const std::string& format) const override {
    throw Error(fmt::format(
        "compiled kernels have no '{}' source; compile with --dump-ir to see it", format));
  }

 private:
  std::shared_ptr<void> keep_alive_;
  std::map<std::string, TesselBackendFunc> kernels_;
};

}  // namespace

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

std::map<std::string, TesselBackendFunc> read_kernel_table(const TesselKernelTable* table,
                                                           const std::string& what) {
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

void fill_runtime_slots(const std::function<void**(const std::string& symbol)>& find_slot) {
  static std::mutex slots_mutex;
  std::lock_guard<std::mutex> lock(slots_mutex);
  for (const auto& [name, fn] : runtime_api()) {
    void** slot = find_slot(TESSEL_RUNTIME_POINTER_PREFIX + name);
    if (slot != nullptr && *slot != fn) *slot = fn;
  }
}

Module table_module(std::shared_ptr<void> keep_alive,
                    std::map<std::string, TesselBackendFunc> kernels) {
  return Module(std::make_shared<TableModule>(std::move(keep_alive), std::move(kernels)));
}

}  // namespace tessel::runtime
