// Test helper for op type inference: one node over graph inputs of the given types.
#pragma once

#include <gtest/gtest.h>

#include <source_location>
#include <string>
#include <vector>

#include "ir/error.h"
#include "ir/op_table.h"
#include "tests/common/expect_error.h"
#include "tests/common/op_named.h"

namespace tessel::graph::nn_testing {

inline TensorType f32(std::vector<int64_t> shape) {
  return TensorType{DataType::f32(), std::move(shape), {}};
}

// Inputs are graph inputs of `types` (a TensorType with dtype void is an omitted input), or
// constants where `constants[i]` is defined.
inline std::vector<TensorType> infer(const std::string& op, const std::vector<TensorType>& types,
                                     std::map<std::string, Attr> attrs = {}, size_t num_outputs = 1,
                                     const std::vector<TensorData>& constants = {}) {
  Graph g;
  Node node{tessel::testing::op_named(op), "node7", {}, {}, std::move(attrs)};
  for (size_t i = 0; i < types.size(); ++i) {
    if (i < constants.size() && constants[i].defined()) {
      node.inputs.push_back(g.add_constant("c" + std::to_string(i), constants[i]));
    } else if (types[i].dtype.is_void()) {
      node.inputs.push_back(kNoValue);
    } else {
      node.inputs.push_back(g.add_value("x" + std::to_string(i), types[i]));
    }
  }
  for (size_t i = 0; i < num_outputs; ++i)
    node.outputs.push_back(g.add_value("y" + std::to_string(i), {}));
  const OpDef* def = find_op(op);
  if (!def) throw InternalError("no op " + op);
  return def->infer_type(g, node);
}

// Expects inference to throw a tessel::Error that names the node and contains `needle`.
inline void expect_infer_error(const std::string& needle, const std::string& op,
                               const std::vector<TensorType>& types,
                               std::map<std::string, Attr> attrs = {},
                               std::source_location at = std::source_location::current()) {
  tessel::testing::expect_error([&] { infer(op, types, std::move(attrs), 1); }, {"node7", needle},
                                at);
}

}  // namespace tessel::graph::nn_testing
