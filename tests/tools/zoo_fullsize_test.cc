// The full-size architectures of make_zoo (tools/zoo_fullsize.cc): each one imports (ONNX checker
// and shape inference included) with the declared input and output, the inferred output shape and
// the node count per op of the architecture it copies. They are not compiled here: compiling and
// running them against ONNX Runtime is bench/ort_compare.sh's job (minutes of CI time otherwise).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <map>

#include "frontend/onnx_importer.h"
#include "zoo_builder.h"

namespace tessel {
namespace {

struct Expected {
  std::string input;
  std::vector<int64_t> input_shape;
  std::string output;
  std::vector<int64_t> output_shape;
  std::map<std::string, int> op_counts;
};

const std::map<std::string, Expected>& expected() {
  const std::vector<int64_t> image = {1, 3, 224, 224}, classes = {1, 1000};
  static const std::map<std::string, Expected> table = {
      // 16 bottlenecks of 3 convs, 4 projection shortcuts and the stem.
      {"resnet50",
       {"data",
        image,
        "prob",
        classes,
        {{"Conv", 53},
         {"BatchNormalization", 53},
         {"Relu", 49},
         {"Add", 16},
         {"MaxPool", 1},
         {"GlobalAveragePool", 1},
         {"Flatten", 1},
         {"Gemm", 1},
         {"Softmax", 1}}}},
      // 58 dense layers of 2 convs, 3 transitions and the stem; a BN+Relu before each conv but the
      // stem's (after it) and one more before the pooling; a Concat in each layer and after each of
      // the 4 blocks.
      {"densenet121",
       {"data",
        image,
        "prob",
        classes,
        {{"Conv", 120},
         {"BatchNormalization", 121},
         {"Relu", 121},
         {"Concat", 62},
         {"AveragePool", 3},
         {"MaxPool", 1},
         {"GlobalAveragePool", 1},
         {"Flatten", 1},
         {"Gemm", 1},
         {"Softmax", 1}}}},
      // 8 basic blocks of 2 convs, 3 downsample shortcuts and the stem.
      {"resnet18",
       {"input",
        image,
        "logits",
        classes,
        {{"Conv", 20},
         {"BatchNormalization", 20},
         {"Relu", 17},
         {"Add", 8},
         {"MaxPool", 1},
         {"GlobalAveragePool", 1},
         {"Flatten", 1},
         {"Gemm", 1}}}},
      // 17 inverted residuals (the first without expansion: 2 convs, the others 3), the stem and
      // the last 1x1 conv; 10 of the blocks add their input.
      {"mobilenet_v2",
       {"input",
        image,
        "logits",
        classes,
        {{"Conv", 52},
         {"BatchNormalization", 52},
         {"Clip", 35},
         {"Add", 10},
         {"GlobalAveragePool", 1},
         {"Flatten", 1},
         {"Gemm", 1}}}},
      // 8 Fire modules of 3 convs, the stem and the classifier conv.
      {"squeezenet1_1",
       {"input",
        image,
        "logits",
        classes,
        {{"Conv", 26},
         {"Relu", 26},
         {"Concat", 8},
         {"MaxPool", 3},
         {"GlobalAveragePool", 1},
         {"Flatten", 1}}}},
      // Per layer: 8 Transposes, 9 Reshapes, 5 MatMuls, 6 Adds, 4 Muls, 3 Gathers, ...
      {"transformer_encoder",
       {"src",
        {1, 128, 256},
        "y",
        {1, 128, 256},
        {{"Transpose", 32},
         {"Reshape", 36},
         {"MatMul", 20},
         {"Add", 24},
         {"Mul", 16},
         {"Gather", 12},
         {"Unsqueeze", 4},
         {"Squeeze", 4},
         {"Softmax", 4},
         {"Gemm", 4},
         {"LayerNormalization", 8},
         {"Div", 4},
         {"Erf", 4}}}},
      {"lstm",
       {"input",
        {64, 1, 128},
        "logits",
        {1, 10},
        {{"LSTM", 2}, {"Squeeze", 2}, {"Gather", 1}, {"Gemm", 1}}}},
      {"mlp", {"input", {1, 784}, "logits", {1, 10}, {{"Gemm", 3}, {"Relu", 2}}}},
      {"softmax_chain",
       {"scores", {12, 128, 128}, "Softmax_31", {12, 128, 128}, {{"Softmax", 32}}}},
      {"layernorm_chain",
       {"hidden", {128, 768}, "LayerNormalization_95", {128, 768}, {{"LayerNormalization", 32}}}},
      {"rmsnorm_chain",
       {"hidden",
        {128, 768},
        "Mul_257",
        {128, 768},
        {{"Pow", 32},
         {"ReduceMean", 32},
         {"Add", 32},
         {"Sqrt", 32},
         {"Reciprocal", 32},
         {"Mul", 64}}}},
  };
  return table;
}

class FullSizeModelTest : public ::testing::TestWithParam<tools::FullSizeModel> {};

}  // namespace
}  // namespace tessel

namespace tessel::tools {
// gtest prints a test's parameter: the model's name rather than its bytes.
void PrintTo(const FullSizeModel& model, std::ostream* os) { *os << model.name; }
}  // namespace tessel::tools

namespace tessel {
namespace {

TEST_P(FullSizeModelTest, ImportsWithItsShapesAndOps) {
  const tools::FullSizeModel& model = GetParam();
  auto it = expected().find(model.name);
  ASSERT_NE(it, expected().end()) << "no expectations for " << model.name;
  const Expected& want = it->second;
  auto path = std::filesystem::temp_directory_path() /
              (model.name + "_" + std::to_string(::getpid()) + ".onnx");
  model.write(path.string());

  frontend::ModelOverview overview = frontend::overview_onnx(path.string());
  EXPECT_EQ(overview.opset, 17);
  EXPECT_TRUE(overview.unsupported.empty());
  ASSERT_EQ(overview.inputs.size(), 1u);
  EXPECT_EQ(overview.inputs[0].first, want.input);
  EXPECT_EQ(overview.inputs[0].second.shape, want.input_shape);
  ASSERT_EQ(overview.outputs.size(), 1u);
  EXPECT_EQ(overview.outputs[0].first, want.output);
  EXPECT_EQ(overview.op_counts, want.op_counts);

  graph::Graph g = frontend::import_onnx(path.string());
  std::filesystem::remove(path);
  ASSERT_EQ(g.outputs.size(), 1u);
  EXPECT_EQ(g.value(g.inputs.at(0)).type.shape, want.input_shape);
  // The output's shape as ONNX shape inference derives it through the whole graph.
  EXPECT_EQ(g.value(g.outputs[0]).type.shape, want.output_shape);
}

// The kernel chains, which `make_zoo --list` (ort_compare.sh's default models) leaves out.
TEST(FullSizeModels, KernelChains) {
  std::vector<std::string> chains;
  for (const tools::FullSizeModel& m : tools::full_size_models())
    if (m.kernel_chain) chains.push_back(m.name);
  EXPECT_EQ(chains,
            (std::vector<std::string>{"softmax_chain", "layernorm_chain", "rmsnorm_chain"}));
}

INSTANTIATE_TEST_SUITE_P(Zoo, FullSizeModelTest, ::testing::ValuesIn(tools::full_size_models()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace tessel
