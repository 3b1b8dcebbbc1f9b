// The te lowering of graph operators: one compute function per op, in a table indexed by the op's
// kind (ir/op_kind.h), like the op table itself. Each family lives in its own file
// (topi/compute_*.cc). Computes see the op, its attributes and te tensors, never the graph:
// passes/lower_to_te is the glue.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/ops/op_params.h"
#include "te/operation.h"

namespace tessel::topi {

using graph::OpKind;

// What a te compute reads of one op besides its input tensors: the op and its attributes, the types
// of its outputs, and the values of the inputs that steer shapes (Reshape's shape, Clip's bounds,
// ...). TVM's FTVMCompute likewise gets the attributes and the output type.
struct OpCall : graph::OpAttrs {
  // One per output of the op; unset where the model omits the output.
  std::vector<std::optional<graph::TensorType>> outputs;
  // The value of input i, nullptr when the input is omitted; a ConstantRequiredError naming the
  // op, the input and `what` when it is computed at run time.
  std::function<const graph::TensorData*(size_t i, const std::string& what)> constant;
  // The value of input i when it is a graph constant; nullptr otherwise (omitted or computed at run
  // time), never an error: for computes that specialize on a constant but take any input.
  std::function<const graph::TensorData*(size_t i)> constant_if_known;

  // `constant` of an input the op requires: an Error naming the op when it is omitted.
  const graph::TensorData& required_constant(size_t i, const std::string& what) const;
  // `constant` for the ir/ops/ parameter decoders.
  graph::ops::ParamInput params() const;
  bool wants_output(size_t i) const { return i < outputs.size() && outputs[i].has_value(); }
  // The type of output i, which must be wanted.
  const graph::TensorType& output_type(size_t i) const;
};

// te tensors for the op's outputs, given te tensors for its inputs (undefined for an omitted
// optional input). Output names derive from `name`.
using ComputeFn = std::function<std::vector<te::Tensor>(
    const OpCall& call, const std::vector<te::Tensor>& inputs, const std::string& name)>;
struct OpCompute {
  OpKind op;
  ComputeFn compute;
};

// The compute of `op`; nullptr when the op has no te lowering.
const ComputeFn* find_compute(OpKind op);

std::vector<OpCompute> elementwise_computes();  // topi/compute_elementwise.cc
std::vector<OpCompute> tensor_computes();       // topi/compute_tensor.cc
std::vector<OpCompute> reduce_computes();       // topi/compute_reduce.cc
std::vector<OpCompute> nn_computes();           // topi/compute_nn*.cc
std::vector<OpCompute> loss_computes();         // topi/compute_loss.cc
std::vector<OpCompute> index_computes();        // topi/compute_index.cc
std::vector<OpCompute> einsum_computes();       // topi/compute_einsum.cc
std::vector<OpCompute> resize_computes();       // topi/compute_resize.cc

}  // namespace tessel::topi
