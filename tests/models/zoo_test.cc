// Whole-model tests: each zoo model (tools/make_zoo.cc) compiled by Tessel must match the
// reference executor on random inputs.
#include <gtest/gtest.h>

#include <filesystem>

#include "driver/compile.h"
#include "frontend/onnx_importer.h"
#include "reference/reference.h"
#include "tests/common/compare.h"
#include "tests/common/random.h"
#include "zoo_builder.h"

namespace tessel {
namespace {

const std::string& zoo_dir() {
  static const std::string dir = [] {
    auto d = std::filesystem::temp_directory_path() / ("tessel_zoo_" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    tools::make_zoo(d.string());
    return d.string();
  }();
  return dir;
}

struct ZooCase {
  std::string model;
  double tolerance;  // max relative error against the reference
};

class ZooTest : public ::testing::TestWithParam<ZooCase> {};

TEST_P(ZooTest, CompiledMatchesReference) {
  const ZooCase& c = GetParam();
  std::string path = zoo_dir() + "/" + c.model + ".onnx";
  graph::Graph g = frontend::import_onnx(path);
  std::map<std::string, graph::TensorData> inputs;
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    const graph::Value& v = g.value(g.inputs[i]);
    inputs[v.name] =
        testing::random_tensor(v.type.dtype, v.type.shape, 100 + static_cast<uint32_t>(i));
  }
  std::vector<graph::TensorData> want = reference::run(g, inputs);

  CompiledModel m = compile(path);
  for (const auto& [name, value] : inputs) m.set_input(name, to_ndarray(value));
  m.run();
  ASSERT_EQ(m.num_outputs(), static_cast<int>(want.size()));
  for (size_t o = 0; o < want.size(); ++o) {
    // Relative to the output's largest magnitude: small elements carry the others' rounding.
    double scale = 0;
    for (int64_t i = 0; i < want[o].numel(); ++i)
      scale = std::max(scale, std::fabs(want[o].get_double(i)));
    testing::expect_all_close(to_tensor_data(m.get_output(static_cast<int>(o))), want[o],
                              {c.tolerance * std::max(scale, 1e-6), 0},
                              c.model + " output " + std::to_string(o));
  }
}

INSTANTIATE_TEST_SUITE_P(Zoo, ZooTest,
                         ::testing::Values(ZooCase{"resnet_mini", 1e-4},
                                           ZooCase{"mobilenet_mini", 1e-4},
                                           ZooCase{"transformer_block", 1e-4},
                                           ZooCase{"lstm_classifier", 1e-4}),
                         [](const auto& info) { return info.param.model; });

}  // namespace
}  // namespace tessel
