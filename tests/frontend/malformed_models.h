// The malformed ONNX models of issue 22, built with ONNX's protobuf classes: each once crashed or
// hung the importer (or ended in an internal error) and must now fail with a tessel::Error. Shared
// by the frontend tests and the CLI tests (tests/cli/import_safety_test.cc).
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace tessel::testing {

struct MalformedModel {
  std::string name;   // names the test case and its file
  std::string bytes;  // a serialized ModelProto
  std::string error;  // a part of the error message
};

inline onnx::ValueInfoProto* add_value(
    google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* values, const std::string& name,
    int32_t elem_type, const std::vector<int64_t>& dims) {
  onnx::ValueInfoProto* v = values->Add();
  v->set_name(name);
  auto* tensor = v->mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(elem_type);
  auto* shape = tensor->mutable_shape();
  for (int64_t d : dims) shape->add_dim()->set_dim_value(d);
  return v;
}

using OutputDims = std::vector<std::pair<std::string, std::vector<int64_t>>>;

// A model of one ai.onnx node at `opset`, reading `inputs` (graph inputs or initializers added by
// the caller) and writing float outputs of the given dims.
inline onnx::ModelProto one_node_model(const std::string& op_type,
                                       const std::vector<std::string>& inputs,
                                       const OutputDims& outputs, int opset) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(opset);
  onnx::GraphProto* g = m.mutable_graph();
  g->set_name("malformed");
  onnx::NodeProto* n = g->add_node();
  n->set_op_type(op_type);
  n->set_name("bad_node");
  for (const auto& in : inputs) n->add_input(in);
  for (const auto& [name, dims] : outputs) {
    n->add_output(name);
    add_value(g->mutable_output(), name, onnx::TensorProto::FLOAT, dims);
  }
  return m;
}

inline onnx::AttributeProto* add_attr(onnx::NodeProto* n, const std::string& name,
                                      onnx::AttributeProto::AttributeType type) {
  onnx::AttributeProto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(type);
  return a;
}

inline onnx::TensorProto* add_initializer(onnx::GraphProto* g, const std::string& name,
                                          int32_t data_type, const std::vector<int64_t>& dims,
                                          const std::string& raw_data) {
  onnx::TensorProto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(data_type);
  for (int64_t d : dims) t->add_dims(d);
  t->set_raw_data(raw_data);
  return t;
}

// Reshape's int64 shape initializer declares 2 elements but holds 3 bytes: libonnx's ParseData
// copied them into a vector sized by the bytes and Reshape's inference read past it (SIGSEGV).
inline MalformedModel short_raw_data_model() {
  onnx::ModelProto m = one_node_model("Reshape", {"x", "shape"}, {{"y", {3, 2}}}, 13);
  add_value(m.mutable_graph()->mutable_input(), "x", onnx::TensorProto::FLOAT, {2, 3});
  add_initializer(m.mutable_graph(), "shape", onnx::TensorProto::INT64, {2}, std::string(3, '\1'));
  return {"short_raw_data", m.SerializeAsString(),
          "initializer 'shape': raw_data has 3 bytes but int64 [2] needs 16"};
}

// LayerNormalization with axis -2^31 and its statistics outputs: libonnx set dims from the axis
// on, unchecked (SIGSEGV). Tessel's type inference rejects the axis.
inline MalformedModel layer_norm_axis_model() {
  onnx::ModelProto m =
      one_node_model("LayerNormalization", {"x", "scale", "bias"},
                     {{"y", {2, 3, 4}}, {"mean", {2, 3, 1}}, {"inv_std", {2, 3, 1}}}, 17);
  for (const char* name : {"x", "scale", "bias"}) {
    add_value(m.mutable_graph()->mutable_input(), name, onnx::TensorProto::FLOAT,
              name == std::string("x") ? std::vector<int64_t>{2, 3, 4} : std::vector<int64_t>{4});
  }
  add_attr(m.mutable_graph()->mutable_node(0), "axis", onnx::AttributeProto::INT)->set_i(INT32_MIN);
  return {"layer_norm_axis", m.SerializeAsString(), "axis -2147483648 is out of range for rank 3"};
}

// Conv with strides [0, 0] and auto_pad SAME_LOWER: libonnx's inference divided by the stride
// (SIGFPE).
inline MalformedModel conv_zero_strides_model() {
  onnx::ModelProto m = one_node_model("Conv", {"x", "w"}, {{"y", {1, 1, 5, 5}}}, 13);
  add_value(m.mutable_graph()->mutable_input(), "x", onnx::TensorProto::FLOAT, {1, 1, 5, 5});
  add_value(m.mutable_graph()->mutable_input(), "w", onnx::TensorProto::FLOAT, {1, 1, 3, 3});
  onnx::NodeProto* conv = m.mutable_graph()->mutable_node(0);
  onnx::AttributeProto* strides = add_attr(conv, "strides", onnx::AttributeProto::INTS);
  strides->add_ints(0);
  strides->add_ints(0);
  add_attr(conv, "auto_pad", onnx::AttributeProto::STRING)->set_s("SAME_LOWER");
  return {"conv_zero_strides", m.SerializeAsString(),
          "node 'bad_node' (Conv): attribute 'strides' has 0; it must be between 1 and 2147483647"};
}

// An initializer declaring 2^40 floats with 32 bytes of data: the importer allocated 4 TiB before
// comparing sizes (std::bad_alloc, an internal error).
inline MalformedModel huge_dims_model() {
  onnx::ModelProto m = one_node_model("Relu", {"w"}, {{"y", {int64_t{1} << 40}}}, 13);
  add_initializer(m.mutable_graph(), "w", onnx::TensorProto::FLOAT, {int64_t{1} << 40},
                  std::string(32, '\0'));
  return {"huge_dims", m.SerializeAsString(),
          "initializer 'w': raw_data has 32 bytes but float [1099511627776] needs"};
}

// A float16 input times a float32 initializer: lowering failed with an internal error.
inline MalformedModel mixed_dtype_matmul_model() {
  onnx::ModelProto m = one_node_model("MatMul", {"x", "w"}, {{"y", {2, 3}}}, 13);
  add_value(m.mutable_graph()->mutable_input(), "x", onnx::TensorProto::FLOAT16, {2, 4});
  add_initializer(m.mutable_graph(), "w", onnx::TensorProto::FLOAT, {4, 3},
                  std::string(4 * 3 * 4, '\0'));
  onnx::TypeProto* y = m.mutable_graph()->mutable_output(0)->mutable_type();
  y->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT16);
  return {"mixed_dtype_matmul", m.SerializeAsString(),
          "node 'bad_node' (MatMul): input 1 ('w') is float32 but input 0 ('x') is float16"};
}

inline std::vector<MalformedModel> malformed_models() {
  return {short_raw_data_model(), layer_norm_axis_model(), conv_zero_strides_model(),
          huge_dims_model(), mixed_dtype_matmul_model()};
}

}  // namespace tessel::testing
