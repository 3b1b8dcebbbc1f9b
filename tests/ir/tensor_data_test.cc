// graph::TensorData: zero-filled and 64-byte aligned allocations (small and mapped), shared bytes,
// adopted strings, and what unique() tells in-place passes.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

#include "ir/graph.h"

namespace tessel::graph {
namespace {

bool aligned64(const void* p) { return reinterpret_cast<uintptr_t>(p) % 64 == 0; }

TEST(TensorDataTest, AllocationsAreZeroedAndAligned) {
  // Small (the heap), large (mapped from the system), empty and scalar tensors.
  for (std::vector<int64_t> shape :
       std::vector<std::vector<int64_t>>{{3}, {7, 5}, {512, 1024}, {0, 4}, {}}) {
    TensorData t(DataType::f32(), shape);
    ASSERT_TRUE(t.defined());
    EXPECT_TRUE(aligned64(t.raw()));
    EXPECT_EQ(t.nbytes(), static_cast<size_t>(t.numel()) * 4);
    for (int64_t i = 0; i < t.numel(); ++i) ASSERT_EQ(t.data<float>()[i], 0.0f) << i;
    if (t.numel() > 0) t.data<float>()[t.numel() - 1] = 1.5f;  // writable to the end
  }
}

TEST(TensorDataTest, ElementCountsNeverOverflow) {
  constexpr int64_t kBig = int64_t{1} << 40;
  // A zero dim anywhere makes the tensor empty, however large the dims before it.
  EXPECT_EQ(shape_numel({kBig, kBig, 0}), 0);
  EXPECT_EQ(TensorData(DataType::f32(), {kBig, kBig, 0}).nbytes(), 0u);
  // Past int64, the count saturates, so that no size limit accepts it.
  EXPECT_EQ(shape_numel({kBig, kBig}), std::numeric_limits<int64_t>::max());
  EXPECT_EQ((TensorType{DataType::f32(), {kBig, kBig}, {}}.numel()),
            std::numeric_limits<int64_t>::max());
  EXPECT_EQ((TensorType{DataType::f32(), {-1, 4}, {}}.numel()), -1);
  // Two negative dims are not a positive count.
  EXPECT_THROW(TensorData(DataType::f32(), {-2, -2}), Error);
  EXPECT_THROW(TensorData(DataType::f32(), {kBig, kBig}), Error);
}

TEST(TensorDataTest, CopiesShareBytesAndClonesDoNot) {
  TensorData a(DataType::i32(), {300000});
  EXPECT_TRUE(a.unique());
  TensorData b = a;
  EXPECT_FALSE(a.unique());
  EXPECT_EQ(a.raw(), b.raw());
  TensorData c = a.clone();
  EXPECT_NE(c.raw(), a.raw());
  EXPECT_TRUE(aligned64(c.raw()));
  a.data<int32_t>()[299999] = 7;
  EXPECT_EQ(b.data<int32_t>()[299999], 7);
  EXPECT_EQ(c.data<int32_t>()[299999], 0);
  b = TensorData();
  EXPECT_TRUE(a.unique());
}

TEST(TensorDataTest, AdoptTakesTheStringsBytes) {
  std::string bytes(4 * 1000, '\0');
  bytes[0] = 1;
  const char* where = bytes.data();
  TensorData t = TensorData::adopt(DataType::i32(), {10, 100}, std::move(bytes));
  EXPECT_EQ(static_cast<const char*>(t.raw()), where);
  EXPECT_EQ(t.data<int32_t>()[0], 1);
  EXPECT_TRUE(t.unique());
  EXPECT_THROW(TensorData::adopt(DataType::i32(), {3}, std::string(11, '\0')), InternalError);
}

}  // namespace
}  // namespace tessel::graph
