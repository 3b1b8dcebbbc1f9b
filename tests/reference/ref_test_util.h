// Test helpers for reference-executor tests: evaluate one op on concrete inputs through
// reference::run, and compare a result with literal expected values.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <source_location>
#include <string>
#include <vector>

#include "reference/ref_util.h"
#include "reference/reference.h"
#include "tests/common/compare.h"
#include "tests/common/expect_error.h"
#include "tests/ir/ops/op_test_util.h"

namespace tessel::reference::testing {

using graph::testing::f32;
using graph::testing::i64;
using graph::testing::make_tensor;

// Runs `op_type` on `inputs` (an undefined TensorData is an omitted input) as graph inputs.
inline std::vector<TensorData> eval(const std::string& op_type,
                                    const std::vector<TensorData>& inputs,
                                    std::map<std::string, graph::Attr> attrs = {},
                                    size_t num_outputs = 1) {
  std::vector<graph::testing::OpInput> specs;
  std::map<std::string, TensorData> feeds;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].defined()) {
      specs.push_back(graph::testing::omitted());
      continue;
    }
    specs.push_back(graph::testing::value_of(inputs[i].dtype(), inputs[i].shape()));
    feeds["in" + std::to_string(i)] = inputs[i];
  }
  graph::Graph g = graph::testing::one_node_graph(op_type, specs, std::move(attrs), num_outputs);
  return run(g, feeds);
}
inline TensorData eval1(const std::string& op_type, const std::vector<TensorData>& inputs,
                        std::map<std::string, graph::Attr> attrs = {}) {
  return eval(op_type, inputs, std::move(attrs), 1)[0];
}

// Expects dtype, shape and values (within `tol` absolute plus `tol` relative to |expected|).
inline void expect_tensor(const TensorData& got, DataType dtype, const std::vector<int64_t>& shape,
                          const std::vector<double>& values, double tol = 1e-6,
                          std::source_location at = std::source_location::current()) {
  ASSERT_EQ(got.dtype(), dtype) << got.dtype().str();
  ASSERT_EQ(got.shape(), shape);
  std::vector<double> got_values;
  for (int64_t i = 0; i < got.numel(); ++i) got_values.push_back(get_f(got, i));
  tessel::testing::expect_all_close(got_values, values, {tol, tol}, "result", at);
}

using tessel::testing::expect_error;

}  // namespace tessel::reference::testing
