#include "passes/inline_if.h"

#include <fmt/format.h>

#include <map>

#include "ir/error.h"
#include "passes/graph_util.h"

namespace tessel::passes {

namespace {

using graph::Graph;
using graph::kNoValue;
using graph::Node;
using graph::ValueId;

// Copies `branch`'s nodes into `out` (values renamed with `prefix`), reading the If node's inputs
// after its condition; returns the outer values of the branch outputs.
std::vector<ValueId> inline_branch(Graph& g, const Node& if_node, const Graph& branch,
                                   const std::string& prefix, std::vector<Node>& out) {
  std::map<ValueId, ValueId> outer;
  TESSEL_ICHECK(branch.inputs.size() + 1 == if_node.inputs.size())
      << if_node.describe() << ": capture count";
  for (size_t i = 0; i < branch.inputs.size(); ++i) outer[branch.inputs[i]] = if_node.inputs[i + 1];
  auto map_value = [&](ValueId v) {
    if (v == kNoValue) return kNoValue;
    auto it = outer.find(v);
    if (it != outer.end()) return it->second;
    const graph::Value& bv = branch.value(v);
    ValueId mapped = bv.constant ? g.add_constant(prefix + bv.name, *bv.constant)
                                 : g.add_value(prefix + bv.name, bv.type);
    return outer[v] = mapped;
  };
  for (const Node& node : branch.nodes) {
    Node copy = node;
    copy.name = prefix + node.name;
    for (ValueId& v : copy.inputs) v = map_value(v);
    for (ValueId& v : copy.outputs) v = map_value(v);
    out.push_back(std::move(copy));
  }
  std::vector<ValueId> results;
  for (ValueId v : branch.outputs) results.push_back(map_value(v));
  return results;
}

std::shared_ptr<Graph> branch_of(const Node& node, const std::string& key) {
  std::shared_ptr<Graph> branch = node.attr_graph(key);
  if (!branch) throw Error(node.describe() + ": needs a " + key + " graph");
  return branch;
}

}  // namespace

bool inline_if(Graph& g) {
  bool any = false;
  for (bool changed = true; changed; any = any || changed) {  // until no (nested) If is left
    changed = false;
    std::vector<Node> nodes;
    for (const Node& node : g.nodes) {
      if (node.op != graph::OpKind::If) {
        nodes.push_back(node);
        continue;
      }
      changed = true;
      std::shared_ptr<Graph> then_g = branch_of(node, "then_branch"),
                             else_g = branch_of(node, "else_branch");
      if (then_g->outputs.size() != node.outputs.size() ||
          else_g->outputs.size() != node.outputs.size()) {
        throw Error(fmt::format("{}: has {} outputs, its branches {} and {}", node.describe(),
                                node.outputs.size(), then_g->outputs.size(),
                                else_g->outputs.size()));
      }
      const auto& cond = g.value(node.inputs.at(0)).constant;
      std::vector<Node> added;
      auto emit = [&](graph::OpKind op, std::vector<ValueId> inputs, ValueId output,
                      const std::string& name) {
        added.push_back(Node{op, name, std::move(inputs), {output}, {}});
      };
      if (cond) {
        bool taken = cond->get_int(0) != 0;
        std::string prefix = node.name + (taken ? "/then/" : "/else/");
        std::vector<ValueId> results =
            inline_branch(g, node, taken ? *then_g : *else_g, prefix, added);
        for (size_t i = 0; i < results.size(); ++i) {
          emit(graph::OpKind::Identity, {results[i]}, node.outputs[i],
               prefix + "output" + std::to_string(i));
        }
      } else {
        std::vector<ValueId> then_out =
            inline_branch(g, node, *then_g, node.name + "/then/", added);
        std::vector<ValueId> else_out =
            inline_branch(g, node, *else_g, node.name + "/else/", added);
        // The condition may be a [1] tensor; Where must not broadcast it into a rank-0 output.
        ValueId scalar = g.add_value(node.name + "/cond", {});
        emit(graph::OpKind::Reshape,
             {node.inputs[0],
              g.add_constant(node.name + "/scalar_shape", graph::TensorData(DataType::i64(), {0}))},
             scalar, node.name + "/cond");
        for (size_t i = 0; i < node.outputs.size(); ++i) {
          emit(graph::OpKind::Where, {scalar, then_out[i], else_out[i]}, node.outputs[i],
               node.name + "/select" + std::to_string(i));
        }
      }
      nodes.insert(nodes.end(), added.begin(), added.end());
    }
    if (changed) set_nodes(g, std::move(nodes));
  }
  return any;
}

}  // namespace tessel::passes
