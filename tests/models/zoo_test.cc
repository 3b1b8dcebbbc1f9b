// Whole-model tests: each zoo model (tools/make_zoo.cc) compiled by Tessel must match the
// reference executor on random inputs.
#include <gtest/gtest.h>

#include <filesystem>
#include <random>

#include "driver/compile.h"
#include "frontend/onnx_importer.h"
#include "reference/reference.h"
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

graph::TensorData random_input(const graph::TensorType& t, uint32_t seed) {
  graph::TensorData d(t.dtype, t.shape);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1, 1);
  for (int64_t i = 0; i < d.numel(); ++i) d.data<float>()[i] = dist(rng);
  return d;
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
    inputs[v.name] = random_input(v.type, 100 + static_cast<uint32_t>(i));
  }
  std::vector<graph::TensorData> want = reference::run(g, inputs);

  CompiledModel m = compile(path);
  for (const auto& [name, value] : inputs) m.set_input(name, to_ndarray(value));
  m.run();
  ASSERT_EQ(m.num_outputs(), static_cast<int>(want.size()));
  for (size_t o = 0; o < want.size(); ++o) {
    graph::TensorData got = to_tensor_data(m.get_output(static_cast<int>(o)));
    ASSERT_EQ(got.shape(), want[o].shape());
    double scale = 0;
    for (int64_t i = 0; i < want[o].numel(); ++i)
      scale = std::max(scale, std::fabs(want[o].get_double(i)));
    for (int64_t i = 0; i < want[o].numel(); ++i) {
      ASSERT_NEAR(got.get_double(i), want[o].get_double(i), c.tolerance * std::max(scale, 1e-6))
          << c.model << " output " << o << " element " << i;
    }
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
