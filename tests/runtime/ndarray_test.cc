#include "runtime/ndarray.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <string>

#include "ir/error.h"
#include "runtime/tensor_data.h"
#include "tests/common/expect_error.h"

namespace tessel::runtime {
namespace {

using tessel::testing::expect_error;

TEST(NDArrayTest, EmptyIsAlignedWithShapeStridesAndDtype) {
  for (auto shape : {std::vector<int64_t>{3}, {2, 3, 5}, {7, 1}, {}}) {
    NDArray a = NDArray::empty(shape, DataType::f32());
    EXPECT_EQ(reinterpret_cast<uintptr_t>(a.raw_data()) % 64, 0u);
    EXPECT_EQ(a.shape(), shape);
    EXPECT_EQ(a.ndim(), static_cast<int>(shape.size()));
    int64_t expected_numel =
        std::accumulate(shape.begin(), shape.end(), int64_t{1}, std::multiplies<>());
    EXPECT_EQ(a.numel(), expected_numel);
    EXPECT_EQ(a.nbytes(), static_cast<size_t>(expected_numel) * 4);

    const DLTensor* t = a.dltensor();
    EXPECT_EQ(t->data, a.raw_data());
    EXPECT_EQ(t->device.device_type, kDLCPU);
    EXPECT_EQ(t->ndim, a.ndim());
    EXPECT_EQ(t->byte_offset, 0u);
    EXPECT_EQ(t->dtype.code, kDLFloat);
    EXPECT_EQ(t->dtype.bits, 32);
    int64_t stride = 1;
    for (int i = a.ndim() - 1; i >= 0; --i) {
      EXPECT_EQ(t->shape[i], shape[i]);
      EXPECT_EQ(t->strides[i], stride) << "dim " << i;
      stride *= shape[i];
    }
  }
}

// An array of 2 MiB or more starts on a huge page (the kernel may back it with one) and holds
// what is written to all of it, its last partial huge page included.
TEST(NDArrayTest, ArraysOfAHugePageOrMoreStartOnOne) {
  constexpr uintptr_t kHuge = uintptr_t{2} << 20;
  for (int64_t n : {int64_t{1} << 19, (int64_t{3} << 20) / 4 + 5}) {  // 2 MiB, 3 MiB + 20 bytes
    NDArray a = NDArray::empty({n}, DataType::f32());
    EXPECT_EQ(reinterpret_cast<uintptr_t>(a.raw_data()) % kHuge, 0u) << n;
    auto* f = static_cast<float*>(a.raw_data());
    for (int64_t i = 0; i < n; ++i) f[i] = static_cast<float>(i % 1000);
    EXPECT_EQ(f[n - 1], static_cast<float>((n - 1) % 1000));
    EXPECT_EQ(f[n / 2], static_cast<float>((n / 2) % 1000));
  }
  NDArray small = NDArray::empty({(int64_t{1} << 19) - 1}, DataType::f32());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(small.raw_data()) % kArrayAlignment, 0u);
}

TEST(NDArrayTest, ZeroSizeDims) {
  NDArray a = NDArray::empty({4, 0, 3}, DataType::i32());
  EXPECT_EQ(a.numel(), 0);
  EXPECT_EQ(a.nbytes(), 0u);
  EXPECT_NE(a.raw_data(), nullptr);
  NDArray b = a.copy();
  EXPECT_EQ(b.shape(), a.shape());
  a.copy_from(nullptr, 0);
  DLManagedTensor* m = a.to_dlpack();
  NDArray c = NDArray::from_dlpack(m);
  EXPECT_EQ(c.shape(), (std::vector<int64_t>{4, 0, 3}));
}

TEST(NDArrayTest, NegativeDimIsAnError) {
  expect_error([] { NDArray::empty({2, -1}, DataType::f32()); }, {"dim 1", "[2, -1]"});
}

// A shape from a file (mod.json, mod.params) whose byte size overflows int64 is an error, not a
// wrapped-around small allocation.
TEST(NDArrayTest, ShapeWhoseSizeOverflowsIsAnError) {
  expect_error([] { NDArray::empty({int64_t{1} << 40, int64_t{1} << 40}, DataType::f32()); },
               {"too large"});
  expect_error([] { NDArray::empty({int64_t{1} << 62}, DataType::f64()); },
               {"float64", "too large"});
}

// Found by the package fuzzer (tests/fuzz): a zero dim made the size 0, so the check passed, and
// the strides (the product of the other dims) overflowed int64, undefined behaviour (UBSan aborts).
TEST(NDArrayTest, AZeroDimDoesNotExcuseOverflowingStrides) {
  expect_error([] { NDArray::empty({0, int64_t{1} << 40, int64_t{1} << 40}, DataType::f32()); },
               {"[0, 1099511627776, 1099511627776]", "too large"});
  expect_error([] { NDArray::nbytes_of({int64_t{1} << 40, 0, int64_t{1} << 40}, DataType::u8()); },
               {"too large"});
  EXPECT_EQ(NDArray::nbytes_of({3, 0, int64_t{1} << 40}, DataType::f32()), 0u);
  EXPECT_EQ(NDArray::nbytes_of({2, 3}, DataType::f64()), 48u);
}

TEST(NDArrayTest, DataTypeConversionRoundTrips) {
  for (DataType t :
       {DataType::i8(), DataType::i32(), DataType::i64(), DataType::u8(), DataType::u64(),
        DataType::f16(), DataType::f32(), DataType::f64(), DataType::bf16(), DataType::boolean(),
        DataType::f32().with_lanes(4), DataType::handle()}) {
    EXPECT_EQ(from_dl(to_dl(t)), t) << t.str();
  }
  DLDataType b = to_dl(DataType::boolean());
  EXPECT_EQ(b.code, kDLUInt);
  EXPECT_EQ(b.bits, 1);
  EXPECT_EQ(b.lanes, 1);
  // DLPack 0.8's kDLBool (6) with 8 bits is accepted as bool.
  EXPECT_EQ(from_dl(DLDataType{6, 8, 1}), DataType::boolean());
  EXPECT_EQ(to_dl(DataType::bf16()).code, kDLBfloat);
  expect_error([] { from_dl(DLDataType{kDLBfloat, 32, 1}); }, {"code 4", "bits 32"});
}

TEST(NDArrayTest, BoolArrayUsesOneBytePerElement) {
  NDArray a = NDArray::empty({10}, DataType::boolean());
  EXPECT_EQ(a.nbytes(), 10u);
}

TEST(NDArrayTest, CopyIsDeepAndCopyFromToMoveBytes) {
  NDArray a = NDArray::empty({2, 3}, DataType::f32());
  std::vector<float> src = {1, 2, 3, 4, 5, 6};
  a.copy_from(src.data(), src.size() * sizeof(float));
  NDArray b = a.copy();
  EXPECT_NE(b.raw_data(), a.raw_data());
  a.data<float>()[0] = 100;
  std::vector<float> out(6);
  b.copy_to(out.data(), out.size() * sizeof(float));
  EXPECT_EQ(out, src);
  // Copies of the handle share storage.
  NDArray alias = a;
  EXPECT_EQ(alias.data<float>()[0], 100);
}

TEST(NDArrayTest, CopySizeMismatchNamesBothSizes) {
  NDArray a = NDArray::empty({2, 3}, DataType::f32());
  std::vector<float> buf(5);
  expect_error([&] { a.copy_from(buf.data(), 20); },
               {"copy_from", "20 bytes", "24 bytes", "[2, 3]"});
  expect_error([&] { a.copy_to(buf.data(), 20); }, {"copy_to", "20 bytes", "24 bytes"});
}

TEST(NDArrayTest, ToDlpackSharesMemoryAndOutlivesTheArray) {
  DLManagedTensor* m;
  void* data;
  {
    NDArray a = NDArray::empty({4}, DataType::i32());
    for (int i = 0; i < 4; ++i) a.data<int32_t>()[i] = i * 10;
    m = a.to_dlpack();
    data = a.raw_data();
  }
  // The array handle is gone; the consumer's tensor still sees its data and shape.
  EXPECT_EQ(m->dl_tensor.data, data);
  EXPECT_EQ(m->dl_tensor.ndim, 1);
  EXPECT_EQ(m->dl_tensor.shape[0], 4);
  EXPECT_EQ(static_cast<int32_t*>(m->dl_tensor.data)[3], 30);
  m->deleter(m);
}

// A producer-side DLManagedTensor that counts its deleter calls.
struct ForeignTensor {
  std::vector<float> data;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
  int* deleted;
};

DLManagedTensor* make_foreign(int* deleted, std::vector<int64_t> shape,
                              std::vector<int64_t> strides, DLDeviceType device = kDLCPU) {
  auto* ctx =
      new ForeignTensor{std::vector<float>(16), std::move(shape), std::move(strides), deleted};
  std::iota(ctx->data.begin(), ctx->data.end(), 0.0f);
  auto* m = new DLManagedTensor{};
  m->dl_tensor.data = ctx->data.data();
  m->dl_tensor.device = {device, 0};
  m->dl_tensor.ndim = static_cast<int>(ctx->shape.size());
  m->dl_tensor.dtype = {kDLFloat, 32, 1};
  m->dl_tensor.shape = ctx->shape.data();
  m->dl_tensor.strides = ctx->strides.empty() ? nullptr : ctx->strides.data();
  m->dl_tensor.byte_offset = 2 * sizeof(float);
  m->manager_ctx = ctx;
  m->deleter = [](DLManagedTensor* self) {
    auto* c = static_cast<ForeignTensor*>(self->manager_ctx);
    ++*c->deleted;
    delete c;
    delete self;
  };
  return m;
}

TEST(NDArrayTest, FromDlpackTakesOwnershipAndCallsDeleterOnce) {
  int deleted = 0;
  {
    NDArray a = NDArray::from_dlpack(make_foreign(&deleted, {2, 3}, {}));
    NDArray copy_of_handle = a;
    EXPECT_EQ(a.shape(), (std::vector<int64_t>{2, 3}));
    EXPECT_EQ(a.dtype(), DataType::f32());
    // byte_offset is folded into the data pointer.
    EXPECT_EQ(a.data<float>()[0], 2.0f);
    EXPECT_EQ(a.dltensor()->byte_offset, 0u);
    EXPECT_EQ(deleted, 0);
  }
  EXPECT_EQ(deleted, 1);
}

TEST(NDArrayTest, RoundTripThroughDlpackKeepsOneOwner) {
  int deleted = 0;
  NDArray a = NDArray::from_dlpack(make_foreign(&deleted, {6}, {1}));
  DLManagedTensor* exported = a.to_dlpack();
  NDArray b = NDArray::from_dlpack(exported);
  EXPECT_EQ(b.raw_data(), a.raw_data());
  a = NDArray();
  EXPECT_EQ(deleted, 0);  // b's export still holds the original
  b = NDArray();
  EXPECT_EQ(deleted, 1);
}

TEST(NDArrayTest, FromDlpackRejectsAndStillReleases) {
  int deleted = 0;
  expect_error([&] { NDArray::from_dlpack(make_foreign(&deleted, {2, 3}, {1, 2})); },
               {"strides [1, 2]", "[2, 3]"});
  EXPECT_EQ(deleted, 1);
  expect_error([&] { NDArray::from_dlpack(make_foreign(&deleted, {4}, {}, kDLCUDA)); },
               {"not CPU"});
  EXPECT_EQ(deleted, 2);
  // Non-compact strides along a size-1 dim are harmless.
  NDArray ok = NDArray::from_dlpack(make_foreign(&deleted, {1, 4}, {99, 1}));
  EXPECT_EQ(ok.dltensor()->strides[0], 4);
}

// A weight's bytes become a parameter without a copy when kernels can use them as they are; any
// other tensor is copied into aligned memory. Either way the array is what kernels accept.
TEST(NDArrayTest, ToNdarraySharesAlignedTensorBytesAndCopiesOthers) {
  graph::TensorData t(DataType::f32(), {64, 64});
  t.data<float>()[5] = 2.5f;
  NDArray shared = to_ndarray(t);
  EXPECT_EQ(shared.raw_data(), t.raw());
  const void* bytes = t.raw();
  t = graph::TensorData();  // the array keeps the bytes alive
  EXPECT_EQ(shared.raw_data(), bytes);
  EXPECT_EQ(shared.data<float>()[5], 2.5f);
  EXPECT_EQ(shared.shape(), (std::vector<int64_t>{64, 64}));

  std::string raw(4 * 33, '\0');
  raw[4] = 1;
  graph::TensorData adopted = graph::TensorData::adopt(DataType::i32(), {33}, std::move(raw));
  NDArray a = to_ndarray(adopted);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a.raw_data()) % kArrayAlignment, 0u);
  EXPECT_EQ(a.data<int32_t>()[1], 1);
  EXPECT_EQ(a.dtype(), DataType::i32());
}

}  // namespace
}  // namespace tessel::runtime
