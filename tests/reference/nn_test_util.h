// Test helpers for the nn / sequence reference ops: float32 ramps, and evaluation of one node whose
// inputs are constants, checked against the op's own type inference.
#pragma once

#include <gtest/gtest.h>

#include <source_location>
#include <string>
#include <vector>

#include "ir/op_table.h"
#include "reference/reference.h"
#include "tests/common/compare.h"
#include "tests/common/tensor.h"
#include "tests/ir/ops/op_test_util.h"

namespace tessel::reference::nn_testing {

using graph::Attr;
using graph::Graph;
using graph::Node;

using graph::testing::f32;
using tessel::testing::values_of;

// 0, 1, 2, ... scaled and shifted, so data is deterministic and not symmetric.
inline TensorData ramp(std::vector<int64_t> shape, double scale = 1.0, double shift = 0.0) {
  TensorData t(DataType::f32(), std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i)
    t.data<float>()[i] = static_cast<float>(shift + scale * static_cast<double>(i));
  return t;
}

// Within `tol` absolute: these ops' expected values are small literals.
inline void expect_near(const std::vector<double>& got, const std::vector<double>& want,
                        double tol = 1e-4,
                        std::source_location at = std::source_location::current()) {
  tessel::testing::expect_all_close(got, want, {tol, 0}, "result", at);
}

// Builds a graph holding `op` over constant inputs (an undefined TensorData is an omitted input),
// checks that type inference predicts the shapes the reference produces, and returns the outputs.
inline std::vector<TensorData> eval_op(const std::string& op, const std::vector<TensorData>& inputs,
                                       std::map<std::string, Attr> attrs = {},
                                       size_t num_outputs = 1) {
  Graph g;
  Node node{tessel::testing::op_named(op), "n0", {}, {}, std::move(attrs)};
  for (size_t i = 0; i < inputs.size(); ++i) {
    node.inputs.push_back(inputs[i].defined() ? g.add_constant("in" + std::to_string(i), inputs[i])
                                              : graph::kNoValue);
  }
  for (size_t i = 0; i < num_outputs; ++i)
    node.outputs.push_back(g.add_value("out" + std::to_string(i), {}));
  const graph::OpDef* def = graph::find_op(op);
  EXPECT_NE(def, nullptr) << op;
  std::vector<graph::TensorType> types = def->infer_type(g, node);
  std::vector<TensorData> out = eval_node(g, node, inputs);
  EXPECT_EQ(types.size(), num_outputs);
  for (size_t i = 0; i < std::min(types.size(), out.size()); ++i) {
    EXPECT_EQ(types[i].shape, out[i].shape()) << op << " output " << i;
    EXPECT_EQ(types[i].dtype, out[i].dtype()) << op << " output " << i;
  }
  out.resize(num_outputs);
  return out;
}

}  // namespace tessel::reference::nn_testing
