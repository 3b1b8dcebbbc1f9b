// Input values for runs without given inputs (tessel run, the model check of tessel tune).
#include "runtime/fill.h"

#include <gtest/gtest.h>

#include <cstring>

#include "tests/common/expect_error.h"

namespace tessel::runtime {
namespace {

template <class T>
void expect_all_within(const NDArray& a, T lo, T hi) {
  for (int64_t i = 0; i < a.numel(); ++i) {
    EXPECT_GE(a.data<T>()[i], lo) << i;
    EXPECT_LE(a.data<T>()[i], hi) << i;
  }
}

TEST(Fill, ModesAndDtypes) {
  NDArray f = NDArray::empty({64}, DataType::f32());
  fill(f, "random", 1);
  expect_all_within(f, 0.0f, 1.0f);
  NDArray again = NDArray::empty({64}, DataType::f32());
  fill(again, "random", 1);
  EXPECT_EQ(std::memcmp(f.raw_data(), again.raw_data(), f.nbytes()), 0);  // the seed decides
  fill(f, "ones", 1);
  EXPECT_EQ(f.data<float>()[63], 1.0f);

  NDArray ids = NDArray::empty({64}, DataType::i64());
  fill(ids, "random", 2);
  expect_all_within<int64_t>(ids, 0, 9);
  NDArray mask = NDArray::empty({64}, DataType::boolean());
  fill(mask, "random", 3);
  expect_all_within<uint8_t>(mask, 0, 1);
  fill(mask, "zeros", 3);
  EXPECT_EQ(mask.data<uint8_t>()[0], 0);

  NDArray half = NDArray::empty({4}, DataType::f16());
  testing::expect_error([&] { fill(half, "random", 4); }, {"cannot fill float16"});
}

}  // namespace
}  // namespace tessel::runtime
