// Small graphs of graph ops, compiled with tessel::compile_graph and checked output by output
// against the reference executor (exact for integers and bools, within 1e-5 absolute plus 1e-5
// relative for floats). Many independent nodes share one graph so that one LLVM compile covers
// them.
#pragma once

#include <gtest/gtest.h>

#include <source_location>
#include <string>
#include <vector>

#include "../passes/graph_builder.h"
#include "driver/compile.h"
#include "ir/error.h"
#include "passes/lower_to_te.h"
#include "passes/pipeline.h"
#include "reference/reference.h"
#include "tests/common/compare.h"
#include "tests/common/expect_error.h"
#include "tests/common/random.h"
#include "tests/common/tensor.h"

namespace tessel::topi::testing {

using graph::TensorData;
using graph::ValueId;

using tessel::testing::element_value;
using tessel::testing::make_tensor;

// topi's tests draw from [-2, 2] unless they say otherwise (see tessel::testing::fill_random).
inline TensorData random_data(DataType dtype, std::vector<int64_t> shape, uint32_t seed,
                              double lo = -2, double hi = 2) {
  return tessel::testing::random_tensor(dtype, std::move(shape), seed, lo, hi);
}

inline TensorData ints(std::vector<int64_t> values) {
  auto n = static_cast<int64_t>(values.size());
  return make_tensor(DataType::i64(), {n}, values);
}

// One graph of several independent op nodes over shared runtime inputs; check() compiles it once,
// compares every node output with the reference executor and returns the fusion summary.
struct OpGraph {
  passes::testing::Builder b;
  std::map<std::string, TensorData> feeds;

  ValueId input(const std::string& name, TensorData value) {
    ValueId v = b.g.add_value(name, {value.dtype(), value.shape(), {}});
    b.g.inputs.push_back(v);
    feeds[name] = std::move(value);
    return v;
  }
  ValueId constant(const std::string& name, TensorData value) {
    return b.constant(name, std::move(value));
  }
  // Adds a node named `name`; all its outputs become graph outputs.
  std::vector<ValueId> op(const std::string& name, const std::string& op_type,
                          std::vector<ValueId> inputs,
                          std::map<std::string, graph::Attr> attrs = {}, int num_outputs = 1) {
    auto outs = b.node(op_type, std::move(inputs), std::move(attrs), num_outputs, name);
    for (ValueId v : outs) b.g.outputs.push_back(v);
    return outs;
  }

  // `target`: the host's by default; an AVX2 target runs on an AVX-512 host too.
  std::string check(const std::string& target = CompileOptions{}.target) const {
    CompileOptions opt;
    opt.target = target;
    CompiledModel m = compile_graph(b.g, opt);
    for (const auto& [name, value] : feeds) m.set_input(name, to_ndarray(value));
    m.run();
    std::vector<TensorData> want = reference::run(b.g, feeds);
    if (m.num_outputs() != static_cast<int>(want.size())) {
      ADD_FAILURE() << m.num_outputs() << " outputs, the reference has " << want.size();
      return m.fusion_summary();
    }
    for (size_t o = 0; o < want.size(); ++o) {
      tessel::testing::expect_all_close(to_tensor_data(m.get_output(static_cast<int>(o))), want[o],
                                        {1e-5, 1e-5}, b.g.value(b.g.outputs[o]).name);
    }
    return m.fusion_summary();
  }

  // The graph's only fused group, lowered to te for `target` (the graph passes run on it).
  passes::LoweredGroup lower_only_group(const std::string& target) {
    passes::GraphPipelineResult plan = passes::run_graph_pipeline(b.g, {});
    EXPECT_EQ(plan.groups.size(), 1u);
    return passes::lower_to_te(b.g, plan.groups.at(0), 0, CpuModel::of(Target::parse(target)));
  }
};

// compile_graph throws a tessel::Error containing `substring`.
inline void expect_compile_error(const graph::Graph& g, const std::string& substring,
                                 std::source_location at = std::source_location::current()) {
  tessel::testing::expect_error([&] { compile_graph(g); }, {substring}, at);
}

using graph::Attr;
using Attrs = std::map<std::string, Attr>;
inline Attr ints_attr(std::vector<int64_t> v) { return Attr(std::move(v)); }
inline Attr int_attr(int64_t v) { return Attr(v); }
inline Attr float_attr(double v) { return Attr(v); }
inline Attr str_attr(std::string v) { return Attr(std::move(v)); }

}  // namespace tessel::topi::testing
