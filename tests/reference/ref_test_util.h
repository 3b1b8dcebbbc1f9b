// Test helpers for reference-executor tests: evaluate one op on concrete inputs through
// reference::run, and compare a result with literal expected values.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "reference/ref_util.h"
#include "reference/reference.h"
#include "tests/ir/ops/op_test_util.h"

namespace tessel::reference::testing {

using graph::testing::f32;
using graph::testing::i64;
using graph::testing::make_tensor;

// Runs `op_type` on `inputs` (an undefined TensorData is an omitted input) as graph inputs.
inline std::vector<TensorData> eval(const std::string& op_type,
                                    const std::vector<TensorData>& inputs,
                                    std::map<std::string, graph::Attr> attrs = {},
                                    size_t num_outputs = 1, int opset = 17) {
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
  graph::Graph g =
      graph::testing::one_node_graph(op_type, specs, std::move(attrs), num_outputs, opset);
  return run(g, feeds);
}
inline TensorData eval1(const std::string& op_type, const std::vector<TensorData>& inputs,
                        std::map<std::string, graph::Attr> attrs = {}, int opset = 17) {
  return eval(op_type, inputs, std::move(attrs), 1, opset)[0];
}

// Expects dtype, shape and values (within `tol` relative to max(1, |expected|)).
inline void expect_tensor(const TensorData& got, DataType dtype, const std::vector<int64_t>& shape,
                          const std::vector<double>& values, double tol = 1e-6) {
  ASSERT_EQ(got.dtype(), dtype) << got.dtype().str();
  ASSERT_EQ(got.shape(), shape);
  ASSERT_EQ(got.numel(), static_cast<int64_t>(values.size()));
  for (size_t i = 0; i < values.size(); ++i) {
    double g = get_f(got, static_cast<int64_t>(i)), e = values[i];
    if (std::isnan(e)) {
      EXPECT_TRUE(std::isnan(g)) << "element " << i;
    } else if (std::isinf(e)) {
      EXPECT_EQ(g, e) << "element " << i;
    } else {
      EXPECT_NEAR(g, e, tol * std::max(1.0, std::abs(e))) << "element " << i;
    }
  }
}

// Expects an Error whose message contains `fragment`.
template <class Fn>
void expect_error(Fn fn, const std::string& fragment) {
  try {
    fn();
    ADD_FAILURE() << "expected an Error containing '" << fragment << "'";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

}  // namespace tessel::reference::testing
