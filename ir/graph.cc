#include "ir/graph.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>
#include <sstream>

#include "ir/error.h"

namespace tessel::graph {

int64_t shape_numel(const std::vector<int64_t>& shape) {
  if (std::any_of(shape.begin(), shape.end(), [](int64_t d) { return d < 0; })) return -1;
  if (std::find(shape.begin(), shape.end(), 0) != shape.end()) return 0;
  int64_t n = 1;
  for (int64_t d : shape) {
    if (__builtin_mul_overflow(n, d, &n)) return std::numeric_limits<int64_t>::max();
  }
  return n;
}

// ---------------- TensorData ----------------
namespace {
// 64-byte aligned, as kernels want their buffers, so that the runtime can use a weight's bytes
// as they are (runtime::to_ndarray). Large tensors are mapped from the system, which zeroes them
// as they are first written, so filling one writes its bytes once.
std::shared_ptr<std::byte> zeroed_bytes(size_t n) {
  constexpr size_t kAlign = 64, kMapped = size_t{1} << 20;
  size_t size = (std::max<size_t>(n, 1) + kAlign - 1) / kAlign * kAlign;  // empty is defined
  if (size >= kMapped) {
    void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    return std::shared_ptr<std::byte>(static_cast<std::byte*>(p),
                                      [size](std::byte* b) { munmap(b, size); });
  }
  auto* p = static_cast<std::byte*>(std::aligned_alloc(kAlign, size));
  if (!p) throw std::bad_alloc();
  std::memset(p, 0, size);
  return std::shared_ptr<std::byte>(p, [](std::byte* b) { std::free(b); });
}
}  // namespace

TensorData::TensorData(DataType dtype, std::vector<int64_t> shape)
    : dtype_(dtype), shape_(std::move(shape)) {
  int64_t n = numel();
  if (n < 0) throw Error(fmt::format("tensor of {} with a negative dim", dtype.str()));
  if (dtype.bytes() > 0 &&
      static_cast<uint64_t>(n) > std::numeric_limits<size_t>::max() / dtype.bytes())
    throw Error(
        fmt::format("tensor of {} [{}] is too large", dtype.str(), fmt::join(shape_, ", ")));
  nbytes_ = static_cast<size_t>(n) * dtype.bytes();
  bytes_ = zeroed_bytes(nbytes_);
}

TensorData TensorData::adopt(DataType dtype, std::vector<int64_t> shape, std::string&& bytes) {
  TensorData t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  int64_t n = t.numel();
  if (n < 0 || static_cast<uint64_t>(n) > bytes.size() ||
      static_cast<size_t>(n) * dtype.bytes() != bytes.size()) {
    throw InternalError(fmt::format("TensorData::adopt: {} bytes for {} elements of {}",
                                    bytes.size(), n, dtype.str()));
  }
  t.nbytes_ = bytes.size();
  auto owner = std::make_shared<std::string>(std::move(bytes));
  t.bytes_ = std::shared_ptr<std::byte>(owner, reinterpret_cast<std::byte*>(owner->data()));
  return t;
}

int64_t TensorData::numel() const { return shape_numel(shape_); }

TensorData TensorData::clone() const {
  TensorData t;
  t.dtype_ = dtype_;
  t.shape_ = shape_;
  if (bytes_) {
    t.nbytes_ = nbytes_;
    t.bytes_ = zeroed_bytes(nbytes_);
    if (nbytes_) std::memcpy(t.bytes_.get(), bytes_.get(), nbytes_);
  }
  return t;
}

TensorData TensorData::reshaped(std::vector<int64_t> shape) const {
  TensorData t = *this;
  t.shape_ = std::move(shape);
  if (t.numel() != numel()) {
    throw Error(
        fmt::format("cannot reshape a tensor of {} elements to {} elements", numel(), t.numel()));
  }
  return t;
}

namespace {
template <class Fn>
auto visit_element(const TensorData& t, int64_t i, Fn fn) {
  DataType d = t.dtype();
  if (d.is_float()) {
    if (d.bits() == 16) return fn(half_to_float(t.data<uint16_t>()[i]));
    if (d.bits() == 32) return fn(t.data<float>()[i]);
    if (d.bits() == 64) return fn(t.data<double>()[i]);
  } else if (d.is_bfloat()) {
    return fn(bfloat_to_float(t.data<uint16_t>()[i]));
  } else if (d.is_bool() || (d.is_uint() && d.bits() == 8)) {
    return fn(t.data<uint8_t>()[i]);
  } else if (d.is_int()) {
    switch (d.bits()) {
      case 8:
        return fn(t.data<int8_t>()[i]);
      case 16:
        return fn(t.data<int16_t>()[i]);
      case 32:
        return fn(t.data<int32_t>()[i]);
      case 64:
        return fn(t.data<int64_t>()[i]);
    }
  } else if (d.is_uint()) {
    switch (d.bits()) {
      case 16:
        return fn(t.data<uint16_t>()[i]);
      case 32:
        return fn(t.data<uint32_t>()[i]);
      case 64:
        return fn(t.data<uint64_t>()[i]);
    }
  }
  throw Error(fmt::format("cannot read elements of type {}", d.str()));
}
}  // namespace

double TensorData::get_double(int64_t i) const {
  return visit_element(*this, i, [](auto v) { return static_cast<double>(v); });
}

int64_t TensorData::get_int(int64_t i) const {
  return visit_element(*this, i, [](auto v) { return static_cast<int64_t>(v); });
}

void TensorData::set_double(int64_t i, double v) {
  DataType d = dtype_;
  if (d.is_float() && d.bits() == 16) {
    data<uint16_t>()[i] = float_to_half(static_cast<float>(v));
  } else if (d.is_float() && d.bits() == 32) {
    data<float>()[i] = static_cast<float>(v);
  } else if (d.is_float() && d.bits() == 64) {
    data<double>()[i] = v;
  } else if (d.is_bfloat()) {
    data<uint16_t>()[i] = float_to_bfloat(static_cast<float>(v));
  } else {
    throw Error(fmt::format("cannot write a float into elements of type {}", d.str()));
  }
}

// ---------------- TensorType ----------------
bool TensorType::is_static() const {
  for (int64_t d : shape) {
    if (d < 0) return false;
  }
  return true;
}

int64_t TensorType::numel() const { return shape_numel(shape); }

std::string TensorType::str() const {
  std::vector<std::string> dims;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] >= 0) {
      dims.push_back(std::to_string(shape[i]));
    } else {
      dims.push_back(i < dim_params.size() && !dim_params[i].empty() ? dim_params[i] : "?");
    }
  }
  return fmt::format("{}[{}]", dtype.str(), fmt::join(dims, ", "));
}

// ---------------- OpAttrs ----------------
std::string OpAttrs::describe() const {
  return fmt::format("node '{}' ({})", name, op_kind_name(op));
}

namespace {
template <class T>
const T* typed_attr(const OpAttrs& n, const std::string& key, const char* want) {
  auto it = n.attrs.find(key);
  if (it == n.attrs.end()) return nullptr;
  const T* v = std::get_if<T>(&it->second);
  if (!v) throw Error(fmt::format("{}: attribute '{}' must be {}", n.describe(), key, want));
  return v;
}
}  // namespace

int64_t OpAttrs::attr_int(const std::string& key, int64_t def) const {
  const auto* v = typed_attr<int64_t>(*this, key, "an int");
  return v ? *v : def;
}
double OpAttrs::attr_float(const std::string& key, double def) const {
  auto it = attrs.find(key);
  if (it != attrs.end()) {
    if (const auto* i = std::get_if<int64_t>(&it->second)) return static_cast<double>(*i);
  }
  const auto* v = typed_attr<double>(*this, key, "a float");
  return v ? *v : def;
}
std::string OpAttrs::attr_string(const std::string& key, const std::string& def) const {
  const auto* v = typed_attr<std::string>(*this, key, "a string");
  return v ? *v : def;
}
std::vector<int64_t> OpAttrs::attr_ints(const std::string& key,
                                        const std::vector<int64_t>& def) const {
  const auto* v = typed_attr<std::vector<int64_t>>(*this, key, "a list of ints");
  return v ? *v : def;
}
std::vector<double> OpAttrs::attr_floats(const std::string& key,
                                         const std::vector<double>& def) const {
  const auto* v = typed_attr<std::vector<double>>(*this, key, "a list of floats");
  return v ? *v : def;
}
const TensorData* OpAttrs::attr_tensor(const std::string& key) const {
  return typed_attr<TensorData>(*this, key, "a tensor");
}
std::shared_ptr<Graph> OpAttrs::attr_graph(const std::string& key) const {
  const auto* v = typed_attr<std::shared_ptr<Graph>>(*this, key, "a graph");
  return v ? *v : nullptr;
}

// ---------------- Graph ----------------
ValueId Graph::add_value(std::string name, TensorType type) {
  values.push_back(Value{std::move(name), std::move(type), -1, std::nullopt});
  return static_cast<ValueId>(values.size() - 1);
}

ValueId Graph::add_constant(std::string name, TensorData data) {
  TensorType t{data.dtype(), data.shape(), {}};
  ValueId id = add_value(std::move(name), std::move(t));
  values.back().constant = std::move(data);
  return id;
}

NodeId Graph::add_node(Node node) {
  NodeId id = static_cast<NodeId>(nodes.size());
  for (ValueId out : node.outputs) value(out).producer = id;
  nodes.push_back(std::move(node));
  return id;
}

ValueId Graph::find_value(const std::string& name) const {
  for (size_t i = 0; i < values.size(); ++i) {
    if (values[i].name == name) return static_cast<ValueId>(i);
  }
  return kNoValue;
}

std::vector<std::vector<NodeId>> Graph::consumers() const {
  std::vector<std::vector<NodeId>> out(values.size());
  for (size_t n = 0; n < nodes.size(); ++n) {
    for (ValueId in : nodes[n].inputs) {
      if (in != kNoValue) out.at(static_cast<size_t>(in)).push_back(static_cast<NodeId>(n));
    }
  }
  return out;
}

std::vector<ValueId> Graph::input_ancestors(ValueId v) const {
  std::vector<bool> reached(values.size(), false);
  reached.at(static_cast<size_t>(v)) = true;
  // Nodes are in topological order: one backward sweep reaches every ancestor.
  for (auto n = nodes.rbegin(); n != nodes.rend(); ++n) {
    bool needed = false;
    for (ValueId out : n->outputs)
      needed = needed || (out != kNoValue && reached[static_cast<size_t>(out)]);
    if (!needed) continue;
    for (ValueId in : n->inputs) {
      if (in != kNoValue) reached[static_cast<size_t>(in)] = true;
    }
  }
  std::vector<ValueId> out;
  for (ValueId in : inputs) {
    if (reached[static_cast<size_t>(in)]) out.push_back(in);
  }
  return out;
}

void Graph::validate() const {
  std::vector<bool> defined(values.size(), false);
  auto check_id = [&](ValueId v, const std::string& where) {
    TESSEL_ICHECK(v >= 0 && static_cast<size_t>(v) < values.size())
        << where << ": value id " << v << " out of range";
  };
  for (ValueId v : inputs) {
    check_id(v, "graph input");
    defined[v] = true;
  }
  for (size_t i = 0; i < values.size(); ++i) {
    if (values[i].constant) defined[i] = true;
  }
  for (size_t n = 0; n < nodes.size(); ++n) {
    const Node& node = nodes[n];
    for (ValueId in : node.inputs) {
      if (in == kNoValue) continue;
      check_id(in, node.describe());
      TESSEL_ICHECK(defined[in]) << node.describe() << " reads '" << values[in].name
                                 << "' before it is defined";
    }
    for (ValueId out : node.outputs) {
      check_id(out, node.describe());
      TESSEL_ICHECK(!defined[out]) << "value '" << values[out].name << "' is defined twice";
      TESSEL_ICHECK(values[out].producer == static_cast<NodeId>(n))
          << "producer of '" << values[out].name << "'";
      defined[out] = true;
    }
  }
  for (ValueId v : outputs) {
    check_id(v, "graph output");
    TESSEL_ICHECK(defined[v]) << "graph output '" << values[v].name << "' is never defined";
  }
}

namespace {
std::string attr_str(const Attr& a) {
  return std::visit(
      [](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, int64_t> || std::is_same_v<T, double>) {
          return fmt::format("{}", v);
        } else if constexpr (std::is_same_v<T, std::string>) {
          return fmt::format("\"{}\"", v);
        } else if constexpr (std::is_same_v<T, TensorData>) {
          return fmt::format("tensor<{}>", TensorType{v.dtype(), v.shape(), {}}.str());
        } else if constexpr (std::is_same_v<T, std::shared_ptr<Graph>>) {
          return fmt::format("graph<{} nodes>", v ? v->nodes.size() : 0);
        } else {
          return fmt::format("[{}]", fmt::join(v, ", "));
        }
      },
      a);
}
}  // namespace

std::string Graph::str() const {
  std::ostringstream os;
  auto name = [&](ValueId v) { return v == kNoValue ? std::string("_") : "%" + values[v].name; };
  os << "graph(";
  for (size_t i = 0; i < inputs.size(); ++i) {
    os << (i ? ", " : "") << name(inputs[i]) << ": " << values[inputs[i]].type.str();
  }
  os << ") {\n";
  for (const Node& n : nodes) {
    std::vector<std::string> outs, ins, attrs;
    for (ValueId v : n.outputs) outs.push_back(name(v) + ": " + values[v].type.str());
    for (ValueId v : n.inputs) ins.push_back(name(v));
    for (const auto& [k, a] : n.attrs) attrs.push_back(k + "=" + attr_str(a));
    os << "  " << fmt::format("{}", fmt::join(outs, ", ")) << " = " << op_kind_name(n.op) << "("
       << fmt::format("{}", fmt::join(ins, ", ")) << ")";
    if (!attrs.empty()) os << " {" << fmt::format("{}", fmt::join(attrs, ", ")) << "}";
    os << "  # " << n.name << "\n";
  }
  os << "  return ";
  for (size_t i = 0; i < outputs.size(); ++i) os << (i ? ", " : "") << name(outputs[i]);
  os << "\n}\n";
  return os.str();
}

}  // namespace tessel::graph
