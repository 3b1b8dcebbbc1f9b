#include "autotune/kernel_data.h"

#include <map>
#include <random>

#include "reference/ref_util.h"
#include "reference/reference.h"
#include "runtime/tensor_data.h"

namespace tessel::autotune {
namespace {

// Values for a group input: its constant, else uniform random numbers, small non-negative
// integers for integer inputs.
graph::TensorData input_value(const graph::Value& v, std::mt19937_64& rng) {
  if (v.constant) return *v.constant;
  graph::TensorData t(v.type.dtype, v.type.shape);
  std::uniform_real_distribution<double> real(-1, 1);
  std::uniform_int_distribution<int64_t> small(0, 3);
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (t.dtype().is_float()) {
      reference::set_f(t, i, real(rng));
    } else {
      reference::set_i(t, i, small(rng));
    }
  }
  return t;
}

}  // namespace

KernelData kernel_data(const graph::Graph& g, const passes::FusedGroup& group,
                       const passes::LoweredGroup& lowered, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::map<graph::ValueId, graph::TensorData> values;
  for (graph::ValueId v : group.inputs) values[v] = input_value(g.value(v), rng);
  for (graph::NodeId n : group.nodes) {
    const graph::Node& node = g.nodes[n];
    std::vector<graph::TensorData> in;
    for (graph::ValueId v : node.inputs)
      in.push_back(v == graph::kNoValue ? graph::TensorData() : values.at(v));
    std::vector<graph::TensorData> out = reference::eval_node(g, node, in);
    for (size_t i = 0; i < node.outputs.size() && i < out.size(); ++i) {
      if (node.outputs[i] != graph::kNoValue) values[node.outputs[i]] = std::move(out[i]);
    }
  }
  KernelData data;
  size_t num_inputs = lowered.args.size() - group.outputs.size();
  for (size_t i = 0; i < lowered.arg_values.size(); ++i) {
    runtime::NDArray a = runtime::to_ndarray(values.at(lowered.arg_values[i]));
    (i < num_inputs ? data.inputs : data.references).push_back(a);
  }
  return data;
}

}  // namespace tessel::autotune
