// Decoding of operator parameters passed as inputs (axes, starts/ends, pads, split, k, ...) and the
// output shapes they imply, for the one (opset-17) form of each op that the importer produces
// (frontend/canonicalize_ops.h). Shared by type inference (which reads constant inputs), topi and
// the reference executor (which reads runtime values), so all agree on every rule. Errors name the
// node.
#pragma once

#include <functional>
#include <optional>
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
Error node_error(const OpAttrs& node, const std::string& msg);
// ONNX TensorProto element type code (1 = FLOAT, 7 = INT64, ...) → DataType.
DataType onnx_dtype(int64_t code, const OpAttrs& node);
std::vector<int64_t> tensor_ints(const TensorData& t);

// Reduce*: which axes are reduced (the axes attribute, or input 1 for ReduceSum).
struct ReduceSpec {
  std::vector<bool> reduced;  // per input dim
  bool keepdims = true;
};
ReduceSpec reduce_spec(const OpAttrs& node, int64_t rank, const ParamInput& input);
std::vector<int64_t> reduced_shape(const std::vector<int64_t>& shape, const ReduceSpec& spec);

// Slice (starts, ends, axes, steps inputs): per-dim start, step and output size; dims
// that are not sliced keep start 0, step 1. An unknown sliced dim gives an unknown size.
struct SliceSpec {
  std::vector<int64_t> starts, steps, sizes;
};
SliceSpec slice_spec(const OpAttrs& node, const std::vector<int64_t>& shape,
                     const ParamInput& input);

// Split along `axis` of size `dim` into `num_outputs` parts: the sizes of input 1, else equal
// parts.
std::vector<int64_t> split_sizes(const OpAttrs& node, int64_t dim, size_t num_outputs,
                                 const ParamInput& input);

// Squeeze/Unsqueeze (axes input 1).
std::vector<int64_t> squeeze_shape(const OpAttrs& node, const std::vector<int64_t>& shape,
                                   const ParamInput& input);
std::vector<int64_t> unsqueeze_shape(const OpAttrs& node, const std::vector<int64_t>& shape,
                                     const ParamInput& input);

// Pad (pads input 1): begin/end amount per dim (negative crops) and mode.
struct PadSpec {
  std::vector<int64_t> begins, ends;
  std::string mode;  // "constant", "reflect" or "edge"
};
PadSpec pad_spec(const OpAttrs& node, int64_t rank, const ParamInput& input);

// Reshape's output shape for the requested `target` (0 copies a dim unless allowzero, -1 infers).
std::vector<int64_t> reshape_shape(const OpAttrs& node, const std::vector<int64_t>& in_shape,
                                   const std::vector<int64_t>& target);
// Transpose's permutation (default: reversed dims).
std::vector<int64_t> transpose_perm(const OpAttrs& node, int64_t rank);
// TopK's k (input 1).
int64_t topk_k(const OpAttrs& node, const ParamInput& input);
// Shape's [start, end) range of dims (start/end attributes), clamped to [0, rank].
std::pair<int64_t, int64_t> shape_range(const OpAttrs& node, int64_t rank);
// Range's element count from its scalar start/limit/delta.
int64_t range_count(const OpAttrs& node, const TensorData& start, const TensorData& limit,
                    const TensorData& delta);

// Constant's output (value, value_float(s) or value_int(s) attribute).
TensorData constant_attr_value(const OpAttrs& node);
// ConstantOfShape's one-element fill value (default: float32 0).
TensorData fill_value(const OpAttrs& node);

// Dropout is the identity in inference mode (training_mode, input 2, absent or a constant false)
// and when the ratio is a constant 0. Otherwise it is random.
bool dropout_may_train(const Graph& g, const Node& node);

// One activation of an LSTM / GRU / RNN cell with its alpha and beta.
struct RnnActivation {
  std::string name;          // as the attribute spells it: "Sigmoid", "Affine", ...
  std::optional<OpKind> op;  // the elementwise op computing it; unset for Affine and ScaledTanh
  bool takes_alpha = false;  // the op reads `alpha` (and `beta`) attributes
  bool takes_beta = false;
  double alpha = 0, beta = 0;
};
// The activations of each direction (f, g, h order) of an LSTM / GRU / RNN node: the attribute or
// the op's defaults; activation_alpha/beta values are consumed in order by the activations that
// take them, with the ONNX defaults otherwise. Error naming the node for an unknown activation or
// a wrong count.
std::vector<std::vector<RnnActivation>> rnn_activations(const OpAttrs& node, int64_t dirs);

}  // namespace tessel::graph::ops
