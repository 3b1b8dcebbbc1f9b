#include "frontend/canonicalize_ops.h"

#include <fmt/format.h>

#include <memory>
#include <unordered_set>

#include "frontend/onnx_importer.h"
#include "ir/error.h"

namespace tessel::frontend {
namespace {

using graph::Graph;
using graph::kNoValue;
using graph::Node;
using graph::OpKind;
using graph::TensorData;
using graph::TensorType;
using graph::ValueId;

class Canonicalizer {
 public:
  explicit Canonicalizer(Graph& g) : g_(g), opset_(g.opset) {
    for (const auto& v : g.values) names_.insert(v.name);
  }

  void run() {
    std::vector<Node> old = std::move(g_.nodes);
    g_.nodes.clear();
    for (Node& node : old) {
      for (auto& [key, attr] : node.attrs) {
        auto* sub = std::get_if<std::shared_ptr<Graph>>(&attr);
        if (!sub) continue;
        try {
          canonicalize_ops(**sub);
        } catch (const Error& e) {  // a branch's nodes are named within the node holding it
          throw Error(fmt::format("in attribute '{}' of {}: {}", key, node.describe(), e.what()));
        }
      }
      rewrite(node);
      g_.add_node(std::move(node));
    }
    g_.opset = kMaxOpset;
  }

 private:
  // Each op's newest form dates from an opset; the rewrite runs when the graph is older.
  void rewrite(Node& node) {
    const OpKind op = node.op;
    if (op == OpKind::ReduceSum && opset_ < 13) {
      attr_to_input(node, "axes", 1);
    } else if (op == OpKind::Slice && opset_ < 10) {
      attr_to_input(node, "starts", 1);
      attr_to_input(node, "ends", 2);
      attr_to_input(node, "axes", 3);
    } else if (op == OpKind::Split && opset_ < 13) {
      attr_to_input(node, "split", 1);
    } else if ((op == OpKind::Squeeze || op == OpKind::Unsqueeze) && opset_ < 13) {
      attr_to_input(node, "axes", 1);
    } else if (op == OpKind::TopK && opset_ < 10) {
      set_input(node, 1, ints(node, "k", {node.attr_int("k", 0)}));
      node.attrs.erase("k");
    } else if (op == OpKind::Pad && opset_ < 11) {
      attr_to_input(node, "pads", 1);
      float_attr_to_input(node, "value", 2);
    } else if (op == OpKind::Clip && opset_ < 11) {
      float_attr_to_input(node, "min", 1);
      float_attr_to_input(node, "max", 2);
    } else if (op == OpKind::Dropout && opset_ < 12) {
      node.attrs.erase("ratio");
      node.attrs.erase("is_test");
    } else if ((op == OpKind::Softmax || op == OpKind::LogSoftmax || op == OpKind::Hardmax) &&
               opset_ < 13) {
      softmax_to_one_axis(node);
    } else if (op == OpKind::Upsample || (op == OpKind::Resize && opset_ < 11)) {
      legacy_resize(node);
    }
  }

  std::string fresh_name(const Node& node, const std::string& what) {
    std::string base = fmt::format("{}_{}", node.name, what), name = base;
    for (int k = 1; !names_.insert(name).second; ++k) name = fmt::format("{}_{}", base, k);
    return name;
  }

  ValueId constant(const Node& node, const std::string& what, TensorData data) {
    return g_.add_constant(fresh_name(node, what), std::move(data));
  }

  ValueId ints(const Node& node, const std::string& what, const std::vector<int64_t>& values) {
    TensorData t(DataType::i64(), {static_cast<int64_t>(values.size())});
    std::copy(values.begin(), values.end(), t.data<int64_t>());
    return constant(node, what, std::move(t));
  }

  // The type of input 0; unknown (void) when the input is absent or ONNX could not infer it.
  TensorType data_type(const Node& node) const {
    if (node.inputs.empty() || node.inputs[0] == kNoValue) return {DataType::void_type(), {}, {}};
    return g_.value(node.inputs[0]).type;
  }

  static void set_input(Node& node, size_t index, ValueId v) {
    if (node.inputs.size() <= index) node.inputs.resize(index + 1, kNoValue);
    node.inputs[index] = v;
  }

  // An ints attribute that later opsets take as input `index`; absent stays absent.
  void attr_to_input(Node& node, const char* attr, size_t index) {
    if (!node.has_attr(attr)) return;
    set_input(node, index, ints(node, attr, node.attr_ints(attr, {})));
    node.attrs.erase(attr);
  }

  // A float attribute that later opsets take as a scalar input of the data's type.
  void float_attr_to_input(Node& node, const char* attr, size_t index) {
    if (!node.has_attr(attr)) return;
    DataType dtype = data_type(node).dtype;
    if (!dtype.is_float() && !dtype.is_bfloat()) {
      throw Error(
          fmt::format("{}: cannot rewrite attribute '{}' of opset {} as an input: the data "
                      "type is {}, not a float type",
                      node.describe(), attr, opset_, dtype.str()));
    }
    TensorData t(dtype, {});
    t.set_double(0, node.attr_float(attr, 0));
    set_input(node, index, constant(node, attr, std::move(t)));
    node.attrs.erase(attr);
  }

  // Before opset 13 the op normalizes over every dim from `axis` (default 1) on.
  void softmax_to_one_axis(Node& node) {
    int64_t axis = node.attr_int("axis", 1);
    if (node.inputs.empty() || node.inputs[0] == kNoValue || node.outputs.empty()) return;
    TensorType x = data_type(node);
    auto rank = static_cast<int64_t>(x.shape.size());
    bool known_rank = !x.dtype.is_void();
    if (known_rank && (axis == rank - 1 || axis == -1 || rank == 0)) {
      node.attrs["axis"] = int64_t{-1};
      return;
    }
    // x -> Flatten(axis) -> op(axis 1) -> Reshape(Shape(x)): the same numbers for any axis.
    ValueId in = node.inputs[0], out = node.outputs[0];
    TensorType unknown{DataType::void_type(), {}, {}};  // type inference fills these in
    ValueId flat = g_.add_value(fresh_name(node, "flat"), unknown);
    ValueId normalized = g_.add_value(fresh_name(node, "2d"), unknown);
    ValueId shape = g_.add_value(fresh_name(node, "shape"), unknown);
    g_.add_node(Node{OpKind::Flatten, fresh_name(node, "flatten"), {in}, {flat}, {{"axis", axis}}});
    g_.add_node(Node{OpKind::Shape, fresh_name(node, "input_shape"), {in}, {shape}, {}});
    node.inputs[0] = flat;
    node.outputs[0] = normalized;
    node.attrs["axis"] = int64_t{1};
    Node reshape{OpKind::Reshape, fresh_name(node, "reshape"), {normalized, shape}, {out}, {}};
    g_.add_node(std::move(node));
    node = std::move(reshape);
  }

  // Upsample (scales attribute until opset 9, then an input) and Resize-10 read their scales
  // with ONNX's legacy coordinate mapping, which Resize-11 spells out.
  void legacy_resize(Node& node) {
    if (node.inputs.empty()) return;  // type inference names the node
    ValueId scales = kNoValue;
    if (node.has_attr("scales")) {
      std::vector<double> s = node.attr_floats("scales", {});
      TensorData t(DataType::f32(), {static_cast<int64_t>(s.size())});
      for (size_t i = 0; i < s.size(); ++i) t.set_double(static_cast<int64_t>(i), s[i]);
      scales = constant(node, "scales", std::move(t));
      node.attrs.erase("scales");
    } else if (node.inputs.size() > 1) {
      scales = node.inputs[1];
    }
    node.op = OpKind::Resize;
    node.inputs.resize(1);
    set_input(node, 2, scales);  // input 1, the roi, is omitted
    node.attrs["coordinate_transformation_mode"] = std::string("asymmetric");
    node.attrs["nearest_mode"] = std::string("floor");
    // Upsample also spells the linear mode by its 2-D and 3-D names.
    std::string mode = node.attr_string("mode", "nearest");
    if (mode == "bilinear" || mode == "trilinear") node.attrs["mode"] = std::string("linear");
  }

  Graph& g_;
  int opset_;
  std::unordered_set<std::string> names_;
};

}  // namespace

void canonicalize_ops(Graph& g) { Canonicalizer(g).run(); }

}  // namespace tessel::frontend
