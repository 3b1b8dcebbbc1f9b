// Helpers for codegen tests: hand-written lowered PrimFuncs (1-d accesses through flat views
// that share a parameter's data var, as flatten_buffers produces) and NDArrays filled from a
// function of the flat index.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "codegen/build.h"
#include "ir/stmt.h"
#include "runtime/ndarray.h"

namespace tessel::testing {

// A 1-d view of `b` over the same data var.
inline Buffer flat(const Buffer& b) {
  PrimExpr n = 1;
  for (const PrimExpr& d : b->shape) n = n * d;
  return Buffer(make_node<BufferNode>(b->data, b->dtype, std::vector<PrimExpr>{n},
                                      std::vector<PrimExpr>{}, b->name, b->scope));
}

inline PrimExpr load(const Buffer& b, PrimExpr index) { return BufferLoadNode::make(b, {index}); }
inline Stmt store(const Buffer& b, PrimExpr value, PrimExpr index) {
  return BufferStoreNode::make(b, value, {index});
}
inline Stmt loop(const Var& i, PrimExpr extent, Stmt body, ForKind kind = ForKind::kSerial) {
  return ForNode::make(i, 0, extent, kind, std::move(body));
}
inline PrimExpr ramp(PrimExpr base, int lanes, PrimExpr stride = 1) {
  return RampNode::make(base, stride, lanes);
}
// A function whose parameters are the given buffers, in order.
inline PrimFunc make_func(const std::string& name, const std::vector<Buffer>& buffers, Stmt body) {
  std::vector<Var> params;
  for (const Buffer& b : buffers) params.push_back(b->data);
  return PrimFunc::make(name, params, buffers, std::move(body));
}

inline const Target& host_target() {
  static const Target target = Target::host();
  return target;
}

template <class T>
runtime::NDArray make_array(std::vector<int64_t> shape, DataType dtype,
                            const std::function<T(int64_t)>& value) {
  runtime::NDArray a = runtime::NDArray::empty(std::move(shape), dtype);
  for (int64_t i = 0; i < a.numel(); ++i) a.data<T>()[i] = value(i);
  return a;
}

inline runtime::NDArray float_array(std::vector<int64_t> shape,
                                    const std::function<float(int64_t)>& value) {
  return make_array<float>(std::move(shape), DataType::f32(), value);
}

}  // namespace tessel::testing
