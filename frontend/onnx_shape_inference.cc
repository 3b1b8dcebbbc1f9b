#include "frontend/onnx_shape_inference.h"

#include <fmt/format.h>
#include <onnx/defs/schema.h>
#include <onnx/defs/shape_inference.h>
#include <onnx/shape_inference/implementation.h>

#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <unordered_map>

#include "frontend/onnx_proto_convert.h"
#include "frontend/validate_model.h"

namespace tessel::frontend::detail {

namespace {

using onnx::InferenceContext;
using onnx::OpSchema;

// The longest shape input whose declared length libonnx turns into that many output dims
// (ConstantOfShape, Expand) before any value is known. numpy's limit on dims.
constexpr int64_t kMaxRank = 64;

std::optional<int64_t> input_rank(const InferenceContext& ctx, size_t i) {
  if (i >= ctx.getNumInputs()) return std::nullopt;
  const onnx::TypeProto* t = ctx.getInputType(i);
  if (!t || !t->has_tensor_type() || !t->tensor_type().has_shape()) return std::nullopt;
  return t->tensor_type().shape().dim_size();
}

int64_t int_attr(const InferenceContext& ctx, const std::string& name, int64_t def) {
  const onnx::AttributeProto* a = ctx.getAttribute(name);
  return a ? a->i() : def;
}

// What libonnx's inference function for an op assumes about the node: a message when it does not
// hold.
using Precondition = std::function<std::string(const InferenceContext&)>;

std::string exact_ranks(const InferenceContext& ctx, std::initializer_list<size_t> inputs,
                        int64_t rank) {
  for (size_t i : inputs) {
    std::optional<int64_t> r = input_rank(ctx, i);
    if (r && *r != rank) return fmt::format("input {} has rank {}, not {}", i, *r, rank);
  }
  return "";
}

// Gemm reads dims 0 and 1 of A and B.
std::string gemm(const InferenceContext& ctx) { return exact_ranks(ctx, {0, 1}, 2); }
// LSTM, GRU and RNN read dims of X, W and R.
std::string recurrent(const InferenceContext& ctx) { return exact_ranks(ctx, {0, 1, 2}, 3); }
// STFT reads dim 1 of the signal.
std::string stft(const InferenceContext& ctx) { return exact_ranks(ctx, {0}, 3); }

// LayerNormalization sets the dims of its statistics from `axis` on, unchecked.
std::string layer_norm(const InferenceContext& ctx) {
  std::optional<int64_t> r = input_rank(ctx, 0);
  int64_t axis = int_attr(ctx, "axis", -1);
  if (r && (*r == 0 || axis < -*r || axis > *r))
    return fmt::format("axis {} is out of range for rank {}", axis, *r);
  return "";
}

// GatherND copies dims from batch_dims + the last indices dim on.
std::string gather_nd(const InferenceContext& ctx) {
  int64_t batch_dims = int_attr(ctx, "batch_dims", 0);
  if (batch_dims < 0) return fmt::format("batch_dims {} is negative", batch_dims);
  for (size_t i : {0, 1}) {
    std::optional<int64_t> r = input_rank(ctx, i);
    if (r && batch_dims >= *r) {
      return fmt::format("batch_dims {} is out of range for input {} of rank {}", batch_dims, i,
                         *r);
    }
  }
  return "";
}

// The conv ops take the kernel's dims from W's, as many as X has spatial dims.
template <size_t kWeight>
std::string conv_weight(const InferenceContext& ctx) {
  std::optional<int64_t> x = input_rank(ctx, 0), w = input_rank(ctx, kWeight);
  if (x && w && *x != *w)
    return fmt::format("weight (input {}) has rank {} but X has rank {}", kWeight, *w, *x);
  return "";
}

// A 1-D shape input whose length becomes the output rank.
template <size_t kShape>
std::string shape_length(const InferenceContext& ctx) {
  const onnx::TypeProto* t = kShape < ctx.getNumInputs() ? ctx.getInputType(kShape) : nullptr;
  if (!t || !t->has_tensor_type() || t->tensor_type().shape().dim_size() != 1) return "";
  const auto& length = t->tensor_type().shape().dim(0);
  if (length.has_dim_value() && length.dim_value() > kMaxRank) {
    return fmt::format("shape input {} has {} entries; inference expands at most {}", kShape,
                       length.dim_value(), kMaxRank);
  }
  return "";
}

// Einsum's implicit form (no "->") counts each operand letter at letter - 'a', unchecked.
std::string einsum(const InferenceContext& ctx) {
  const onnx::AttributeProto* a = ctx.getAttribute("equation");
  if (!a || a->s().find("->") != std::string::npos) return "";
  for (char c : a->s()) {
    if (!(c >= 'a' && c <= 'z') && c != ',' && c != '.' && c != ' ') {
      return fmt::format("equation '{}' without '->' may hold only lower-case letters", a->s());
    }
  }
  return "";
}

// Scan sizes its axis lists by num_scan_inputs and by the outputs left after the state variables,
// unchecked. Scan-8 has a leading sequence_lens input.
std::string scan(const InferenceContext& ctx, int64_t leading_inputs) {
  int64_t inputs = static_cast<int64_t>(ctx.getNumInputs()) - leading_inputs;
  int64_t scan_inputs = int_attr(ctx, "num_scan_inputs", 0);
  if (scan_inputs < 1 || scan_inputs > inputs) {
    return fmt::format("num_scan_inputs {} is out of range for {} inputs", scan_inputs, inputs);
  }
  if (static_cast<int64_t>(ctx.getNumOutputs()) < inputs - scan_inputs) {
    return fmt::format("{} outputs are fewer than the {} state variables", ctx.getNumOutputs(),
                       inputs - scan_inputs);
  }
  return "";
}

// SplitToSequence divides the axis by a scalar split.
std::string split_to_sequence(const InferenceContext& ctx) {
  const onnx::TensorProto* split = ctx.getNumInputs() > 1 ? ctx.getInputData(1) : nullptr;
  if (!split || split->dims_size() != 0) return "";
  graph::TensorData value = tensor_from_proto(*split, "split");
  if (value.get_int(0) < 1)
    return fmt::format("scalar split {} must be positive", value.get_int(0));
  return "";
}

Precondition find_precondition(const std::string& op_type, int since_version) {
  if (op_type == "Scan") {
    return [leading = since_version == 8 ? 1 : 0](const InferenceContext& ctx) {
      return scan(ctx, leading);
    };
  }
  static const std::unordered_map<std::string, Precondition> table{
      {"Gemm", gemm},
      {"LSTM", recurrent},
      {"GRU", recurrent},
      {"RNN", recurrent},
      {"STFT", stft},
      {"LayerNormalization", layer_norm},
      {"GatherND", gather_nd},
      {"Conv", conv_weight<1>},
      {"ConvTranspose", conv_weight<1>},
      {"ConvInteger", conv_weight<1>},
      {"QLinearConv", conv_weight<3>},
      {"Expand", shape_length<1>},
      {"ConstantOfShape", shape_length<0>},
      {"SplitToSequence", split_to_sequence},
      {"Einsum", einsum},
  };
  auto it = table.find(op_type);
  return it == table.end() ? Precondition() : it->second;
}

// The inference function behind the checks. A failed check is an InferenceError, which ONNX
// records against the node and moves on from.
onnx::InferenceFunction guarded(const OpSchema& schema) {
  return [op_type = schema.Name(), infer = schema.GetTypeAndShapeInferenceFunction(),
          precondition =
              find_precondition(schema.Name(), schema.SinceVersion())](InferenceContext& ctx) {
    std::string problem;
    try {
      problem = attribute_range_problem(
          op_type, [&](const std::string& name) { return ctx.getAttribute(name); });
      if (problem.empty() && precondition) problem = precondition(ctx);
    } catch (const std::exception& e) {
      problem = e.what();
    }
    if (!problem.empty()) fail_shape_inference(op_type, ": ", problem);
    infer(ctx);
  };
}

// ONNX's schemas, handed out as copies whose ai.onnx inference functions are guarded.
class GuardedSchemaRegistry final : public onnx::ISchemaRegistry {
 public:
  const OpSchema* GetSchema(const std::string& key, const int max_version,
                            const std::string& domain) const override {
    const OpSchema* schema = onnx::OpSchemaRegistry::Schema(key, max_version, domain);
    if (!schema || !domain.empty() || !schema->has_type_and_shape_inference_function())
      return schema;
    auto [it, added] = guarded_.try_emplace(schema);
    if (added) {
      it->second = std::make_unique<OpSchema>(*schema);
      it->second->TypeAndShapeInferenceFunction(guarded(*schema));
    }
    return it->second.get();
  }

 private:
  mutable std::map<const OpSchema*, std::unique_ptr<OpSchema>> guarded_;
};

}  // namespace

void infer_shapes(onnx::ModelProto& model) {
  GuardedSchemaRegistry registry;
  try {
    onnx::shape_inference::InferShapes(model, &registry);
  } catch (const std::exception&) {
    // Types ONNX cannot infer stay unknown; the graph's own type inference fills them in later.
  }
}

}  // namespace tessel::frontend::detail
