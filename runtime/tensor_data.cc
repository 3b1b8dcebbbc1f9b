#include "runtime/tensor_data.h"

#include <cstring>

namespace tessel::runtime {

NDArray to_ndarray(const graph::TensorData& t) {
  NDArray a = NDArray::empty(t.shape(), t.dtype());
  if (t.nbytes()) std::memcpy(a.raw_data(), t.raw(), t.nbytes());
  return a;
}

graph::TensorData to_tensor_data(const NDArray& a) {
  graph::TensorData t(a.dtype(), a.shape());
  if (t.nbytes()) std::memcpy(t.raw(), a.raw_data(), t.nbytes());
  return t;
}

}  // namespace tessel::runtime
