#include "runtime/ndarray.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "ir/error.h"

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace tessel::runtime {

namespace {

// DLPack >= 0.8 names this kDLBool (one byte per element); 0.6 has no bool code, so Tessel exports
// bool as uint1 and accepts both on import.
constexpr uint8_t kDLBoolCode = 6;

std::vector<int64_t> compact_strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> strides(shape.size());
  int64_t stride = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = stride;
    stride *= shape[i];
  }
  return strides;
}

// Strides only matter along dims with more than one element, and not at all for empty arrays.
bool is_compact(const std::vector<int64_t>& shape, const int64_t* strides) {
  if (strides == nullptr) return true;
  for (int64_t d : shape) {
    if (d == 0) return true;
  }
  std::vector<int64_t> expected = compact_strides(shape);
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] > 1 && strides[i] != expected[i]) return false;
  }
  return true;
}

}  // namespace

DLDataType to_dl(DataType t) {
  // DataType's codes were chosen equal to DLPack's (kInt, kUInt, kFloat, kOpaqueHandle, kBfloat).
  return DLDataType{static_cast<uint8_t>(t.code()), static_cast<uint8_t>(t.bits()),
                    static_cast<uint16_t>(t.lanes())};
}

DataType from_dl(DLDataType t) {
  switch (t.code) {
    case kDLInt:
      return DataType(DataType::kInt, t.bits, t.lanes);
    case kDLUInt:
      return DataType(DataType::kUInt, t.bits, t.lanes);
    case kDLFloat:
      return DataType(DataType::kFloat, t.bits, t.lanes);
    case kDLBfloat:
      if (t.bits == 16) return DataType::bf16().with_lanes(t.lanes);
      break;
    case kDLOpaqueHandle:
      return DataType(DataType::kHandle, t.bits, t.lanes);
    case kDLBoolCode:
      if (t.bits == 8) return DataType::boolean(t.lanes);
      break;
    default:
      break;
  }
  throw Error(fmt::format("DLPack dtype (code {}, bits {}, lanes {}) has no Tessel equivalent",
                          t.code, t.bits, t.lanes));
}

// Owns the DLTensor's shape and strides; the data is either allocated here or borrowed from an
// imported DLManagedTensor, whose deleter runs when the container dies.
struct NDArray::Container {
  DLTensor dl{};
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
  DataType dtype;
  void* owned_data = nullptr;
  DLManagedTensor* imported = nullptr;
  std::shared_ptr<Container> viewed;  // the array whose memory a view uses

  Container() = default;
  Container(const Container&) = delete;
  Container& operator=(const Container&) = delete;
  ~Container() {
    std::free(owned_data);
    if (imported != nullptr && imported->deleter != nullptr) imported->deleter(imported);
  }

  // Points dl at this container's shape and strides.
  void link_dl(void* data) {
    strides = compact_strides(shape);
    dl.data = data;
    dl.device = DLDevice{kDLCPU, 0};
    dl.ndim = static_cast<int>(shape.size());
    dl.dtype = to_dl(dtype);
    dl.shape = shape.data();
    dl.strides = strides.data();
    dl.byte_offset = 0;
  }

  int64_t numel() const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
  }
  size_t nbytes() const {
    return static_cast<size_t>(numel()) * static_cast<size_t>(dtype.bytes() * dtype.lanes());
  }
};

namespace {
// The bytes of an array of `shape` and `dtype`; Error (prefixed with `what`) for a negative dim, a
// dtype without storage, or a size that overflows, so that numel() and nbytes() cannot (shapes come
// from files too).
size_t checked_nbytes(const char* what, const std::vector<int64_t>& shape, DataType dtype) {
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] < 0)
      throw Error(
          fmt::format("{}: dim {} of shape [{}] is negative", what, i, fmt::join(shape, ", ")));
  }
  if (dtype.bits() == 0) throw Error(fmt::format("{}: dtype {} has no storage", what, dtype.str()));
  // The strides multiply the dims too, and a zero dim does not keep them small: [0, 2^40, 2^40]
  // holds no bytes but its first stride overflows. So the product skips zero dims.
  int64_t span = dtype.bytes() * dtype.lanes();
  bool empty = false;
  for (int64_t d : shape) {
    empty |= d == 0;
    if (d != 0 && __builtin_mul_overflow(span, d, &span)) {
      throw Error(fmt::format("{}: a {} array of shape [{}] is too large", what, dtype.str(),
                              fmt::join(shape, ", ")));
    }
  }
  return empty ? 0 : static_cast<size_t>(span);
}

// An array of at least a huge page (2 MiB) is aligned to one and asks the kernel for huge pages
// (Linux's transparent huge pages, in their "madvise" mode too): a model's weights and activation
// buffers then take a few TLB entries, not one per 4 KiB, whose misses a VM pays twice over (its
// page walks are nested). ResNet-50 (100 MB of weights) on the Intel Xeon VM, the same package
// run in turns with and without: 0.96-0.99x the time at one and two threads (minima and medians
// of 10 rounds, twice; a third run, in a slow phase of the VM, 0.98 and 1.00 by minima);
// MobileNetV2, DenseNet-121 and the transformer encoder, whose weights are mostly smaller
// arrays, within the noise.
constexpr size_t kHugePageBytes = size_t{2} << 20;

void* allocate_array(size_t bytes) {
  void* data = nullptr;
  if (bytes >= kHugePageBytes) {
    if (posix_memalign(&data, kHugePageBytes, bytes) != 0) return nullptr;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    madvise(data, bytes, MADV_HUGEPAGE);  // a hint: without THP the pages stay 4 KiB
#endif
    return data;
  }
  // aligned_alloc needs a size that is a multiple of the alignment.
  return std::aligned_alloc(kArrayAlignment,
                            (bytes + kArrayAlignment - 1) / kArrayAlignment * kArrayAlignment);
}

// A container of a checked shape and dtype, with no data yet.
std::shared_ptr<NDArray::Container> new_container(const char* what, std::vector<int64_t> shape,
                                                  DataType dtype) {
  checked_nbytes(what, shape, dtype);
  auto c = std::make_shared<NDArray::Container>();
  c->shape = std::move(shape);
  c->dtype = dtype;
  return c;
}
}  // namespace

size_t NDArray::nbytes_of(const std::vector<int64_t>& shape, DataType dtype) {
  return checked_nbytes("NDArray::nbytes_of", shape, dtype);
}

NDArray NDArray::empty(std::vector<int64_t> shape, DataType dtype) {
  NDArray result;
  result.impl_ = new_container("NDArray::empty", std::move(shape), dtype);
  Container& c = *result.impl_;
  // Empty arrays still get a distinct non-null pointer.
  c.owned_data = allocate_array(std::max<size_t>(c.nbytes(), 1));
  if (c.owned_data == nullptr) {
    throw Error(fmt::format("NDArray::empty: cannot allocate {} bytes", c.nbytes()));
  }
  c.link_dl(c.owned_data);
  return result;
}

NDArray NDArray::from_dlpack(DLManagedTensor* tensor) {
  if (tensor == nullptr) throw Error("NDArray::from_dlpack: null DLManagedTensor");
  // Own the tensor first so that every rejection below still releases it.
  auto impl = std::make_shared<Container>();
  impl->imported = tensor;
  const DLTensor& src = tensor->dl_tensor;
  if (src.device.device_type != kDLCPU) {
    throw Error(fmt::format("NDArray::from_dlpack: device type {} is not CPU",
                            static_cast<int>(src.device.device_type)));
  }
  impl->shape.assign(src.shape, src.shape + src.ndim);
  impl->dtype = from_dl(src.dtype);
  if (!is_compact(impl->shape, src.strides)) {
    throw Error(fmt::format(
        "NDArray::from_dlpack: strides [{}] of shape [{}] are not compact row-major",
        fmt::join(src.strides, src.strides + src.ndim, ", "), fmt::join(impl->shape, ", ")));
  }
  impl->link_dl(static_cast<char*>(src.data) + src.byte_offset);
  NDArray result;
  result.impl_ = std::move(impl);
  return result;
}

DLManagedTensor* NDArray::to_dlpack() const {
  TESSEL_ICHECK(defined()) << "to_dlpack on an undefined NDArray";
  auto* managed = new DLManagedTensor{};
  managed->dl_tensor = impl_->dl;
  // The consumer's deleter call drops this reference, which keeps shape and data alive.
  managed->manager_ctx = new std::shared_ptr<Container>(impl_);
  managed->deleter = [](DLManagedTensor* self) {
    delete static_cast<std::shared_ptr<Container>*>(self->manager_ctx);
    delete self;
  };
  return managed;
}

const std::vector<int64_t>& NDArray::shape() const { return impl_->shape; }
DataType NDArray::dtype() const { return impl_->dtype; }
int64_t NDArray::numel() const { return impl_->numel(); }
size_t NDArray::nbytes() const { return impl_->nbytes(); }
void* NDArray::raw_data() const { return impl_->dl.data; }
DLTensor* NDArray::dltensor() const { return &impl_->dl; }

namespace {
void check_copy_size(const char* what, const NDArray& array, size_t nbytes) {
  if (nbytes != array.nbytes()) {
    throw Error(
        fmt::format("NDArray::{}: host buffer has {} bytes but the {}[{}] array has {} bytes", what,
                    nbytes, array.dtype().str(), fmt::join(array.shape(), ", "), array.nbytes()));
  }
}
}  // namespace

void NDArray::copy_from(const void* src, size_t nbytes) {
  check_copy_size("copy_from", *this, nbytes);
  if (nbytes != 0) std::memcpy(raw_data(), src, nbytes);
}

void NDArray::copy_to(void* dst, size_t nbytes) const {
  check_copy_size("copy_to", *this, nbytes);
  if (nbytes != 0) std::memcpy(dst, raw_data(), nbytes);
}

NDArray NDArray::view(std::vector<int64_t> shape, DataType dtype, int64_t offset) const {
  NDArray result;
  result.impl_ = new_container("NDArray::view", std::move(shape), dtype);
  Container& c = *result.impl_;
  if (offset < 0 || static_cast<uint64_t>(offset) > nbytes() ||
      c.nbytes() > nbytes() - static_cast<uint64_t>(offset)) {
    throw Error(
        fmt::format("NDArray::view: a {} view needs {} bytes from byte {}, the array has {}",
                    dtype.str(), c.nbytes(), offset, nbytes()));
  }
  c.viewed = impl_;
  c.link_dl(static_cast<char*>(raw_data()) + offset);
  return result;
}

NDArray NDArray::copy() const {
  NDArray result = empty(shape(), dtype());
  copy_to(result.raw_data(), result.nbytes());
  return result;
}

}  // namespace tessel::runtime
