// Test helpers for operator tests: build a one-node graph whose inputs are runtime values or
// constants, run its type inference, and make small tensors from literal values.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ir/error.h"
#include "ir/graph.h"
#include "ir/op_table.h"
#include "tests/common/op_named.h"
#include "tests/common/tensor.h"

namespace tessel::graph::testing {

// One input of the node under test: a runtime value of a type, a constant, or omitted.
struct OpInput {
  TensorType type;
  std::optional<TensorData> constant;
  bool omitted = false;
};
inline OpInput value_of(DataType dtype, std::vector<int64_t> shape) {
  return {TensorType{dtype, std::move(shape), {}}, std::nullopt};
}
inline OpInput constant_of(TensorData t) { return {TensorType{t.dtype(), t.shape(), {}}, t}; }
inline OpInput omitted() { return {TensorType{}, std::nullopt, true}; }

using tessel::testing::make_tensor;

inline TensorData f32(std::vector<int64_t> shape, const std::vector<double>& v) {
  return make_tensor(DataType::f32(), std::move(shape), v);
}
inline TensorData i64(std::vector<int64_t> shape, const std::vector<double>& v) {
  return make_tensor(DataType::i64(), std::move(shape), v);
}

// A graph holding one node of `op_type` over `inputs`, with `num_outputs` outputs (typed
// float32[] until inferred).
inline Graph one_node_graph(const std::string& op_type, const std::vector<OpInput>& inputs,
                            std::map<std::string, Attr> attrs = {}, size_t num_outputs = 1) {
  Graph g;
  Node node;
  node.op = tessel::testing::op_named(op_type);
  node.name = "n0";
  node.attrs = std::move(attrs);
  for (size_t i = 0; i < inputs.size(); ++i) {
    const OpInput& in = inputs[i];
    std::string name = "in" + std::to_string(i);
    if (in.omitted) {
      node.inputs.push_back(kNoValue);
    } else if (in.constant) {
      node.inputs.push_back(g.add_constant(name, *in.constant));
    } else {
      node.inputs.push_back(g.add_value(name, in.type));
      g.inputs.push_back(node.inputs.back());
    }
  }
  for (size_t i = 0; i < num_outputs; ++i) {
    node.outputs.push_back(
        g.add_value("out" + std::to_string(i), TensorType{DataType::f32(), {}, {}}));
    g.outputs.push_back(node.outputs.back());
  }
  g.add_node(std::move(node));
  return g;
}

// Runs the op table's type inference on a one-node graph.
inline std::vector<TensorType> infer(const std::string& op_type, const std::vector<OpInput>& inputs,
                                     std::map<std::string, Attr> attrs = {},
                                     size_t num_outputs = 1) {
  Graph g = one_node_graph(op_type, inputs, std::move(attrs), num_outputs);
  const OpDef* def = &op_def(tessel::testing::op_named(op_type));
  return def->infer_type(g, g.nodes[0]);
}

}  // namespace tessel::graph::testing
