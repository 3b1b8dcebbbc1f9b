// NDArray: a reference-counted, 64-byte aligned, compact row-major CPU tensor on DLPack's DLTensor.
// Copies of an NDArray share storage. dltensor() always has explicit strides and byte_offset 0.
// DLPack 0.6 has no bool code: bool maps to uint1 (one byte per element); import also accepts
// DLPack 0.8's kDLBool (code 6, 8 bits).
#pragma once

#include <dlpack/dlpack.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "ir/dtype.h"

namespace tessel::runtime {

DLDataType to_dl(DataType t);
DataType from_dl(DLDataType t);

// The alignment of NDArray::empty's memory, which generated kernels check on every buffer.
inline constexpr size_t kArrayAlignment = 64;

class NDArray {
 public:
  NDArray() = default;
  // Uninitialized CPU array.
  static NDArray empty(std::vector<int64_t> shape, DataType dtype);
  // What empty(shape, dtype).nbytes() would be, without allocating: for checking a size read from
  // a file first. Error for a negative dim, a dtype without storage or a size that overflows.
  static size_t nbytes_of(const std::vector<int64_t>& shape, DataType dtype);
  // Takes ownership of a compact row-major CPU DLPack tensor: its deleter runs when the last
  // NDArray dies, or at once if the tensor is rejected (tessel::Error). Imported data keeps its own
  // alignment; byte_offset is folded into dltensor()->data.
  static NDArray from_dlpack(DLManagedTensor* tensor);
  // A DLPack tensor sharing this array's memory; the consumer calls its deleter.
  DLManagedTensor* to_dlpack() const;

  bool defined() const { return static_cast<bool>(impl_); }
  const std::vector<int64_t>& shape() const;
  int ndim() const { return static_cast<int>(shape().size()); }
  DataType dtype() const;
  int64_t numel() const;
  size_t nbytes() const;
  void* raw_data() const;
  template <class T>
  T* data() const {
    return static_cast<T*>(raw_data());
  }
  DLTensor* dltensor() const;
  // Copies nbytes() bytes from/to host memory; any other nbytes throws tessel::Error.
  void copy_from(const void* src, size_t nbytes);
  void copy_to(void* dst, size_t nbytes) const;
  NDArray copy() const;
  // An array of another shape and dtype over this array's memory from byte `offset` on (which it
  // keeps alive); Error when it needs more than nbytes() - offset.
  NDArray view(std::vector<int64_t> shape, DataType dtype, int64_t offset = 0) const;

  struct Container;

 private:
  std::shared_ptr<Container> impl_;
};

}  // namespace tessel::runtime
