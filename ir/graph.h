// The graph IR: a typed dataflow graph of operator nodes over tensor values, in SSA form and
// topological order. ONNX models import into it; graph passes rewrite it; FuseOps partitions it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "ir/dtype.h"
#include "ir/error.h"
#include "ir/op_kind.h"

namespace tessel::graph {

constexpr int64_t kUnknownDim = -1;

// The most elements a tensor may have: kernels index tensors with 32-bit integers (topi narrows
// dims to int), so a larger one would wrap around.
constexpr int64_t kMaxTensorElements = std::numeric_limits<int32_t>::max();

// The product of `shape`'s dims: -1 when one is negative (unknown), else 0 when one is 0, and
// INT64_MAX when it would overflow (then no limit on sizes accepts it).
int64_t shape_numel(const std::vector<int64_t>& shape);

// Host tensor contents (constants, reference-executor values). Copies share the bytes; use
// clone() for a deep copy. Row-major, no padding.
class TensorData {
 public:
  TensorData() = default;
  // Zero-filled, 64-byte aligned.
  TensorData(DataType dtype, std::vector<int64_t> shape);
  // The tensor whose bytes are `bytes` (exactly numel * element size of them), without a copy
  // (aligned as the string's bytes are).
  static TensorData adopt(DataType dtype, std::vector<int64_t> shape, std::string&& bytes);
  DataType dtype() const { return dtype_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  int64_t numel() const;
  size_t nbytes() const { return nbytes_; }
  bool defined() const { return static_cast<bool>(bytes_); }
  void* raw() { return bytes_.get(); }
  const void* raw() const { return bytes_.get(); }
  template <class T>
  T* data() {
    return static_cast<T*>(raw());
  }
  template <class T>
  const T* data() const {
    return static_cast<const T*>(raw());
  }
  TensorData clone() const;
  // Whether no other TensorData shares these bytes, so that changing them in place changes this
  // tensor alone.
  bool unique() const { return bytes_.use_count() == 1; }
  // Same bytes, new shape with the same element count (throws Error otherwise).
  TensorData reshaped(std::vector<int64_t> shape) const;
  // Element i converted to double / int64 (any numeric dtype, float16 and bfloat16 included).
  double get_double(int64_t i) const;
  int64_t get_int(int64_t i) const;
  // Sets element i of a float, float16 or bfloat16 tensor (rounding to nearest); Error otherwise.
  void set_double(int64_t i, double v);

 private:
  DataType dtype_;
  std::vector<int64_t> shape_;
  std::shared_ptr<std::byte> bytes_;  // aligned for every element type
  size_t nbytes_ = 0;
};

struct TensorType {
  DataType dtype;
  std::vector<int64_t> shape;  // kUnknownDim where not known yet
  std::vector<std::string>
      dim_params;  // symbolic names of unknown dims ("" when none); may be empty
  bool is_static() const;
  int64_t numel() const;    // shape_numel: -1 when not static
  std::string str() const;  // "float32[1, 3, 224, 224]", "float32[batch, 3]"
  bool operator==(const TensorType& o) const { return dtype == o.dtype && shape == o.shape; }
};

class Graph;
using Attr = std::variant<int64_t, double, std::string, std::vector<int64_t>, std::vector<double>,
                          std::vector<std::string>, TensorData, std::shared_ptr<Graph>>;

using ValueId = int32_t;
using NodeId = int32_t;
constexpr ValueId kNoValue = -1;  // an omitted optional input

struct Value {
  std::string name;
  TensorType type;
  NodeId producer = -1;                // -1: a graph input or a constant
  std::optional<TensorData> constant;  // initializers and folded values
};

struct OpDef;

// An op with its attributes, without the graph around it: what attribute decoders
// (ir/ops/op_params.h) and te computes (topi/op_compute.h) read of a node.
struct OpAttrs {
  OpKind op{};       // an index into the op table: def() is the op's record
  std::string name;  // the model's node name, or a generated one
  std::map<std::string, Attr> attrs;

  bool has_attr(const std::string& key) const { return attrs.count(key) != 0; }
  // Typed attribute access; a missing attribute gives the default, a wrong type throws an Error
  // naming the node, its op and the attribute.
  int64_t attr_int(const std::string& key, int64_t def) const;
  double attr_float(const std::string& key, double def) const;
  std::string attr_string(const std::string& key, const std::string& def) const;
  std::vector<int64_t> attr_ints(const std::string& key, const std::vector<int64_t>& def) const;
  std::vector<double> attr_floats(const std::string& key, const std::vector<double>& def) const;
  const TensorData* attr_tensor(const std::string& key) const;      // nullptr if absent
  std::shared_ptr<Graph> attr_graph(const std::string& key) const;  // nullptr if absent
  const OpDef& def() const;                                         // ir/op_table.h
  // "node 'conv1' (Conv)" for messages.
  std::string describe() const;
};

struct Node : OpAttrs {
  std::vector<ValueId> inputs;
  std::vector<ValueId> outputs;

  Node() = default;
  Node(OpKind op, std::string name, std::vector<ValueId> inputs, std::vector<ValueId> outputs,
       std::map<std::string, Attr> attrs = {})
      : OpAttrs{op, std::move(name), std::move(attrs)},
        inputs(std::move(inputs)),
        outputs(std::move(outputs)) {}
};

// A value that compilation needs to know (a shape, an axis, a bound) is computed at run time.
// inputs() names the graph inputs it is computed from: binding those to constants
// (CompileOptions::params) lets the model compile.
class ConstantRequiredError : public Error {
 public:
  ConstantRequiredError(const std::string& msg, std::vector<std::string> inputs)
      : Error(msg), inputs_(std::move(inputs)) {}
  const std::vector<std::string>& inputs() const { return inputs_; }

 private:
  std::vector<std::string> inputs_;
};

class Graph {
 public:
  std::vector<Value> values;
  std::vector<Node> nodes;      // topological order
  std::vector<ValueId> inputs;  // runtime inputs (constants are not inputs)
  std::vector<ValueId> outputs;
  // The ai.onnx opset whose form the nodes take: the importer rewrites every model into the
  // newest supported opset's form (frontend/canonicalize_ops.h). model_opset is what the file
  // declared, for reports.
  int opset = 17;
  int model_opset = 17;
  // A subgraph (an If branch) is self-contained: the outer values it reads are its inputs, and
  // the If node passes them after its condition, in the same order and with the same names.

  ValueId add_value(std::string name, TensorType type);
  ValueId add_constant(std::string name, TensorData data);
  NodeId add_node(Node node);  // sets the producer of its outputs
  const Value& value(ValueId id) const { return values.at(static_cast<size_t>(id)); }
  Value& value(ValueId id) { return values.at(static_cast<size_t>(id)); }
  // kNoValue when absent.
  ValueId find_value(const std::string& name) const;
  // Nodes reading each value.
  std::vector<std::vector<NodeId>> consumers() const;
  // The graph inputs that `v` is computed from (v itself when it is one), in graph-input order.
  std::vector<ValueId> input_ancestors(ValueId v) const;
  // Throws InternalError when ids are out of range, a value has two producers, or nodes are not
  // in topological order.
  void validate() const;
  // One line per node: `%y: float32[1, 8] = Conv(%x, %w) {kernel_shape=[3, 3]}  # conv1`.
  std::string str() const;
};

}  // namespace tessel::graph
