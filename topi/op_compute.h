// The te lowering of graph operators: one compute function per ONNX op, looked up by op type
// (a table, like ir/op_table.h). Each family lives in its own file (topi/compute_*.cc).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "te/operation.h"

namespace tessel::topi {

// te tensors for the node's outputs, given te tensors for its inputs (undefined for an omitted
// optional input). Constant inputs that steer shapes (Reshape's shape, Clip's bounds, ...) are
// read from graph.value(id).constant. Output names derive from `name`.
using ComputeFn = std::function<std::vector<te::Tensor>(
    const graph::Graph& g, const graph::Node& node, const std::vector<te::Tensor>& inputs,
    const std::string& name)>;
struct OpCompute {
  std::string name;
  ComputeFn compute;
};

// nullptr when the op has no te lowering yet.
const ComputeFn* find_compute(const std::string& op_type);

std::vector<OpCompute> elementwise_computes();  // topi/compute_elementwise.cc
std::vector<OpCompute> tensor_computes();       // topi/compute_tensor.cc
std::vector<OpCompute> reduce_computes();       // topi/compute_reduce.cc
std::vector<OpCompute> nn_computes();           // topi/compute_nn*.cc
std::vector<OpCompute> loss_computes();         // topi/compute_loss.cc
std::vector<OpCompute> index_computes();        // topi/compute_index.cc
std::vector<OpCompute> einsum_computes();       // topi/compute_einsum.cc
std::vector<OpCompute> resize_computes();       // topi/compute_resize.cc

}  // namespace tessel::topi
