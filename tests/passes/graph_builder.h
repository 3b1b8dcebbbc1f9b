// Terse construction of small graphs for pass tests.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "tests/common/op_named.h"
#include "tests/common/random.h"

namespace tessel::passes::testing {

using graph::Graph;
using graph::TensorData;
using graph::ValueId;

inline graph::TensorType f32(std::vector<int64_t> shape) {
  return {DataType::f32(), std::move(shape), {}};
}

using tessel::testing::random_tensor;

// An integer-list attribute, e.g. {"pads", ints({1, 1, 1, 1})}.
inline graph::Attr ints(std::vector<int64_t> v) { return v; }

struct Builder {
  Graph g;
  int counter = 0;
  ValueId input(const std::string& name, std::vector<int64_t> shape) {
    ValueId v = g.add_value(name, f32(std::move(shape)));
    g.inputs.push_back(v);
    return v;
  }
  ValueId constant(const std::string& name, TensorData data) {
    return g.add_constant(name, std::move(data));
  }
  // Adds `op` reading `inputs`; outputs are untyped until infer_type.
  std::vector<ValueId> node(const std::string& op, std::vector<ValueId> inputs,
                            std::map<std::string, graph::Attr> attrs = {}, int num_outputs = 1,
                            const std::string& name = "") {
    std::string n = name.empty() ? op + std::to_string(counter++) : name;
    std::vector<ValueId> outs;
    for (int i = 0; i < num_outputs; ++i)
      outs.push_back(g.add_value(n + "_out" + std::to_string(i), {}));
    g.add_node(
        graph::Node{tessel::testing::op_named(op), n, std::move(inputs), outs, std::move(attrs)});
    return outs;
  }
  ValueId op(const std::string& op, std::vector<ValueId> inputs,
             std::map<std::string, graph::Attr> attrs = {}, const std::string& name = "") {
    return node(op, std::move(inputs), std::move(attrs), 1, name)[0];
  }
  Graph finish(std::vector<ValueId> outputs) {
    g.outputs = std::move(outputs);
    return g;
  }
};

}  // namespace tessel::passes::testing
