#include "runtime/model.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <functional>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "ir/error.h"

namespace tessel::runtime {

namespace {

using nlohmann::json;

json io_json(const std::vector<ExecutorIO>& ios) {
  json out = json::array();
  for (const auto& io : ios) out.push_back({{"name", io.name}, {"storage", io.storage}});
  return out;
}

// An integer field as T. nlohmann's get<T>() converts any number: a float out of T's range is
// undefined behaviour (found by the package fuzzer: a shape of [7.7e128]), and 2^32 + 1 would read
// as the storage index 1.
template <class T>
T integer(const json& v, const char* key, const std::string& what) {
  if (v.is_number_unsigned() &&
      v.get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<T>::max())) {
    return static_cast<T>(v.get<uint64_t>());
  }
  if (v.is_number_integer() && !v.is_number_unsigned() &&
      v.get<int64_t>() >= std::numeric_limits<T>::min() &&
      v.get<int64_t>() <= std::numeric_limits<T>::max()) {
    return static_cast<T>(v.get<int64_t>());
  }
  throw Error(fmt::format("{} is corrupt: '{}' holds {}, not an integer from {} to {}", what, key,
                          v.is_number() ? v.dump() : std::string("a ") + v.type_name(),
                          std::numeric_limits<T>::min(), std::numeric_limits<T>::max()));
}

template <class T>
std::vector<T> integers(const json& v, const char* key, const std::string& what) {
  if (!v.is_array())
    throw Error(fmt::format("{} is corrupt: '{}' is a {}, not an array", what, key, v.type_name()));
  std::vector<T> out;
  for (const json& item : v) out.push_back(integer<T>(item, key, what));
  return out;
}

std::vector<ExecutorIO> io_from(const json& j, const std::string& what) {
  std::vector<ExecutorIO> out;
  for (const auto& io : j) {
    out.push_back(
        {io.at("name").get<std::string>(), integer<int>(io.at("storage"), "storage", what)});
  }
  return out;
}

const char* host_arch() {
#if defined(__x86_64__)
  return "x86_64";
#elif defined(__aarch64__)
  return "aarch64";
#else
  return "unknown";
#endif
}

bool host_has(const std::string& feature) {
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (feature == "avx") return __builtin_cpu_supports("avx");
  if (feature == "avx2") return __builtin_cpu_supports("avx2");
  if (feature == "fma") return __builtin_cpu_supports("fma");
  if (feature == "avx512f") return __builtin_cpu_supports("avx512f");
  if (feature == "avx512bw") return __builtin_cpu_supports("avx512bw");
  if (feature == "avx512vl") return __builtin_cpu_supports("avx512vl");
  if (feature == "avx512dq") return __builtin_cpu_supports("avx512dq");
#endif
  (void)feature;
  return false;
}

}  // namespace

std::string ExecutorPlan::to_json() const {
  json storage_j = json::array();
  for (const auto& s : storage) {
    json e = {{"shape", s.shape}, {"dtype", s.dtype.str()}};
    if (s.buffer >= 0) e["buffer"] = s.buffer;
    if (s.offset != 0) e["offset"] = s.offset;
    if (!s.param.empty()) e["param"] = s.param;
    storage_j.push_back(std::move(e));
  }
  json kernels_j = json::array();
  for (const auto& k : kernels) {
    kernels_j.push_back({{"name", k.name}, {"args", k.args}, {"ops", k.ops}, {"flops", k.flops}});
  }
  json j = {{"format", "tessel-package"},
            {"version", kFormatVersion},
            {"target", target},
            {"arch", arch},
            {"cpu_features", cpu_features},
            {"buffers", buffer_bytes},
            {"storage", std::move(storage_j)},
            {"kernels", std::move(kernels_j)},
            {"inputs", io_json(inputs)},
            {"outputs", io_json(outputs)}};
  return j.dump(1);
}

ExecutorPlan ExecutorPlan::from_json(const std::string& text, const std::string& what) {
  try {
    json j = json::parse(text);
    if (j.value("format", "") != "tessel-package")
      throw Error(fmt::format("{} is not a Tessel executor plan", what));
    int version = integer<int>(j.at("version"), "version", what);
    if (version != kFormatVersion) {
      throw Error(fmt::format(
          "{} has package format version {}; this Tessel reads version {} (recompile the model)",
          what, version, kFormatVersion));
    }
    ExecutorPlan p;
    p.target = j.at("target").get<std::string>();
    p.arch = j.at("arch").get<std::string>();
    p.cpu_features = j.at("cpu_features").get<std::vector<std::string>>();
    p.buffer_bytes = integers<int64_t>(j.at("buffers"), "buffers", what);
    for (const auto& s : j.at("storage")) {
      StorageEntry e{integers<int64_t>(s.at("shape"), "shape", what),
                     DataType::parse(s.at("dtype").get<std::string>()),
                     s.contains("buffer") ? integer<int>(s.at("buffer"), "buffer", what) : -1,
                     s.value("param", ""),
                     s.contains("offset") ? integer<int64_t>(s.at("offset"), "offset", what) : 0};
      // An empty 'param' or a negative 'buffer' would read as an absent one: a plain array.
      if (s.contains("param") && e.param.empty()) {
        throw Error(
            fmt::format("{}: storage entry {} has an empty 'param'", what, p.storage.size()));
      }
      if (s.contains("buffer") && e.buffer < 0) {
        throw Error(fmt::format("{}: storage entry {} has the buffer index {}", what,
                                p.storage.size(), e.buffer));
      }
      p.storage.push_back(std::move(e));
    }
    for (const auto& k : j.at("kernels")) {
      p.kernels.push_back({k.at("name").get<std::string>(),
                           integers<int>(k.at("args"), "args", what), k.value("ops", ""),
                           k.value("flops", 0.0)});
    }
    p.inputs = io_from(j.at("inputs"), what);
    p.outputs = io_from(j.at("outputs"), what);
    p.check_consistent(what);
    return p;
  } catch (const json::exception& e) {
    throw Error(fmt::format("{} is corrupt: {}", what, e.what()));
  }
}

void ExecutorPlan::check_consistent(const std::string& what) const {
  if (kernels.empty()) throw Error(fmt::format("{} lists no kernels", what));
  auto check_index = [&](int64_t i, size_t size, const char* kind) {
    if (i < 0 || static_cast<size_t>(i) >= size)
      throw Error(fmt::format("{}: {} index {} is out of range", what, kind, i));
  };
  for (int64_t bytes : buffer_bytes) {
    if (bytes < 0) throw Error(fmt::format("{}: a buffer has the negative size {}", what, bytes));
  }
  for (size_t i = 0; i < storage.size(); ++i) {
    const StorageEntry& s = storage[i];
    if (s.buffer >= 0) check_index(s.buffer, buffer_bytes.size(), "buffer");
    if (s.offset != 0 &&
        (s.buffer < 0 || s.offset < 0 || s.offset > buffer_bytes[static_cast<size_t>(s.buffer)])) {
      throw Error(
          fmt::format("{}: storage entry {} has the offset {}, which is not inside a buffer", what,
                      i, s.offset));
    }
    if (s.buffer >= 0 && !s.param.empty()) {
      throw Error(
          fmt::format("{}: storage entry {} is both the weight '{}' and a view of buffer {}", what,
                      i, s.param, s.buffer));
    }
  }
  for (const auto& k : kernels) {
    for (int a : k.args) check_index(a, storage.size(), "storage");
  }
  for (const auto* ios : {&inputs, &outputs}) {
    const char* kind = ios == &inputs ? "input" : "output";
    std::set<std::string> names;
    for (const auto& io : *ios) {
      check_index(io.storage, storage.size(), "storage");
      if (!names.insert(io.name).second)
        throw Error(fmt::format("{}: {} '{}' is listed twice", what, kind, io.name));
    }
  }
  // An input is copied into its storage by set_input: a weight or another input there would be
  // overwritten.
  std::map<int, std::string> input_of;
  for (const auto& io : inputs) {
    const StorageEntry& s = storage[io.storage];
    if (!s.param.empty()) {
      throw Error(fmt::format("{}: input '{}' is storage entry {}, which holds the weight '{}'",
                              what, io.name, io.storage, s.param));
    }
    auto [it, fresh] = input_of.emplace(io.storage, io.name);
    if (!fresh) {
      throw Error(fmt::format("{}: inputs '{}' and '{}' are the same storage entry {}", what,
                              it->second, io.name, io.storage));
    }
  }
}

void ExecutorPlan::check_host(const std::string& what) const {
  if (arch != host_arch()) {
    throw Error(fmt::format("{} was compiled for {} ({}); this machine is {}", what, arch, target,
                            host_arch()));
  }
  for (const std::string& f : cpu_features) {
    if (!host_has(f)) {
      throw Error(fmt::format(
          "{} was compiled for '{}', which needs the CPU feature {} that this machine lacks; "
          "recompile with --target \"llvm -mcpu=native\"",
          what, target, f));
    }
  }
}

namespace {

// The executor's arrays for `plan`: each weight from weight(storage index, entry), the views of
// freshly allocated buffers, and fresh arrays for the rest.
std::vector<NDArray> allocate_storage(
    const ExecutorPlan& plan, const std::function<NDArray(size_t, const StorageEntry&)>& weight) {
  std::vector<NDArray> buffers;
  for (int64_t bytes : plan.buffer_bytes)
    buffers.push_back(NDArray::empty({bytes}, DataType::u8()));
  std::vector<NDArray> storage;
  for (size_t i = 0; i < plan.storage.size(); ++i) {
    const StorageEntry& s = plan.storage[i];
    if (!s.param.empty()) {
      storage.push_back(weight(i, s));
    } else if (s.buffer >= 0) {
      storage.push_back(buffers[s.buffer].view(s.shape, s.dtype, s.offset));
    } else {
      storage.push_back(NDArray::empty(s.shape, s.dtype));
    }
  }
  return storage;
}

}  // namespace

Model::Model(Module module, ExecutorPlan plan, const std::map<std::string, NDArray>& params)
    : module_(std::move(module)), plan_(std::move(plan)) {
  bind(allocate_storage(plan_, [&](size_t, const StorageEntry& s) {
    auto it = params.find(s.param);
    if (it == params.end()) throw Error(fmt::format("the weights have no array '{}'", s.param));
    if (it->second.shape() != s.shape || it->second.dtype() != s.dtype) {
      throw Error(fmt::format("weight '{}' is {}[{}], the plan expects {}[{}]", s.param,
                              it->second.dtype().str(), fmt::join(it->second.shape(), ", "),
                              s.dtype.str(), fmt::join(s.shape, ", ")));
    }
    return it->second;
  }));
}

Model::Model(const Model& other) : module_(other.module_), plan_(other.plan_) {
  const GraphExecutor& from = other.executor_;
  std::vector<NDArray> storage = allocate_storage(
      plan_, [&](size_t i, const StorageEntry&) { return from.storage(static_cast<int>(i)); });
  // Views of one buffer all start at its beginning, so copying each view leaves the buffer as in
  // `other`.
  for (size_t i = 0; i < storage.size(); ++i) {
    if (!plan_.storage[i].param.empty()) continue;
    storage[i].copy_from(from.storage(static_cast<int>(i)).raw_data(), storage[i].nbytes());
  }
  bind(std::move(storage));
}

Model& Model::operator=(const Model& other) {
  if (this != &other) *this = Model(other);
  return *this;
}

void Model::bind(std::vector<NDArray> storage) {
  std::vector<ExecutorOp> ops;
  for (const auto& k : plan_.kernels) ops.push_back({k.name, module_.get_function(k.name), k.args});
  executor_ = GraphExecutor(std::move(storage), std::move(ops), plan_.inputs, plan_.outputs);
}

std::vector<KernelTime> Model::run_profiled() {
  std::vector<double> ms = executor_.run_timed();
  std::vector<KernelTime> times;
  for (size_t i = 0; i < ms.size(); ++i) times.push_back({&plan_.kernels[i], ms[i]});
  return times;
}

std::map<std::string, NDArray> Model::params() const {
  std::map<std::string, NDArray> out;
  for (size_t i = 0; i < plan_.storage.size(); ++i) {
    if (!plan_.storage[i].param.empty())
      out[plan_.storage[i].param] = executor_.storage(static_cast<int>(i));
  }
  return out;
}

}  // namespace tessel::runtime
