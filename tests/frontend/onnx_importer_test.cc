#include "frontend/onnx_importer.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <fstream>

#include "tests/common/expect_error.h"
#include "tests/frontend/malformed_models.h"

namespace tessel::frontend {
namespace {

using tessel::testing::expect_error;

const std::string kData = TESSEL_ONNX_TESTDATA_DIR;

ImportOptions with_shapes(std::map<std::string, std::vector<int64_t>> shapes) {
  return ImportOptions{std::move(shapes), {}};
}

graph::Graph import_text(const std::string& text, const ImportOptions& opt = {}) {
  return import_onnx_bytes(onnx_text_to_model_bytes(text), opt, "test-model");
}

const graph::Node& only_node(const graph::Graph& g, const std::string& op_type) {
  for (const auto& n : g.nodes) {
    if (graph::op_kind_name(n.op) == op_type) return n;
  }
  throw std::runtime_error("no " + op_type + " node in\n" + g.str());
}

TEST(OnnxImporterTest, ImportsNodeTestAbs) {
  graph::Graph g = import_onnx(kData + "/node/test_abs/model.onnx");
  g.validate();
  ASSERT_EQ(g.inputs.size(), 1u);
  ASSERT_EQ(g.nodes.size(), 1u);
  ASSERT_EQ(g.outputs.size(), 1u);
  EXPECT_EQ(g.value(g.inputs[0]).name, "x");
  EXPECT_EQ(g.value(g.inputs[0]).type.str(), "float32[3, 4, 5]");
  EXPECT_EQ(g.nodes[0].op, graph::OpKind::Abs);
  EXPECT_EQ(g.nodes[0].inputs, std::vector<graph::ValueId>{g.inputs[0]});
  EXPECT_EQ(g.nodes[0].outputs, std::vector<graph::ValueId>{g.outputs[0]});
  EXPECT_EQ(g.value(g.outputs[0]).name, "y");
  EXPECT_EQ(g.value(g.outputs[0]).type.str(), "float32[3, 4, 5]");
}

TEST(OnnxImporterTest, ImportsConvAttributes) {
  graph::Graph g = import_onnx(kData + "/node/test_conv_with_strides_padding/model.onnx");
  const graph::Node& conv = only_node(g, "Conv");
  EXPECT_EQ(conv.attr_ints("kernel_shape", {}), (std::vector<int64_t>{3, 3}));
  EXPECT_EQ(conv.attr_ints("pads", {}), (std::vector<int64_t>{1, 1, 1, 1}));
  EXPECT_EQ(conv.attr_ints("strides", {}), (std::vector<int64_t>{2, 2}));
  ASSERT_EQ(g.inputs.size(), 2u);
  EXPECT_EQ(g.value(g.inputs[0]).type.str(), "float32[1, 1, 7, 5]");
  EXPECT_EQ(g.value(g.inputs[1]).type.str(), "float32[1, 1, 3, 3]");
  EXPECT_EQ(g.value(g.outputs[0]).type.str(), "float32[1, 1, 4, 3]");
}

TEST(OnnxImporterTest, ImportsSimpleExpandModel) {
  graph::Graph g = import_onnx(kData + "/simple/test_expand_shape_model1/model.onnx");
  g.validate();
  ASSERT_EQ(g.inputs.size(), 2u);
  EXPECT_EQ(g.value(g.inputs[0]).type.str(), "float32[1, 3, 1]");
  EXPECT_EQ(g.value(g.inputs[1]).type.str(), "int64[2]");
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].name, "test");
  EXPECT_EQ(g.nodes[0].op, graph::OpKind::Expand);
  EXPECT_EQ(g.nodes[0].inputs, g.inputs);
  EXPECT_EQ(g.value(g.outputs[0]).name, "Y");
}

TEST(OnnxImporterTest, InitializersListedAsInputsBecomeConstants) {
  // `w` is both a graph input and an initializer (a default value): a constant, not an input.
  graph::Graph g = import_text(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    agraph (float[2] x, float[2] w = {1.5, -2.0}) => (float[2] y) { y = Mul(x, w) })");
  g.validate();
  ASSERT_EQ(g.inputs.size(), 1u) << g.str();
  EXPECT_EQ(g.value(g.inputs[0]).name, "x");
  graph::ValueId w = g.find_value("w");
  ASSERT_NE(w, graph::kNoValue);
  ASSERT_TRUE(g.value(w).constant);
  const graph::TensorData& data = *g.value(w).constant;
  EXPECT_EQ(g.value(w).type.str(), "float32[2]");
  EXPECT_EQ(data.get_double(0), 1.5);
  EXPECT_EQ(data.get_double(1), -2.0);
  EXPECT_EQ(g.nodes[0].inputs, (std::vector<graph::ValueId>{g.inputs[0], w}));
}

TEST(OnnxImporterTest, ImportsBfloat16ValuesAndCastTargets) {
  graph::Graph g = import_text(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    agraph (float[2] x, bfloat16[2] w) => (bfloat16[2] y, float[2] z) {
      y = Cast <to = 16> (x)
      z = Cast <to = 1> (w)
    })");
  EXPECT_EQ(g.value(g.find_value("w")).type.str(), "bfloat16[2]");
  EXPECT_EQ(only_node(g, "Cast").attr_int("to", 0), 16);
  g = import_onnx(kData + "/node/test_cast_FLOAT_to_BFLOAT16/model.onnx");
  EXPECT_EQ(g.value(g.outputs[0]).type.str(), "bfloat16[3, 4]");
}

TEST(OnnxImporterTest, OldOpsetModelsImportInTheNewestOpsetsForm) {
  graph::Graph g = import_onnx(kData + "/pytorch-converted/test_Conv2d/model.onnx");
  EXPECT_EQ(g.model_opset, 6);
  EXPECT_EQ(g.opset, kMaxOpset);  // frontend/canonicalize_ops.h
  EXPECT_EQ(only_node(g, "Conv").op, graph::OpKind::Conv);
}

TEST(OnnxImporterTest, OpsBeforeTheirSinceOpsetAreUnsupported) {
  // Add's table entry starts at opset 7 (legacy broadcasting is not implemented); the opset-6
  // model reports it with its opset.
  auto e = expect_error<UnsupportedOpsError>(
      [] { import_onnx(kData + "/pytorch-operator/test_operator_addconstant/model.onnx"); });
  ASSERT_TRUE(e);
  ASSERT_EQ(e->ops().size(), 1u);
  EXPECT_EQ(e->ops()[0].op_type, "Add");
  EXPECT_EQ(e->ops()[0].opset, 6);
}

TEST(OnnxImporterTest, IfBranchesAreSubgraphs) {
  graph::Graph g = import_onnx(kData + "/node/test_if/model.onnx");
  const graph::Node& node = only_node(g, "If");
  ASSERT_EQ(node.inputs.size(), 1u);  // the branches read no outer value
  for (const char* key : {"then_branch", "else_branch"}) {
    std::shared_ptr<graph::Graph> branch = node.attr_graph(key);
    ASSERT_TRUE(branch) << key;
    branch->validate();
    EXPECT_TRUE(branch->inputs.empty()) << key;
    EXPECT_EQ(branch->outputs.size(), 1u) << key;
    EXPECT_EQ(branch->value(branch->outputs[0]).type.dtype, DataType::f32()) << key;
  }
}

TEST(OnnxImporterTest, IfBranchesCaptureOuterValuesAsTrailingInputs) {
  graph::Graph g = import_text(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    agraph (bool c, float[2] x, float[2] y) => (float[2] z) {
      z = If(c) <
        then_branch = then_g () => (float[2] t) { t = Neg(x) },
        else_branch = else_g () => (float[2] e) { e = Add(y, x) }
      >
    })");
  g.validate();
  const graph::Node& node = only_node(g, "If");
  ASSERT_EQ(node.inputs.size(), 3u);
  EXPECT_EQ(g.value(node.inputs[0]).name, "c");
  EXPECT_EQ(g.value(node.inputs[1]).name, "x");
  EXPECT_EQ(g.value(node.inputs[2]).name, "y");
  for (const char* key : {"then_branch", "else_branch"}) {
    std::shared_ptr<graph::Graph> branch = node.attr_graph(key);
    ASSERT_TRUE(branch) << key;
    branch->validate();
    ASSERT_EQ(branch->inputs.size(), 2u) << key;
    EXPECT_EQ(branch->value(branch->inputs[0]).name, "x") << key;
    EXPECT_EQ(branch->value(branch->inputs[1]).name, "y") << key;
    EXPECT_EQ(branch->value(branch->inputs[0]).type.str(), "float32[2]") << key;
  }
  const graph::Graph& else_g = *node.attr_graph("else_branch");
  EXPECT_EQ(else_g.nodes[0].inputs,
            (std::vector<graph::ValueId>{else_g.inputs[1], else_g.inputs[0]}));
}

// Its then branch outputs x itself: "graph output 'x' is never defined" before.
TEST(OnnxImporterTest, ABranchMayOutputAnOuterValue) {
  graph::Graph g = import_text(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    agraph (bool c, float[2] x) => (float[2] z) {
      z = If(c) <
        then_branch = then_g () => (float[2] x) { },
        else_branch = else_g () => (float[2] e) { e = Neg(x) }
      >
    })");
  g.validate();
  const graph::Node& node = only_node(g, "If");
  ASSERT_EQ(node.inputs.size(), 2u);
  EXPECT_EQ(g.value(node.inputs[1]).name, "x");
  const graph::Graph& then_g = *node.attr_graph("then_branch");
  then_g.validate();
  ASSERT_EQ(then_g.inputs.size(), 1u);
  EXPECT_EQ(then_g.outputs, then_g.inputs);
}

// An If in the then branch of an If; `inner_else_values` goes between the inner else branch's
// signature and its nodes (value infos and initializers).
std::string nested_ifs(const std::string& inner_else_values = "") {
  return fmt::format(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    agraph (bool c, float[2] x) => (float[2] z) {{
      z = If(c) <
        then_branch = outer_then () => (float[2] t) {{
          t = If(c) <
            then_branch = inner_then () => (float[2] u) {{ u = Neg(x) }},
            else_branch = inner_else () => (float[2] v) {} {{ v = Abs(x) }}
          >
        }},
        else_branch = outer_else () => (float[2] e) {{ e = Identity(x) }}
      >
    }})",
                     inner_else_values);
}

TEST(OnnxImporterTest, NestedBranchesCaptureThroughEveryLevel) {
  graph::Graph g = import_text(nested_ifs());
  const graph::Node& outer = only_node(g, "If");
  ASSERT_EQ(outer.inputs.size(), 3u);  // c, then the captured c and x
  const graph::Graph& middle = *outer.attr_graph("then_branch");
  middle.validate();
  ASSERT_EQ(middle.inputs.size(), 2u);
  EXPECT_EQ(middle.value(middle.inputs[0]).name, "c");
  EXPECT_EQ(middle.value(middle.inputs[1]).name, "x");
  const graph::Node& inner = only_node(middle, "If");
  EXPECT_EQ(inner.inputs, (std::vector<graph::ValueId>{middle.inputs[0], middle.inputs[1]}));
  const graph::Graph& inner_then = *inner.attr_graph("then_branch");
  ASSERT_EQ(inner_then.inputs.size(), 1u);
  EXPECT_EQ(inner_then.value(inner_then.inputs[0]).name, "x");
}

// What a branch holds is named with the attribute and the If node around it, at every level.
TEST(OnnxImporterTest, ErrorsInABranchNameTheIfNodes) {
  auto e = expect_error<UnsupportedFeatureError>(
      [] { import_text(nested_ifs(R"(<string[1] k = {"a"}>)")); },
      {"initializer 'k' in attribute 'else_branch' of node 'If_0' (If) in attribute "
       "'then_branch' of node 'If_0' (If)"});
  ASSERT_TRUE(e);
  EXPECT_EQ(e->feature(), "string tensors");
  // An unsupported op in a branch is listed by its path through the nodes and attributes.
  ImportOptions no_abs;
  no_abs.op_supported = [](const std::string& op, int) { return op != "Abs"; };
  auto unsupported = expect_error<UnsupportedOpsError>([&] { import_text(nested_ifs(), no_abs); },
                                                       {"If_0/then_branch/If_0/else_branch/Abs_0"});
  ASSERT_TRUE(unsupported);
  ASSERT_EQ(unsupported->ops().size(), 1u);
  EXPECT_EQ(unsupported->ops()[0].node_names,
            (std::vector<std::string>{"If_0/then_branch/If_0/else_branch/Abs_0"}));
}

TEST(OnnxImporterTest, NodesGetGeneratedNamesAndOmittedInputsAreNoValue) {
  graph::Graph g = import_text(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    agraph (float[4] x) => (float[4] y) {
      r = Relu(x)
      y = Clip(r, , )
    })");
  ASSERT_EQ(g.nodes.size(), 2u);
  EXPECT_EQ(g.nodes[0].name, "Relu_0");
  EXPECT_EQ(g.nodes[1].name, "Clip_1");
  EXPECT_EQ(g.nodes[1].inputs,
            (std::vector<graph::ValueId>{g.nodes[0].outputs[0], graph::kNoValue, graph::kNoValue}));
  EXPECT_EQ(g.value(g.nodes[0].outputs[0]).type.str(), "float32[4]");  // from ONNX shape inference
}

TEST(OnnxImporterTest, ConvertsEveryAttributeKindAndTensorConstants) {
  graph::Graph g = import_text(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    agraph (float[1, 2, 3] x, float[1, 8, 3] w, float[1, 8, 2] r) => (float[1, 1, 2, 2] y, float[3, 2, 1] t) {
      c = Constant <value = int64[2] {7, -8}> ()
      y = LSTM <hidden_size = 2, clip = 1.5, direction = "forward", activation_alpha = [1.0, 2.5],
                activations = ["Sigmoid", "Tanh", "Tanh"]> (x, w, r)
      t = Transpose <perm = [2, 1, 0]> (x)
    })");
  const graph::Node& constant = only_node(g, "Constant");
  const graph::TensorData* value = constant.attr_tensor("value");
  ASSERT_NE(value, nullptr);
  EXPECT_EQ(value->dtype(), DataType::i64());
  EXPECT_EQ(value->shape(), std::vector<int64_t>{2});
  EXPECT_EQ(value->get_int(0), 7);
  EXPECT_EQ(value->get_int(1), -8);
  const graph::Node& lstm = only_node(g, "LSTM");
  EXPECT_EQ(lstm.attr_int("hidden_size", 0), 2);
  EXPECT_DOUBLE_EQ(lstm.attr_float("clip", 0), 1.5);
  EXPECT_EQ(lstm.attr_string("direction", ""), "forward");
  EXPECT_EQ(lstm.attr_floats("activation_alpha", {}), (std::vector<double>{1.0, 2.5}));
  EXPECT_EQ(std::get<std::vector<std::string>>(lstm.attrs.at("activations")),
            (std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"}));
  EXPECT_EQ(only_node(g, "Transpose").attr_ints("perm", {}), (std::vector<int64_t>{2, 1, 0}));
}

const char* kDynamicModel = R"(
    <ir_version: 8, opset_import: ["" : 13]>
    agraph (float[N, 3] x) => (float[N, 3] y) { y = Relu(x) })";

TEST(OnnxImporterTest, UnknownDimsKeepTheirNamesUntilOverridden) {
  graph::Graph g = import_text(kDynamicModel);
  const graph::TensorType& t = g.value(g.inputs[0]).type;
  EXPECT_EQ(t.shape, (std::vector<int64_t>{graph::kUnknownDim, 3}));
  EXPECT_EQ(t.str(), "float32[N, 3]");
  expect_error([&] { require_static_inputs(g); }, {"'x'", "dim 0 ('N')"});

  graph::Graph fixed = import_text(kDynamicModel, with_shapes({{"x", {4, 3}}}));
  EXPECT_EQ(fixed.value(fixed.inputs[0]).type.str(), "float32[4, 3]");
  EXPECT_EQ(fixed.value(fixed.outputs[0]).type.str(), "float32[4, 3]");
  EXPECT_NO_THROW(require_static_inputs(fixed));
}

TEST(OnnxImporterTest, InputShapesErrorsNameTheInput) {
  // The message lists the real inputs.
  expect_error([] { import_text(kDynamicModel, with_shapes({{"nope", {4, 3}}})); },
               {"'nope'", "'x'"});
  expect_error([] { import_text(kDynamicModel, with_shapes({{"x", {4, 3, 1}}})); },
               {"'x'", "rank 3"});
}

TEST(OnnxImporterTest, ReportsAllUnsupportedOpsAtOnce) {
  std::string model = onnx_text_to_model_bytes(R"(
    <ir_version: 8, opset_import: ["" : 13, "com.example" : 1]>
    agraph (float[2, 3] x) => (float[2, 3] y) {
      a = Relu(x)
      b1 = Hardmax(a)
      b2 = Hardmax(b1)
      c = LpNormalization(b2)
      m1 = com.example.MyOp(c)
      m2 = com.example.MyOp(m1)
      m3 = com.example.MyOp(m2)
      m4 = com.example.MyOp(m3)
      m5 = com.example.MyOp(m4)
      m6 = com.example.MyOp(m5)
      y = Relu(m6)
    })");
  ImportOptions opt;
  opt.op_supported = [](const std::string& op, int) { return op == "Relu"; };
  auto e = expect_error<UnsupportedOpsError>(
      [&] { import_onnx_bytes(model, opt, "three-unsupported"); },
      {"three-unsupported", "Hardmax (ai.onnx opset 13): 2 nodes: Hardmax_1, Hardmax_2",
       "LpNormalization", "MyOp (com.example opset 1): 6 nodes", "(1 more)"});
  ASSERT_TRUE(e);
  ASSERT_EQ(e->ops().size(), 3u) << e->what();
  EXPECT_EQ(e->ops()[0].op_type, "Hardmax");
  EXPECT_EQ(e->ops()[0].count, 2);
  EXPECT_EQ(e->ops()[0].opset, 13);
  EXPECT_EQ(e->ops()[0].node_names, (std::vector<std::string>{"Hardmax_1", "Hardmax_2"}));
  EXPECT_EQ(e->ops()[1].op_type, "LpNormalization");
  EXPECT_EQ(e->ops()[2].op_type, "MyOp");
  EXPECT_EQ(e->ops()[2].domain, "com.example");
  EXPECT_EQ(e->ops()[2].count, 6);
  EXPECT_EQ(e->ops()[2].node_names.size(), 5u);  // the first five
  std::vector<UnsupportedOp> report = overview_onnx_bytes(model, opt).unsupported;
  ASSERT_EQ(report.size(), 3u);
  EXPECT_EQ(report[2].count, 6);
}

TEST(OnnxImporterTest, OpsBelowTheirSinceOpsetAndOtherDomainsAreUnsupported) {
  std::string model = onnx_text_to_model_bytes(R"(
    <ir_version: 8, opset_import: ["" : 9, "com.example" : 1]>
    agraph (float[2] x) => (float[2] y) { r = Relu(x)  y = com.example.Relu(r) })");
  ImportOptions opt;
  opt.op_supported = [](const std::string&, int opset) { return opset >= 13; };
  std::vector<UnsupportedOp> report = overview_onnx_bytes(model, opt).unsupported;
  ASSERT_EQ(report.size(), 2u);
  EXPECT_EQ(report[0].domain, "");
  EXPECT_EQ(report[0].opset, 9);
  EXPECT_EQ(report[1].domain, "com.example");
}

TEST(OnnxImporterTest, MissingAndCorruptFilesNameTheFile) {
  std::string missing = ::testing::TempDir() + "/no_such_model.onnx";
  expect_error([&] { import_onnx(missing); }, {missing});
  std::string corrupt = ::testing::TempDir() + "/corrupt_model.onnx";
  std::ofstream(corrupt, std::ios::binary) << "\xff\xff\xff garbage";
  expect_error([&] { import_onnx(corrupt); }, {corrupt, "not a valid ONNX model"});
}

TEST(OnnxImporterTest, CheckerFailuresBecomeErrors) {
  auto e = expect_error(
      [] {
        import_text(R"(
          <ir_version: 8, opset_import: ["" : 13]>
          agraph (float[2] x) => (float[2] y) { y = Add(x, undefined_value) })");
      },
      {"ONNX checker", "undefined_value", "; name:  OpType: Add; is not output"});
  // The checker's own line breaks (around the node it prints) are joined: `tessel: error:` is one
  // line.
  ASSERT_TRUE(e);
  EXPECT_EQ(std::string(e->what()).find('\n'), std::string::npos) << e->what();
}

TEST(OnnxImporterTest, OpsetOutOfRangeIsAnError) {
  for (int opset : {0, 18}) {
    expect_error(
        [&] {
          import_text("<ir_version: 8, opset_import: [\"\" : " + std::to_string(opset) +
                      "]> agraph (float[2] x) => (float[2] y) { y = Relu(x) }");
        },
        {"opset " + std::to_string(opset)});
  }
}

// The checker reads each spelling of the default domain as its own domain; the importer reads
// them as one, so they must agree, and a version is not narrowed into another.
TEST(OnnxImporterTest, OpsetImportsAreReadAsTheCheckerReadsThem) {
  expect_error(
      [] {
        import_text(R"(<ir_version: 8, opset_import: ["" : 7, "ai.onnx" : 17]>
          agraph (float[1, 3] x) => (float[1, 3] y) { y = Softmax<axis = 1>(x) })");
      },
      {"imports ai.onnx twice", "opset 7", "opset 17"});
  graph::Graph g = import_text(R"(<ir_version: 8, opset_import: ["" : 13, "ai.onnx" : 13]>
    agraph (float[2] x) => (float[2] y) { y = Relu(x) })");
  EXPECT_EQ(g.model_opset, 13);
  expect_error(
      [] {
        import_text(R"(<ir_version: 8, opset_import: ["" : 4294967309]>
          agraph (float[2] x) => (float[2] y) { y = Relu(x) })");
      },
      {"opset 4294967309", "not an opset version"});
  // Before IR version 3 a model imports no opsets and is opset 1, whose Relu Tessel lacks.
  expect_error(
      [] { import_text("<ir_version: 2> agraph (float[2] x) => (float[2] y) { y = Relu(x) }"); },
      {"Relu (ai.onnx opset 1)"});
}

TEST(OnnxImporterTest, StringAndSequenceValuesAreUnsupportedFeatures) {
  auto strings = expect_error<UnsupportedFeatureError>(
      [] {
        import_text(R"(
          <ir_version: 8, opset_import: ["" : 13]>
          agraph (string[2] s) => (string[2] t) { t = Identity(s) })");
      },
      {"'s'"});
  ASSERT_TRUE(strings);
  EXPECT_EQ(strings->feature(), "string tensors");
  // Identity of a sequence: an op the table has, over a type Tessel does not.
  onnx::ModelProto seq = tessel::testing::one_node_model("Identity", {"s"}, {{"t", {2}}}, 13);
  tessel::testing::add_value(seq.mutable_graph()->mutable_input(), "s", onnx::TensorProto::FLOAT,
                             {2});
  for (auto* v : {seq.mutable_graph()->mutable_input(0), seq.mutable_graph()->mutable_output(0)}) {
    onnx::TypeProto element = v->type();
    *v->mutable_type()->mutable_sequence_type()->mutable_elem_type() = element;
  }
  auto sequences = expect_error<UnsupportedFeatureError>(
      [&] { import_onnx_bytes(seq.SerializeAsString(), {}, "seq.onnx"); });
  ASSERT_TRUE(sequences);
  EXPECT_EQ(sequences->feature(), "sequence types");
}

TEST(OnnxImporterTest, DefaultPredicateIsTheOpTable) {
  EXPECT_FALSE(op_in_table("NoSuchOpType", 17));
  expect_error(
      [] {
        import_text(R"(
          <ir_version: 8, opset_import: ["" : 13, "com.example" : 1]>
          agraph (float[2] x) => (float[2] y) { y = com.example.NoSuchOpType(x) })",
                    ImportOptions{});
      },
      {"NoSuchOpType (com.example opset 1)"});
}

}  // namespace
}  // namespace tessel::frontend
