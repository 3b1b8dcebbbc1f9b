#include <fmt/format.h>

#include "ir/error.h"
#include "ir/ops/conv_packing.h"
#include "reference/ref_ops.h"

namespace tessel::reference {

const EvalFn* find_eval(OpKind op) {
  static const std::vector<EvalFn> table = [] {
    std::vector<EvalFn> t(graph::kNumOpKinds);
    for (auto part : {elementwise_ref_ops, reduce_ref_ops, tensor_ref_ops, nn_ref_ops,
                      sequence_ref_ops, loss_ref_ops}) {
      for (auto& r : part()) t[static_cast<size_t>(r.op)] = std::move(r.eval);
    }
    return t;
  }();
  const EvalFn& fn = table[static_cast<size_t>(op)];
  return fn ? &fn : nullptr;
}

std::vector<TensorData> eval_node(const graph::Graph& g, const graph::Node& node,
                                  const std::vector<TensorData>& inputs) {
  const EvalFn* fn = find_eval(node.op);
  if (!fn) throw Error(fmt::format("{}: the op has no reference implementation", node.describe()));
  // Channel-blocked X and Y (ir/ops/conv_packing.h): the op on the NCHW tensors they hold.
  int64_t in_block = graph::ops::input_block(node), out_block = graph::ops::output_block(node);
  std::vector<TensorData> args = inputs;
  if (in_block && !args.empty() && args[0].defined())
    args[0] = graph::ops::unblock_channels(args[0]);
  std::vector<TensorData> out = (*fn)(g, node, args);
  if (out.size() < node.outputs.size()) {
    throw InternalError(fmt::format("{}: reference produced {} outputs, the node has {}",
                                    node.describe(), out.size(), node.outputs.size()));
  }
  if (out_block) out[0] = graph::ops::block_channels(out[0], out_block);
  return out;
}

std::vector<TensorData> run(const graph::Graph& g,
                            const std::map<std::string, TensorData>& inputs) {
  std::vector<TensorData> env(g.values.size());
  for (size_t v = 0; v < g.values.size(); ++v) {
    if (g.values[v].constant) env[v] = *g.values[v].constant;
  }
  for (graph::ValueId id : g.inputs) {
    const graph::Value& in = g.value(id);
    auto it = inputs.find(in.name);
    if (it == inputs.end()) throw Error(fmt::format("missing input '{}'", in.name));
    const TensorData& t = it->second;
    bool shape_ok = t.shape().size() == in.type.shape.size();
    for (size_t d = 0; shape_ok && d < t.shape().size(); ++d) {
      shape_ok = in.type.shape[d] == graph::kUnknownDim || in.type.shape[d] == t.shape()[d];
    }
    if (t.dtype() != in.type.dtype || !shape_ok) {
      throw Error(fmt::format("input '{}' is {} but the graph expects {}", in.name,
                              graph::TensorType{t.dtype(), t.shape(), {}}.str(), in.type.str()));
    }
    env[id] = t;
  }
  for (const graph::Node& node : g.nodes) {
    std::vector<TensorData> args;
    for (graph::ValueId in : node.inputs)
      args.push_back(in == graph::kNoValue ? TensorData() : env[in]);
    std::vector<TensorData> out = eval_node(g, node, args);
    for (size_t i = 0; i < node.outputs.size(); ++i) env[node.outputs[i]] = std::move(out[i]);
  }
  std::vector<TensorData> results;
  for (graph::ValueId id : g.outputs) results.push_back(env[id]);
  return results;
}

}  // namespace tessel::reference
