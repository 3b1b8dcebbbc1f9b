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
  // A rank-0 int64 initializer (what exporters write for `x[i]`'s Gather index).
  std::string int64_scalar(const std::string& name, int64_t value);
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

  // Conv with fresh weights uniform in [-weight_range, weight_range) (and a bias when `bias`);
  // returns the output.
  std::string conv(const std::string& x, int64_t in_c, int64_t out_c, int64_t k, int64_t stride,
                   int64_t pad, int64_t group, float weight_range, bool bias = false);
  // Conv (padding k/2, no bias) + BatchNormalization (+ optional activation: "Relu", or "Relu6"
  // as the Clip exporters write); returns the output.
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

// Full-size public architectures with random weights, batch 1, fp32, as exporters write them
// (tools/zoo_fullsize.cc): too large to bundle, written on demand (`make_zoo --NAME FILE`) for the
// compile-time and ONNX Runtime benchmarks (bench/compile_time.sh, bench/ort_compare.sh).
// A kernel chain is one op applied 32 times in a row, for timing that op's kernel against ONNX
// Runtime's (`bench/ort_compare.sh --models softmax_chain`): one model run holds enough kernels
// that ONNX Runtime's cost per run (about 0.01 ms through onnxruntime-node) weighs little.
// `make_zoo --list` names the architectures only, which ort_compare.sh times by default.
struct FullSizeModel {
  std::string name;  // the make_zoo flag, without "--"
  std::string description;
  void (*write)(const std::string& path);
  bool kernel_chain = false;
};
const std::vector<FullSizeModel>& full_size_models();
// The entry named `name`, or nullptr.
const FullSizeModel* find_full_size_model(const std::string& name);

}  // namespace tessel::tools
