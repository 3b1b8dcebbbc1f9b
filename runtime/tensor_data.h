// Between the graph IR's host tensors (graph::TensorData) and runtime arrays.
#pragma once

#include "ir/graph.h"
#include "runtime/ndarray.h"

namespace tessel::runtime {

// An array over t's bytes when they are kArrayAlignment-aligned (TensorData's own allocations
// are), which it keeps alive; else a copy.
NDArray to_ndarray(const graph::TensorData& t);
graph::TensorData to_tensor_data(const NDArray& a);

}  // namespace tessel::runtime
