// Shape inference behind the checks of what libonnx's inference functions assume: each model here
// crashed, hung or exhausted memory inside libonnx before. Now the node is left uninferred and the
// import goes on; for ops Tessel supports, its own type inference names the problem.
#include "frontend/onnx_shape_inference.h"

#include <gtest/gtest.h>

#include "frontend/onnx_importer.h"
#include "ir/op_table.h"
#include "tests/common/expect_error.h"
#include "tests/frontend/malformed_models.h"

namespace tessel::frontend {
namespace {

using onnx::TensorProto;
using tessel::testing::expect_error;

graph::Graph import_text(const std::string& text) {
  return import_onnx_bytes(onnx_text_to_model_bytes(text), {}, "m.onnx");
}

// Ops outside the op table never reach shape inference through the importer; their inference
// functions are checked on the model directly.
void infer_text(const std::string& text) {
  onnx::ModelProto model;
  ASSERT_TRUE(model.ParseFromString(onnx_text_to_model_bytes(text)));
  detail::infer_shapes(model);
}

// The op table's type inference of the graph's node `index`.
void infer_node(const graph::Graph& g, size_t index) {
  const graph::Node& node = g.nodes.at(index);
  node.def().infer_type(g, node);
}

TEST(OnnxShapeInferenceTest, LayerNormalizationAxisOutsideTheRank) {
  for (const char* axis : {"-5", "2147483648"}) {
    SCOPED_TRACE(axis);
    graph::Graph g = import_text(std::string(R"(
      <ir_version: 8, opset_import: ["" : 17]>
      g (float[2, 3] x, float[3] s, float[3] b) => (float[2, 3] y, float[2, 1] mean, float[2, 1] inv) {
        y, mean, inv = LayerNormalization <axis = )") +
                                 axis + R"(> (x, s, b)
      })");
    expect_error([&] { infer_node(g, 0); }, {"LayerNormalization", "is out of range for rank 2"});
  }
  graph::Graph scalar = import_text(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float x, float s, float b) => (float y, float mean, float inv) {
      y, mean, inv = LayerNormalization (x, s, b)
    })");
  expect_error([&] { infer_node(scalar, 0); }, {"axis -1 is out of range for rank 0"});
}

TEST(OnnxShapeInferenceTest, OperandRanksTheInferenceFunctionsIndex) {
  graph::Graph gemm = import_text(R"(
    <ir_version: 8, opset_import: ["" : 6]>
    g (float[3] a, float[3, 4] b, float[4] c) => (float[1, 4] y) { y = Gemm (a, b, c) })");
  expect_error([&] { infer_node(gemm, 0); }, {"node 'Gemm_0' (Gemm)", "must be matrices"});

  graph::Graph rnn = import_text(R"(
    <ir_version: 8, opset_import: ["" : 7]>
    g (float[2] x, float[1, 4, 3] w, float[1, 4, 4] r) => (float[2, 1, 1, 4] y) {
      y = RNN <hidden_size = 4> (x, w, r)
    })");
  expect_error([&] { infer_node(rnn, 0); }, {"node 'RNN_0' (RNN)", "must have rank 3"});

  graph::Graph conv = import_text(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[1, 1, 5, 5] x, float[1, 1] w) => (float[1, 1, 5, 5] y) { y = Conv (x, w) })");
  expect_error([&] { infer_node(conv, 0); }, {"node 'Conv_0' (Conv)", "must have the rank of X"});

  graph::Graph gather = import_text(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[2, 3] data, int64[2, 1] idx) => (float[2] y) { y = GatherND <batch_dims = -1> (data, idx) })");
  expect_error([&] { infer_node(gather, 0); }, {"node 'GatherND_0' (GatherND)", "batch_dims -1"});
}

TEST(OnnxShapeInferenceTest, ShapeInputsLongerThanAnyRankAreNotExpanded) {
  for (const char* node : {"y = ConstantOfShape (shape)", "y = Expand (x, shape)"}) {
    SCOPED_TRACE(node);
    EXPECT_NO_THROW(import_text(std::string(R"(
      <ir_version: 8, opset_import: ["" : 13]>
      g (float[1] x, int64[1099511627776] shape) => (float[1] y) {)") +
                                node + "}"));
  }
}

// Found by the ONNX fuzzer: both were internal errors in Tessel's own type inference.
TEST(OnnxShapeInferenceTest, CountsTheOpTableCheckedOnlyInternally) {
  graph::Graph conv = import_text(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[1, 2, 5, 5] x, float[4, 2, 3, 3] w) => (float[1, 4, 3, 3] y) {
      y = Conv <kernel_shape = [3]> (x, w)
    })");
  expect_error([&] { infer_node(conv, 0); },
               {"(Conv)", "kernel_shape has 1 dims but the input has 2 spatial dims"});
  graph::Graph branch = import_text(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (bool c, float[2] x) => (float[2] y) {
      y = If (c) <then_branch = t () => () { z = Identity (x) },
                  else_branch = e () => () { z = Identity (x) }>
    })");
  expect_error([&] { infer_node(branch, 0); },
               {"(If)", "the branches have 0 outputs but the node has 1"});
}

TEST(OnnxShapeInferenceTest, SequenceAndSubgraphOpsWithBadCounts) {
  // libonnx divided by the scalar split.
  onnx::ModelProto split =
      tessel::testing::one_node_model("SplitToSequence", {"x", "zero"}, {{"y", {1, 2}}}, 13);
  tessel::testing::add_value(split.mutable_graph()->mutable_input(), "x", TensorProto::FLOAT,
                             {4, 2});
  tessel::testing::add_initializer(split.mutable_graph(), "zero", TensorProto::INT64, {},
                                   std::string(8, '\0'));
  onnx::TypeProto* y = split.mutable_graph()->mutable_output(0)->mutable_type();
  onnx::TypeProto element = *y;
  *y->mutable_sequence_type()->mutable_elem_type() = element;
  EXPECT_NO_THROW(detail::infer_shapes(split));
  expect_error([&] { import_onnx_bytes(split.SerializeAsString(), {}, "m.onnx"); },
               {"SplitToSequence"});
  // libonnx sized its axis lists by num_scan_inputs (2^31) and ran out of memory.
  EXPECT_NO_THROW(infer_text(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[2] s, float[3, 4] x) => (float[2] y, float[3, 4] z) {
      y, z = Scan (s, x) <num_scan_inputs = 2147483648,
                          body = b (float[2] si, float[4] xi) => (float[2] so, float[4] xo) {
                            so = Identity (si)
                            xo = Identity (xi)
                          }>
    })"));
  // The implicit form counted each letter at letter - 'a': 'R' wrote outside the counts.
  EXPECT_NO_THROW(import_text(R"(
    <ir_version: 8, opset_import: ["" : 12]>
    g (float[2, 3] x) => (float[6] y) { y = Einsum <equation = "RIGHT"> (x) })"));
}

}  // namespace
}  // namespace tessel::frontend
