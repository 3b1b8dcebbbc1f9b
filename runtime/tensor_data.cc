#include "runtime/tensor_data.h"

#include <cstring>

namespace tessel::runtime {

NDArray to_ndarray(const graph::TensorData& t) {
  if (t.nbytes() != 0 && reinterpret_cast<uintptr_t>(t.raw()) % kArrayAlignment == 0) {
    // The array keeps a TensorData sharing the bytes; a weight is not copied again.
    struct Shared {
      DLManagedTensor managed;
      graph::TensorData data;
      std::vector<int64_t> shape;
    };
    auto* s = new Shared{{}, t, t.shape()};
    DLTensor& dl = s->managed.dl_tensor;
    dl.data = s->data.raw();
    dl.device = {kDLCPU, 0};
    dl.ndim = static_cast<int32_t>(s->shape.size());
    dl.dtype = to_dl(t.dtype());
    dl.shape = s->shape.data();
    s->managed.manager_ctx = s;
    s->managed.deleter = [](DLManagedTensor* self) {
      delete static_cast<Shared*>(self->manager_ctx);
    };
    return NDArray::from_dlpack(&s->managed);
  }
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
