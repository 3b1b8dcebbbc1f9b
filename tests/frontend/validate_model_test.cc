// validate_model: every tensor's size against its data and the window attributes, checked before
// libonnx reads the model; and the issue 22 reproducers through the importer.
#include "frontend/validate_model.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "frontend/onnx_importer.h"
#include "ir/op_table.h"
#include "tests/common/expect_error.h"
#include "tests/frontend/malformed_models.h"

namespace tessel::frontend {
namespace {

using onnx::AttributeProto;
using onnx::TensorProto;
using tessel::testing::add_attr;
using tessel::testing::add_initializer;
using tessel::testing::add_value;
using tessel::testing::expect_error;
using tessel::testing::one_node_model;

graph::Graph import_model(const onnx::ModelProto& m) {
  return import_onnx_bytes(m.SerializeAsString(), {}, "m.onnx");
}

// The op table's type inference over the graph, as the graph pipeline runs it first.
void infer_types(graph::Graph& g) {
  for (const graph::Node& node : g.nodes) {
    std::vector<graph::TensorType> types = node.def().infer_type(g, node);
    for (size_t i = 0; i < node.outputs.size(); ++i) g.value(node.outputs[i]).type = types[i];
  }
}

TEST(ValidateModelTest, Issue22ReproducersEndInAnErrorNamingTheCause) {
  for (const auto& model : tessel::testing::malformed_models()) {
    SCOPED_TRACE(model.name);
    expect_error(
        [&] {
          graph::Graph g = import_onnx_bytes(model.bytes, {}, "m.onnx");
          infer_types(g);
        },
        {model.error});
  }
}

// A Relu over `w`, an initializer the test fills in.
onnx::ModelProto relu_of_initializer(TensorProto** w) {
  onnx::ModelProto m = one_node_model("Relu", {"w"}, {{"y", {2}}}, 13);
  *w = add_initializer(m.mutable_graph(), "w", TensorProto::FLOAT, {2}, std::string(8, '\0'));
  return m;
}

TEST(ValidateModelTest, TensorSizesAreCheckedAgainstTheirDims) {
  TensorProto* w = nullptr;
  onnx::ModelProto m = relu_of_initializer(&w);
  EXPECT_NO_THROW(import_model(m));

  w->clear_raw_data();
  w->add_float_data(1.0f);  // one of two
  expect_error([&] { import_model(m); },
               {"'m.onnx': initializer 'w': float_data has 1 entries but float [2] needs 2"});

  w->clear_float_data();
  w->clear_dims();
  for (int64_t d : {int64_t{1} << 62, int64_t{8}}) w->add_dims(d);
  w->set_raw_data(std::string(8, '\0'));
  expect_error(
      [&] { import_model(m); },
      {"initializer 'w': float [4611686018427387904, 8] has more elements than fit in 64 bits"});

  w->set_dims(1, -2);
  expect_error([&] { import_model(m); }, {"initializer 'w' has a negative dim -2"});

  w->clear_raw_data();
  w->set_data_location(TensorProto::EXTERNAL);
  expect_error([&] { import_model(m); }, {"initializer 'w' stores its data in an external file"});
}

TEST(ValidateModelTest, AnEmptyTensorMayDeclareHugeDims) {
  TensorProto* w = nullptr;
  onnx::ModelProto m = relu_of_initializer(&w);
  w->clear_dims();
  for (int64_t d : {int64_t{1} << 62, int64_t{0}, int64_t{1} << 62}) w->add_dims(d);
  w->set_raw_data("");
  EXPECT_NO_THROW(import_model(m));
}

TEST(ValidateModelTest, TensorsInAttributesSubgraphsAndFunctionsAreChecked) {
  const std::string short_int64 = std::string(3, '\1');
  // A Constant node's value.
  onnx::ModelProto constant = one_node_model("Constant", {}, {{"y", {2}}}, 13);
  onnx::NodeProto* constant_node = constant.mutable_graph()->mutable_node(0);
  TensorProto* value = add_attr(constant_node, "value", AttributeProto::TENSOR)->mutable_t();
  value->set_data_type(TensorProto::INT64);
  value->add_dims(2);
  value->set_raw_data(short_int64);
  expect_error([&] { import_model(constant); }, {"attribute 'value' of node 'bad_node' (Constant): "
                                                 "raw_data has 3 bytes but int64 [2] needs 16"});

  // A sparse initializer's indices, which the ONNX checker reads.
  onnx::ModelProto sparse = one_node_model("Relu", {"s"}, {{"y", {4}}}, 13);
  onnx::SparseTensorProto* s = sparse.mutable_graph()->add_sparse_initializer();
  s->add_dims(4);
  s->mutable_values()->set_name("s");
  s->mutable_values()->set_data_type(TensorProto::FLOAT);
  s->mutable_values()->add_dims(2);
  s->mutable_values()->add_float_data(1.0f);
  s->mutable_values()->add_float_data(2.0f);
  s->mutable_indices()->set_data_type(TensorProto::INT64);
  s->mutable_indices()->add_dims(2);
  s->mutable_indices()->set_raw_data(short_int64);
  expect_error([&] { import_model(sparse); },
               {"sparse initializer 's' (indices): raw_data has 3 bytes"});

  // An initializer of an If branch.
  onnx::ModelProto branch = one_node_model("If", {"c"}, {{"y", {2}}}, 13);
  add_value(branch.mutable_graph()->mutable_input(), "c", TensorProto::BOOL, {});
  for (const char* name : {"then_branch", "else_branch"}) {
    onnx::NodeProto* if_node = branch.mutable_graph()->mutable_node(0);
    onnx::GraphProto* body = add_attr(if_node, name, AttributeProto::GRAPH)->mutable_g();
    body->set_name(name);
    add_initializer(body, "k", TensorProto::INT64, {2}, short_int64);
    add_value(body->mutable_output(), "k", TensorProto::INT64, {2});
  }
  expect_error([&] { import_model(branch); },
               {"initializer 'k' in attribute 'then_branch' of node 'bad_node' (If): raw_data "
                "has 3 bytes"});
  // The same If as the then branch of another: both levels are named.
  onnx::ModelProto nested = one_node_model("If", {"c"}, {{"y", {2}}}, 13);
  add_value(nested.mutable_graph()->mutable_input(), "c", TensorProto::BOOL, {});
  onnx::GraphProto* outer_then =
      add_attr(nested.mutable_graph()->mutable_node(0), "then_branch", AttributeProto::GRAPH)
          ->mutable_g();
  outer_then->set_name("outer_then");
  *outer_then->add_node() = branch.graph().node(0);
  outer_then->mutable_node(0)->set_name("inner");
  add_value(outer_then->mutable_output(), "y", TensorProto::INT64, {2});
  expect_error([&] { import_model(nested); },
               {"initializer 'k' in attribute 'then_branch' of node 'inner' (If) in attribute "
                "'then_branch' of node 'bad_node' (If): raw_data has 3 bytes"});

  // A Constant in a model function's body.
  onnx::ModelProto function = one_node_model("Relu", {"x"}, {{"y", {2}}}, 13);
  add_value(function.mutable_graph()->mutable_input(), "x", TensorProto::FLOAT, {2});
  onnx::FunctionProto* f = function.add_functions();
  f->set_name("F");
  f->set_domain("custom");
  onnx::NodeProto* body_constant = f->add_node();
  body_constant->set_op_type("Constant");
  body_constant->add_output("k");
  TensorProto* t = add_attr(body_constant, "value", AttributeProto::TENSOR)->mutable_t();
  t->set_data_type(TensorProto::INT64);
  t->add_dims(2);
  t->set_raw_data(short_int64);
  expect_error([&] { import_model(function); },
               {"attribute 'value' of node 'Constant_0' (Constant) in function 'custom.F': "
                "raw_data has 3 bytes"});
}

TEST(ValidateModelTest, WindowAttributesAreInRange) {
  struct Case {
    std::string op, attr;
    std::vector<int64_t> values;  // one value: an INT attribute
  };
  for (const Case& c :
       {Case{"Conv", "dilations", {1, 0}}, Case{"Conv", "kernel_shape", {3, -1}},
        Case{"Conv", "pads", {0, 0, -1, 0}}, Case{"Conv", "group", {0}},
        Case{"MaxPool", "strides", {0, 1}}, Case{"AveragePool", "strides", {int64_t{1} << 40, 1}},
        Case{"DepthToSpace", "blocksize", {int64_t{1} << 40}}}) {
    SCOPED_TRACE(c.op + "." + c.attr);
    std::vector<std::string> inputs{"x"};
    if (c.op == "Conv") inputs.push_back("w");
    onnx::ModelProto m = one_node_model(c.op, inputs, {{"y", {1, 1, 4, 4}}}, 13);
    for (const auto& in : inputs)
      add_value(m.mutable_graph()->mutable_input(), in, TensorProto::FLOAT, {1, 1, 4, 4});
    onnx::NodeProto* node = m.mutable_graph()->mutable_node(0);
    if (c.op == "MaxPool" || c.op == "AveragePool") {
      AttributeProto* kernel = add_attr(node, "kernel_shape", AttributeProto::INTS);
      kernel->add_ints(2);
      kernel->add_ints(2);
    }
    AttributeProto* a =
        add_attr(node, c.attr, c.values.size() == 1 ? AttributeProto::INT : AttributeProto::INTS);
    if (c.values.size() == 1) {
      a->set_i(c.values[0]);
    } else {
      for (int64_t v : c.values) a->add_ints(v);
    }
    std::string want =
        fmt::format("'m.onnx': node 'bad_node' ({}): attribute '{}' has", c.op, c.attr);
    expect_error([&] { import_model(m); }, {want, "it must be between"});
  }
}

TEST(ValidateModelTest, DeclaredDimsAreNotNegative) {
  onnx::ModelProto m = one_node_model("Relu", {"x"}, {{"y", {2, 3}}}, 13);
  add_value(m.mutable_graph()->mutable_input(), "x", TensorProto::FLOAT, {2, -3});
  expect_error([&] { import_model(m); },
               {"'m.onnx': value 'x' declares a negative dim -3 (dim 1)"});
}

}  // namespace
}  // namespace tessel::frontend
