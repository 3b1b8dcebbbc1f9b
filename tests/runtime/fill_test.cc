// Input values for runs without given inputs (tessel run, the model check of tessel tune).
#include "runtime/fill.h"

#include <gtest/gtest.h>

#include <cstring>

#include "tests/expect_error.h"

namespace tessel::runtime {
namespace {

TEST(Fill, ModesAndDtypes) {
  NDArray f = NDArray::empty({64}, DataType::f32());
  fill(f, "random", 1);
  for (int64_t i = 0; i < f.numel(); ++i) {
    EXPECT_GE(f.data<float>()[i], 0.0f);
    EXPECT_LT(f.data<float>()[i], 1.0f);
  }
  NDArray again = NDArray::empty({64}, DataType::f32());
  fill(again, "random", 1);
  EXPECT_EQ(std::memcmp(f.raw_data(), again.raw_data(), f.nbytes()), 0);  // the seed decides
  fill(f, "ones", 1);
  EXPECT_EQ(f.data<float>()[63], 1.0f);

  NDArray ids = NDArray::empty({64}, DataType::i64());
  fill(ids, "random", 2);
  for (int64_t i = 0; i < ids.numel(); ++i) {
    EXPECT_GE(ids.data<int64_t>()[i], 0);
    EXPECT_LE(ids.data<int64_t>()[i], 9);
  }
  NDArray mask = NDArray::empty({64}, DataType::boolean());
  fill(mask, "random", 3);
  for (int64_t i = 0; i < mask.numel(); ++i) EXPECT_LE(mask.data<uint8_t>()[i], 1);
  fill(mask, "zeros", 3);
  EXPECT_EQ(mask.data<uint8_t>()[0], 0);

  NDArray half = NDArray::empty({4}, DataType::f16());
  testing::expect_error([&] { fill(half, "random", 4); }, {"cannot fill float16"});
}

}  // namespace
}  // namespace tessel::runtime
