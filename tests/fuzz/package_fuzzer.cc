// A package's mod.json and mod.params (input: mod.json, a NUL byte, mod.params) -> what
// load_package does with them: ExecutorPlan::from_json, check_host, load_params, and a Model that
// binds the plan to the weights. mod.so is native code by design and not fuzzed: a stub module
// gives every kernel a no-op function.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "runtime/model.h"
#include "tests/fuzz/fuzz_util.h"

using namespace tessel;
using namespace tessel::runtime;

namespace {

class StubModule : public ModuleNode {
 public:
  Function get_function(const std::string& name) override {
    return Function(name, [](const TesselValue*, const int32_t*, int32_t) {});
  }
  std::vector<std::string> function_names() const override { return {}; }
  std::string source(const std::string&) const override { return ""; }
};

// A plan may ask for any amount of memory: NDArray::empty turns a failed allocation into an Error,
// but under libFuzzer an allocation over its -malloc_limit_mb is a finding, so larger plans stop
// before the Model is built.
constexpr uint64_t kMaxPlanBytes = 256 << 20;

bool fits(const ExecutorPlan& plan) {
  uint64_t total = 0;
  auto add = [&](uint64_t bytes) {
    return !__builtin_add_overflow(total, bytes, &total) && total <= kMaxPlanBytes;
  };
  for (int64_t bytes : plan.buffer_bytes) {
    if (!add(static_cast<uint64_t>(bytes))) return false;
  }
  for (const StorageEntry& s : plan.storage) {
    if (s.buffer >= 0 || !s.param.empty()) continue;
    uint64_t bytes = static_cast<uint64_t>(s.dtype.bytes() * s.dtype.lanes());
    for (int64_t d : s.shape) {
      if (d < 0 || __builtin_mul_overflow(bytes, static_cast<uint64_t>(d), &bytes)) return false;
    }
    if (!add(bytes)) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string bytes = fuzz::as_string(data, size);
  size_t nul = bytes.find('\0');
  std::string json = bytes.substr(0, nul),
              params_bytes = nul == std::string::npos ? "" : bytes.substr(nul + 1);
  std::map<std::string, NDArray> params;
  bool params_loaded = false;
  fuzz::expect_clean_failure([&] {
    params = load_params(params_bytes, "fuzz.tar:mod.params");
    params_loaded = true;
  });
  fuzz::expect_clean_failure([&] {
    ExecutorPlan plan = ExecutorPlan::from_json(json, "fuzz.tar:mod.json");
    fuzz::expect_clean_failure([&] { plan.check_host("package fuzz.tar"); });
    if (!params_loaded || !fits(plan)) return;
    Model model(Module(std::make_shared<StubModule>()), std::move(plan), params);
    model.run();
  });
  return 0;
}
