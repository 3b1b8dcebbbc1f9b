// Tensors for tests: TensorData from literal values, and any tensor's elements as numbers.
#pragma once

#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <string>
#include <vector>

#include "ir/dtype.h"
#include "ir/graph.h"

namespace tessel::testing {

// Calls fn(T{}) with the C++ type that stores `dtype`; false for types tests do not build
// (float16, bfloat16, vectors).
template <class Fn>
bool visit_storage_type(DataType dtype, Fn&& fn) {
  if (dtype == DataType::f32()) return fn(float{}), true;
  if (dtype == DataType::f64()) return fn(double{}), true;
  if (dtype.is_bool() || dtype == DataType::u8()) return fn(uint8_t{}), true;
  if (dtype == DataType::i8()) return fn(int8_t{}), true;
  if (dtype == DataType::i16()) return fn(int16_t{}), true;
  if (dtype == DataType::u16()) return fn(uint16_t{}), true;
  if (dtype == DataType::i32()) return fn(int32_t{}), true;
  if (dtype == DataType::u32()) return fn(uint32_t{}), true;
  if (dtype == DataType::i64()) return fn(int64_t{}), true;
  if (dtype == DataType::u64()) return fn(uint64_t{}), true;
  return false;
}

// Element i of `dtype` storage set to `v` by plain conversion (integers stay exact when V is one).
template <class V>
void set_element(void* data, DataType dtype, int64_t i, V v) {
  bool stored = visit_storage_type(dtype, [&](auto type) {
    static_cast<decltype(type)*>(data)[i] = static_cast<decltype(type)>(v);
  });
  if (!stored) ADD_FAILURE() << "tests cannot store elements of type " << dtype.str();
}

// Element i of `dtype` storage as a double; bfloat16 from its bits.
inline double element_value(const void* data, DataType dtype, int64_t i) {
  if (dtype.is_bfloat())
    return std::bit_cast<float>(uint32_t{static_cast<const uint16_t*>(data)[i]} << 16);
  double value = 0;
  bool read = visit_storage_type(dtype, [&](auto type) {
    value = static_cast<double>(static_cast<const decltype(type)*>(data)[i]);
  });
  if (!read) ADD_FAILURE() << "tests cannot read elements of type " << dtype.str();
  return value;
}
inline double element_value(const graph::TensorData& t, int64_t i) {
  return element_value(t.raw(), t.dtype(), i);
}

// A tensor of `dtype` and `shape` holding `values` in row-major order.
template <class V = double>
graph::TensorData make_tensor(DataType dtype, std::vector<int64_t> shape,
                              const std::vector<V>& values) {
  graph::TensorData t(dtype, std::move(shape));
  EXPECT_EQ(static_cast<size_t>(t.numel()), values.size()) << "values for a " << dtype.str();
  for (size_t i = 0; i < values.size() && static_cast<int64_t>(i) < t.numel(); ++i)
    set_element(t.raw(), dtype, static_cast<int64_t>(i), values[i]);
  return t;
}

// Every element as a double, in row-major order.
inline std::vector<double> values_of(const graph::TensorData& t) {
  std::vector<double> v;
  for (int64_t i = 0; i < t.numel(); ++i) v.push_back(element_value(t, i));
  return v;
}

}  // namespace tessel::testing
