// Shared by the driver's tests: a compiled one-input model against the reference executor.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "../passes/graph_builder.h"
#include "driver/compile.h"
#include "reference/reference.h"

namespace tessel::testing {

// Runs `m` (compiled from `g`) on a random input `input` of `shape` and compares its first output
// with the reference executor's, element by element within `tol`.
inline void expect_matches_reference(const graph::Graph& g, CompiledModel& m,
                                     const std::string& input, const std::vector<int64_t>& shape,
                                     double tol) {
  graph::TensorData x = passes::testing::random_tensor(shape, 3);
  m.set_input(input, to_ndarray(x));
  m.run();
  graph::TensorData want = reference::run(g, {{input, x}})[0];
  graph::TensorData got = to_tensor_data(m.get_output(0));
  ASSERT_EQ(got.shape(), want.shape());
  for (int64_t i = 0; i < got.numel(); ++i)
    ASSERT_NEAR(got.get_double(i), want.get_double(i), tol) << i;
}

}  // namespace tessel::testing
