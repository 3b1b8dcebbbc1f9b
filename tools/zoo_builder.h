// A small builder for ONNX models with random weights, used to write the model zoo
// (tools/make_zoo.cc) that the whole-model tests and the demo compile.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace tessel::tools {

class ZooBuilder {
 public:
  ZooBuilder(const std::string& name, int opset, uint32_t seed);

  // Graph input / output of float32 values.
  std::string input(const std::string& name, const std::vector<int64_t>& shape);
  void output(const std::string& name, const std::vector<int64_t>& shape);
  // A float32 initializer with uniform values in [lo, hi).
  std::string weight(const std::string& name, const std::vector<int64_t>& shape, float lo = -0.5f,
                     float hi = 0.5f);
  std::string int64_constant(const std::string& name, const std::vector<int64_t>& values);
  std::string float_constant(const std::string& name, float value);

  struct Attr {
    std::string name;
    std::vector<int64_t> ints;
    float f = 0;
    enum Kind { kInts, kInt, kFloat } kind = kInts;
  };
  static Attr ints(std::string n, std::vector<int64_t> v) {
    return {std::move(n), std::move(v), 0, Attr::kInts};
  }
  static Attr i(std::string n, int64_t v) { return {std::move(n), {v}, 0, Attr::kInt}; }
  static Attr f(std::string n, float v) { return {std::move(n), {}, v, Attr::kFloat}; }

  // Adds a node; returns its first output's name (outputs are named `<name>` or `<name>_k`).
  std::string node(const std::string& op, const std::vector<std::string>& inputs,
                   const std::vector<Attr>& attrs = {}, int num_outputs = 1,
                   const std::string& name = "");

  // Conv + BatchNormalization (+ optional activation) with fresh weights uniform in
  // [-weight_range, weight_range); returns the output.
  std::string conv_bn(const std::string& x, int64_t in_c, int64_t out_c, int64_t k, int64_t stride,
                      int64_t group, const std::string& activation, float weight_range = 0.3f);

  const onnx::ModelProto& model() const { return model_; }
  void save(const std::string& path) const;

 private:
  std::string fresh(const std::string& base);
  onnx::ModelProto model_;
  onnx::GraphProto* graph_;
  std::mt19937 rng_;
  int counter_ = 0;
};

// The zoo: writes resnet_mini.onnx, mobilenet_mini.onnx, transformer_block.onnx and
// lstm_classifier.onnx into `dir`.
void make_zoo(const std::string& dir);
// ResNet-50 v1 (224x224, 25.6M weights, ~100 MB): too large to bundle; written on demand for the
// compile-time benchmark (bench/compile_time.sh).
void resnet50(const std::string& path);
// DenseNet-121 (224x224, 8M weights, ~32 MB), for the same benchmark.
void densenet121(const std::string& path);

}  // namespace tessel::tools
