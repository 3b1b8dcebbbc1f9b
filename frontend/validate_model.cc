#include "frontend/validate_model.h"

#include <fmt/format.h>

#include <cstdint>
#include <span>
#include <unordered_set>
#include <utility>
#include <vector>

#include "frontend/onnx_proto_convert.h"
#include "ir/error.h"

namespace tessel::frontend::detail {

namespace {

using onnx::AttributeProto;
using onnx::GraphProto;
using onnx::NodeProto;
using onnx::SparseTensorProto;

// An inclusive range an INT or INTS attribute must stay in. The upper bounds keep the window
// arithmetic ((kernel - 1) * dilation + pads, blocksize * blocksize) far from int64 overflow.
struct AttrRange {
  const char* attr;
  int64_t min, max;
};

constexpr int64_t kMaxWindowValue = INT32_MAX;

// Ops whose strides, dilations, kernel_shape, pads and group libonnx's shape inference and
// Tessel's window arithmetic divide by or add up unchecked.
const std::unordered_set<std::string>& window_ops() {
  static const std::unordered_set<std::string> ops{"Conv",        "ConvTranspose", "ConvInteger",
                                                   "QLinearConv", "MaxPool",       "AveragePool",
                                                   "LpPool",      "MaxUnpool"};
  return ops;
}

constexpr AttrRange kWindowRanges[] = {
    {"strides", 1, kMaxWindowValue},      {"dilations", 1, kMaxWindowValue},
    {"kernel_shape", 1, kMaxWindowValue}, {"pads", 0, kMaxWindowValue},
    {"group", 1, kMaxWindowValue},
};
// libonnx divides by blocksize * blocksize.
constexpr AttrRange kBlocksizeRange{"blocksize", 1, kMaxWindowValue};

class ModelValidator {
 public:
  explicit ModelValidator(std::string source) : source_(std::move(source)) {}

  void graph(const GraphProto& g) {
    for (const auto* values : {&g.input(), &g.output(), &g.value_info()}) {
      for (const auto& v : *values) type(v.type(), v.name());
    }
    for (const auto& init : g.initializer())
      tensor(init, fmt::format("initializer '{}'", init.name()));
    for (const auto& sparse : g.sparse_initializer()) {
      sparse_tensor(sparse, fmt::format("sparse initializer '{}'", sparse.values().name()));
    }
    nodes(g.node());
  }

  void function(const onnx::FunctionProto& f) {
    scope_ = fmt::format(" in function '{}'",
                         f.domain().empty() ? f.name() : f.domain() + "." + f.name());
    nodes(f.node());
    scope_.clear();
  }

 private:
  void nodes(const google::protobuf::RepeatedPtrField<NodeProto>& nodes) {
    for (int i = 0; i < nodes.size(); ++i) node(nodes[i], i);
  }

  // A branch or loop body: what is in it names the attribute and node that hold it (`attribute`,
  // within the current scope).
  void subgraph(const GraphProto& g, const std::string& attribute) {
    std::string outer = std::exchange(scope_, " in " + attribute + scope_);
    graph(g);
    scope_ = std::move(outer);
  }

  // `what` names the tensor within the current scope.
  void tensor(const onnx::TensorProto& t, const std::string& what) {
    checked_numel(t, fmt::format("'{}': {}{}", source_, what, scope_));
  }

  // libonnx's inference loops up to declared dims and indexes with them.
  void type(const onnx::TypeProto& t, const std::string& value) {
    const onnx::TensorShapeProto* shape = t.has_tensor_type() ? &t.tensor_type().shape()
                                          : t.has_sparse_tensor_type()
                                              ? &t.sparse_tensor_type().shape()
                                              : nullptr;
    for (int d = 0; shape && d < shape->dim_size(); ++d) {
      if (shape->dim(d).has_dim_value() && shape->dim(d).dim_value() < 0) {
        throw Error(fmt::format("'{}': value '{}'{} declares a negative dim {} (dim {})", source_,
                                value, scope_, shape->dim(d).dim_value(), d));
      }
    }
    if (t.has_sequence_type()) type(t.sequence_type().elem_type(), value);
    if (t.has_optional_type()) type(t.optional_type().elem_type(), value);
    if (t.has_map_type()) type(t.map_type().value_type(), value);
  }

  void sparse_tensor(const SparseTensorProto& t, const std::string& what) {
    tensor(t.values(), what + " (values)");
    tensor(t.indices(), what + " (indices)");
  }

  void node(const NodeProto& n, int index) {
    std::string name = fmt::format("node '{}' ({})", node_name(n, index), n.op_type());
    for (const auto& a : n.attribute()) {
      std::string what = fmt::format("attribute '{}' of {}", a.name(), name);
      if (a.has_t()) tensor(a.t(), what);
      for (int k = 0; k < a.tensors_size(); ++k)
        tensor(a.tensors(k), fmt::format("{} (tensor {})", what, k));
      if (a.has_sparse_tensor()) sparse_tensor(a.sparse_tensor(), what);
      for (const auto& s : a.sparse_tensors()) sparse_tensor(s, what);
      if (a.has_g()) subgraph(a.g(), what);
      for (int k = 0; k < a.graphs_size(); ++k)
        subgraph(a.graphs(k), fmt::format("graph {} of {}", k, what));
    }
    if (!n.domain().empty() && n.domain() != "ai.onnx") return;
    // A function body's reference to its caller's attribute has no value here; inference checks
    // the value it receives.
    auto find = [&](const std::string& attr) -> const AttributeProto* {
      for (const auto& a : n.attribute()) {
        if (a.name() == attr && !a.has_ref_attr_name()) return &a;
      }
      return nullptr;
    };
    if (std::string problem = attribute_range_problem(n.op_type(), find); !problem.empty()) {
      throw Error(fmt::format("'{}': {}{}: {}", source_, name, scope_, problem));
    }
  }

  std::string source_;
  std::string scope_;  // " in attribute 'then_branch' of node 'n' (If)", "" in the main graph
};

}  // namespace

std::string attribute_range_problem(const std::string& op_type, const FindAttribute& find) {
  std::span<const AttrRange> ranges;
  if (window_ops().count(op_type)) {
    ranges = kWindowRanges;
  } else if (op_type == "DepthToSpace" || op_type == "SpaceToDepth") {
    ranges = {&kBlocksizeRange, 1};
  }
  for (const AttrRange& range : ranges) {
    const AttributeProto* a = find(range.attr);
    if (!a) continue;
    std::vector<int64_t> values(a->ints().begin(), a->ints().end());
    if (a->type() == AttributeProto::INT) values.push_back(a->i());
    for (int64_t v : values) {
      if (v < range.min || v > range.max) {
        return fmt::format("attribute '{}' has {}; it must be between {} and {}", range.attr, v,
                           range.min, range.max);
      }
    }
  }
  return "";
}

void validate_model(const onnx::ModelProto& model, const std::string& source) {
  ModelValidator v(source);
  v.graph(model.graph());
  for (const auto& f : model.functions()) v.function(f);
}

}  // namespace tessel::frontend::detail
