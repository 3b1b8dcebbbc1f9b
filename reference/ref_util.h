// Helpers shared by the reference op implementations: reading and writing elements of any
// numeric dtype (float16, bfloat16 and bool included) as double or int64, row-major index
// arithmetic, numpy broadcasting, and dtype-agnostic element copies. Stable: other op families
// use it.
#pragma once

#include <cstdint>
#include <functional>
#include <type_traits>
#include <vector>

#include "ir/graph.h"
#include "ir/ops/op_params.h"

namespace tessel::reference {

using graph::Node;
using graph::TensorData;

// Element i of t. Float dtypes read as-is; integers and bool (0/1) convert. bfloat16 is only
// readable as double: get_i throws on it, so integer code paths cannot take it for an integer.
double get_f(const TensorData& t, int64_t i);
int64_t get_i(const TensorData& t, int64_t i);
// Writes element i. Floats round to the dtype; integers truncate toward zero (set_f) and wrap to
// the dtype's width; bool stores v != 0.
void set_f(TensorData& t, int64_t i, double v);
void set_i(TensorData& t, int64_t i, int64_t v);
// The same, for T = double or int64_t (lets one generic lambda serve both).
template <class T>
T get(const TensorData& t, int64_t i) {
  static_assert(std::is_same_v<T, double> || std::is_same_v<T, int64_t>);
  if constexpr (std::is_same_v<T, double>) {
    return get_f(t, i);
  } else {
    return get_i(t, i);
  }
}
template <class T>
void set(TensorData& t, int64_t i, T v) {
  static_assert(std::is_same_v<T, double> || std::is_same_v<T, int64_t>);
  if constexpr (std::is_same_v<T, double>) {
    set_f(t, i, v);
  } else {
    set_i(t, i, v);
  }
}
// dst[di] = src[si]; both of the same dtype (raw bytes).
void copy_element(TensorData& dst, int64_t di, const TensorData& src, int64_t si);

// Row-major element strides of `shape`.
std::vector<int64_t> strides_of(const std::vector<int64_t>& shape);
int64_t numel_of(const std::vector<int64_t>& shape);
// For each element of `out_shape` (row-major), the flat index in a tensor of `in_shape` that
// numpy broadcasting reads (in_shape must broadcast to out_shape).
std::vector<int64_t> broadcast_offsets(const std::vector<int64_t>& in_shape,
                                       const std::vector<int64_t>& out_shape);
// Calls fn(index, flat) for every index of `shape` in row-major order.
void for_each_index(const std::vector<int64_t>& shape,
                    const std::function<void(const std::vector<int64_t>& index, int64_t flat)>& fn);
// A tensor of src's dtype and `out_shape` whose element at `index` is src[src_flat(index)].
TensorData gather_from(const TensorData& src, const std::vector<int64_t>& out_shape,
                       const std::function<int64_t(const std::vector<int64_t>& index)>& src_flat);

// inputs[i], or nullptr when it is omitted.
const TensorData* optional_input(const std::vector<TensorData>& inputs, size_t i);
// inputs[i]; an Error naming the node when it is omitted.
const TensorData& required_input(const std::vector<TensorData>& inputs, size_t i, const Node& node);
// Parameter inputs (axes, pads, ...) read from the runtime inputs, for ir/ops/op_params.h.
graph::ops::ParamInput runtime_params(const std::vector<TensorData>& inputs);
// An int64 tensor of `shape` holding `values`.
TensorData int64_tensor(const std::vector<int64_t>& shape, const std::vector<int64_t>& values);

}  // namespace tessel::reference
