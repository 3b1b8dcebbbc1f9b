// Small graphs of graph ops, compiled with tessel::compile_graph and checked output by output
// against the reference executor (exact for integers and bools, 1e-5 relative for floats). Many
// independent nodes share one graph so that one LLVM compile covers them.
#pragma once

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "../passes/graph_builder.h"
#include "driver/compile.h"
#include "ir/error.h"
#include "reference/reference.h"

namespace tessel::topi::testing {

using graph::TensorData;
using graph::ValueId;

// Uniform random values in [lo, hi] (integers: whole numbers; bools: lo/hi ignored).
inline TensorData random_data(DataType dtype, std::vector<int64_t> shape, uint32_t seed,
                              double lo = -2, double hi = 2) {
  TensorData t(dtype, std::move(shape));
  std::mt19937 rng(seed);
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (dtype.is_bool()) {
      t.data<uint8_t>()[i] = rng() % 2;
      continue;
    }
    double v = dtype.is_float() ? std::uniform_real_distribution<double>(lo, hi)(rng)
                                : static_cast<double>(std::uniform_int_distribution<int64_t>(
                                      int64_t(lo), int64_t(hi))(rng));
    switch (dtype.bits()) {
      case 8:
        dtype.is_int() ? void(t.data<int8_t>()[i] = int8_t(v))
                       : void(t.data<uint8_t>()[i] = uint8_t(v));
        break;
      case 16:
        t.data<int16_t>()[i] = int16_t(v);
        break;
      case 32:
        if (dtype.is_float())
          t.data<float>()[i] = float(v);
        else if (dtype.is_int())
          t.data<int32_t>()[i] = int32_t(v);
        else
          t.data<uint32_t>()[i] = uint32_t(v);
        break;
      default:
        if (dtype.is_float())
          t.data<double>()[i] = v;
        else if (dtype.is_int())
          t.data<int64_t>()[i] = int64_t(v);
        else
          t.data<uint64_t>()[i] = uint64_t(v);
    }
  }
  return t;
}

// Element i as double; bfloat16 (which TensorData::get_double does not read) from its bits.
inline double element_value(const TensorData& t, int64_t i) {
  if (t.dtype().is_bfloat()) return std::bit_cast<float>(uint32_t{t.data<uint16_t>()[i]} << 16);
  return t.get_double(i);
}

template <class T>
TensorData tensor_of(DataType dtype, std::vector<int64_t> shape, const std::vector<T>& values) {
  TensorData t(dtype, std::move(shape));
  EXPECT_EQ(static_cast<size_t>(t.numel()), values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    if (dtype.is_float() && dtype.bits() == 32)
      t.data<float>()[i] = static_cast<float>(values[i]);
    else if (dtype.is_float())
      t.data<double>()[i] = static_cast<double>(values[i]);
    else if (dtype == DataType::i32())
      t.data<int32_t>()[i] = static_cast<int32_t>(values[i]);
    else if (dtype == DataType::i64())
      t.data<int64_t>()[i] = static_cast<int64_t>(values[i]);
    else if (dtype.bits() <= 8)
      t.data<uint8_t>()[i] = static_cast<uint8_t>(values[i]);
    else
      ADD_FAILURE() << "tensor_of: unsupported dtype " << dtype.str();
  }
  return t;
}
inline TensorData ints(std::vector<int64_t> values) {
  auto n = static_cast<int64_t>(values.size());
  return tensor_of(DataType::i64(), {n}, values);
}

// One graph of several independent op nodes over shared runtime inputs; check() compiles it once,
// compares every node output with the reference executor and returns the fusion summary.
struct OpGraph {
  passes::testing::Builder b;
  std::map<std::string, TensorData> feeds;

  explicit OpGraph(int opset = 17) { b.g.opset = opset; }
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

  std::string check() const {
    CompiledModel m = compile_graph(b.g);
    for (const auto& [name, value] : feeds) m.set_input(name, to_ndarray(value));
    m.run();
    std::vector<TensorData> want = reference::run(b.g, feeds);
    if (m.num_outputs() != static_cast<int>(want.size())) {
      ADD_FAILURE() << m.num_outputs() << " outputs, the reference has " << want.size();
      return m.fusion_summary();
    }
    for (size_t o = 0; o < want.size(); ++o) {
      TensorData got = to_tensor_data(m.get_output(static_cast<int>(o)));
      const std::string& what = b.g.value(b.g.outputs[o]).name;
      EXPECT_EQ(got.dtype(), want[o].dtype()) << what;
      EXPECT_EQ(got.shape(), want[o].shape()) << what;
      if (got.dtype() != want[o].dtype() || got.shape() != want[o].shape()) continue;
      int mismatches = 0;
      for (int64_t i = 0; i < got.numel() && mismatches < 5; ++i) {
        bool ok;
        if (got.dtype().is_float() || got.dtype().is_bfloat()) {
          double x = element_value(got, i), y = element_value(want[o], i);
          ok = (std::isnan(x) && std::isnan(y)) || x == y ||
               std::abs(x - y) <= 1e-5 * (1 + std::abs(y));
        } else {
          ok = got.get_int(i) == want[o].get_int(i);
        }
        if (!ok) {
          ++mismatches;
          ADD_FAILURE() << what << " element " << i << ": got " << element_value(got, i)
                        << ", reference " << element_value(want[o], i);
        }
      }
    }
    return m.fusion_summary();
  }
};

// compile_graph throws a tessel::Error containing `substring`.
inline void expect_compile_error(const graph::Graph& g, const std::string& substring) {
  try {
    compile_graph(g);
    ADD_FAILURE() << "expected an Error containing '" << substring << "'";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(substring), std::string::npos) << e.what();
  }
}

using graph::Attr;
using Attrs = std::map<std::string, Attr>;
inline Attr ints_attr(std::vector<int64_t> v) { return Attr(std::move(v)); }
inline Attr int_attr(int64_t v) { return Attr(v); }
inline Attr float_attr(double v) { return Attr(v); }
inline Attr str_attr(std::string v) { return Attr(std::move(v)); }

}  // namespace tessel::topi::testing
