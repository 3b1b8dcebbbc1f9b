#include "passes/fold_constant.h"

#include "ir/op_table.h"
#include "passes/graph_util.h"
#include "reference/reference.h"

namespace tessel::passes {

using graph::Graph;
using graph::kNoValue;
using graph::TensorData;

namespace {

bool is_constant(const Graph& g, graph::ValueId v) {
  return v == kNoValue || g.value(v).constant.has_value();
}

// Shape and Size only need the input's (static) type.
bool folds_from_type(const Graph& g, const graph::Node& node) {
  return (node.op == graph::OpKind::Shape || node.op == graph::OpKind::Size) &&
         !node.inputs.empty() && node.inputs[0] != kNoValue &&
         g.value(node.inputs[0]).type.is_static();
}

}  // namespace

bool try_fold_node(Graph& g, graph::NodeId n, int64_t max_elements) {
  const graph::Node& node = g.nodes[n];
  if (node.op == graph::OpKind::If)
    return false;  // branches may read runtime values through captures
  bool all_constant = true;
  for (graph::ValueId in : node.inputs) all_constant = all_constant && is_constant(g, in);
  bool from_type = folds_from_type(g, node);
  if (!all_constant && !from_type) return false;
  if (!reference::find_eval(node.op)) return false;

  std::vector<TensorData> args;
  for (graph::ValueId in : node.inputs) {
    if (in == kNoValue) {
      args.emplace_back();
    } else if (g.value(in).constant) {
      args.push_back(*g.value(in).constant);
    } else {  // Shape/Size read only the type: a zero-filled stand-in has the right shape
      args.emplace_back(g.value(in).type.dtype, g.value(in).type.shape);
    }
  }
  // The reference evaluators trust their operands; the op's type relation checks them first, so a
  // malformed constant node is a user error naming it (the ONNX fuzzer crashed a Conv of rank-1
  // constants here).
  node.def().infer_type(g, node);
  std::vector<TensorData> out = reference::eval_node(g, node, args);
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    if (max_elements >= 0 && out[i].numel() > max_elements) return false;
  }
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    graph::Value& v = g.value(node.outputs[i]);
    v.type = graph::TensorType{out[i].dtype(), out[i].shape(), {}};
    v.constant = std::move(out[i]);
  }
  return true;
}

void fold_constant(Graph& g) {
  bool folded = false;
  for (graph::NodeId n = 0; n < static_cast<graph::NodeId>(g.nodes.size()); ++n) {
    folded |= try_fold_node(g, n, -1);
  }
  if (folded) remove_dead_code(g);
}

}  // namespace tessel::passes
