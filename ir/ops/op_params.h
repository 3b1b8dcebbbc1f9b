// Decoding of operator parameters that ONNX passes as attributes in some opsets and as inputs in
// others (axes, starts/ends, pads, split, k, ...), and the output shapes they imply. Shared by
// type inference (which reads constant inputs) and the reference executor (which reads runtime
// values), so both agree on every opset rule. Errors name the node.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "ir/error.h"
#include "ir/graph.h"

namespace tessel::graph::ops {

// How a parameter function reads input i: nullptr when the input is omitted.
using ParamInput = std::function<const TensorData*(size_t index)>;
// Reads constant inputs for type inference; throws an Error naming the node when a present input
// is not a constant (constant folding is expected to have run).
ParamInput constant_params(const Graph& g, const Node& node);

// An Error whose message starts with the node's description.
Error node_error(const Node& node, const std::string& msg);
// ONNX TensorProto element type code (1 = FLOAT, 7 = INT64, ...) → DataType.
DataType onnx_dtype(int64_t code, const Node& node);
std::vector<int64_t> tensor_ints(const TensorData& t);

// Reduce*: which axes are reduced (axes attribute, or input 1 for ReduceSum >= 13 and all >= 18).
struct ReduceSpec {
  std::vector<bool> reduced;  // per input dim
  bool keepdims = true;
};
ReduceSpec reduce_spec(const Node& node, int opset, int64_t rank, const ParamInput& input);
std::vector<int64_t> reduced_shape(const std::vector<int64_t>& shape, const ReduceSpec& spec);

// Slice (attributes before opset 10, inputs after): per-dim start, step and output size; dims
// that are not sliced keep start 0, step 1. An unknown sliced dim gives an unknown size.
struct SliceSpec {
  std::vector<int64_t> starts, steps, sizes;
};
SliceSpec slice_spec(const Node& node, int opset, const std::vector<int64_t>& shape,
                     const ParamInput& input);

// Split along `axis` of size `dim` into `num_outputs` parts ('split' attribute before 13, input 1
// after).
std::vector<int64_t> split_sizes(const Node& node, int opset, int64_t dim, size_t num_outputs,
                                 const ParamInput& input);

// Squeeze/Unsqueeze (axes attribute before 13, input 1 after).
std::vector<int64_t> squeeze_shape(const Node& node, int opset, const std::vector<int64_t>& shape,
                                   const ParamInput& input);
std::vector<int64_t> unsqueeze_shape(const Node& node, int opset, const std::vector<int64_t>& shape,
                                     const ParamInput& input);

// Pad (attributes before 11, inputs after): begin/end amount per dim (negative crops) and mode.
struct PadSpec {
  std::vector<int64_t> begins, ends;
  std::string mode;  // "constant", "reflect" or "edge"
};
PadSpec pad_spec(const Node& node, int opset, int64_t rank, const ParamInput& input);

// Reshape's output shape for the requested `target` (0 copies a dim unless allowzero, -1 infers).
std::vector<int64_t> reshape_shape(const Node& node, int opset,
                                   const std::vector<int64_t>& in_shape,
                                   const std::vector<int64_t>& target);
// Transpose's permutation (default: reversed dims).
std::vector<int64_t> transpose_perm(const Node& node, int64_t rank);
// TopK's k (attribute before 10, input 1 after).
int64_t topk_k(const Node& node, int opset, const ParamInput& input);
// Shape's [start, end) range of dims (opset 15 attributes), clamped to [0, rank].
std::pair<int64_t, int64_t> shape_range(const Node& node, int opset, int64_t rank);
// Range's element count from its scalar start/limit/delta.
int64_t range_count(const Node& node, const TensorData& start, const TensorData& limit,
                    const TensorData& delta);

// Constant's output (value, value_float(s) or value_int(s) attribute).
TensorData constant_attr_value(const Node& node);
// ConstantOfShape's one-element fill value (default: float32 0).
TensorData fill_value(const Node& node);

// Dropout is the identity in inference mode (training_mode, input 2 at opset 12+, absent or a
// constant false) and when the ratio is a constant 0. Otherwise it is random.
bool dropout_may_train(const Graph& g, const Node& node);

// One activation of an LSTM / GRU / RNN cell with its alpha and beta.
struct RnnActivation {
  std::string name;
  double alpha = 0, beta = 0;
};
// The activations of each direction (f, g, h order) of an LSTM / GRU / RNN node: the attribute or
// the op's defaults; activation_alpha/beta values are consumed in order by the activations that
// take them, with the ONNX defaults otherwise. Error naming the node for an unknown activation or
// a wrong count.
std::vector<std::vector<RnnActivation>> rnn_activations(const Node& node, int64_t dirs);

}  // namespace tessel::graph::ops
