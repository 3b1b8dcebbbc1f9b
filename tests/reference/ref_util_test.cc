#include "reference/ref_util.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>

namespace tessel::reference {
namespace {

TEST(RefUtilTest, HalfConversionRoundsToNearestEven) {
  EXPECT_EQ(float_to_half(1.0f), 0x3C00);
  EXPECT_EQ(float_to_half(-2.0f), 0xC000);
  EXPECT_EQ(float_to_half(65504.0f), 0x7BFF);
  EXPECT_EQ(float_to_half(65520.0f), 0x7C00);  // rounds up to infinity
  EXPECT_EQ(float_to_half(0.1f), 0x2E66);
  EXPECT_EQ(float_to_half(std::ldexp(1.0f, -24)), 0x0001);         // smallest subnormal
  EXPECT_EQ(float_to_half(std::ldexp(1.0f, -26)), 0x0000);         // below half of it
  EXPECT_EQ(float_to_half(1.0f + std::ldexp(1.0f, -11)), 0x3C00);  // tie: to even
  EXPECT_EQ(float_to_half(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3C02);
  for (uint16_t h : {0x3C00, 0x0001, 0x03FF, 0x7BFF, 0xC000, 0x7C00})
    EXPECT_EQ(float_to_half(half_to_float(h)), h);
  EXPECT_TRUE(std::isnan(half_to_float(0x7E00)));
  EXPECT_EQ(half_to_float(0x0001), std::ldexp(1.0f, -24));
}

TEST(RefUtilTest, BfloatConversionTruncatesAndKeepsNaN) {
  EXPECT_EQ(float_to_bfloat(1.0f), 0x3F80);
  EXPECT_EQ(float_to_bfloat(-2.5f), 0xC020);
  EXPECT_EQ(float_to_bfloat(3.14159f), 0x4049);
  EXPECT_EQ(float_to_bfloat(1e-40f), 0x0001);  // a float32 subnormal keeps its high bits
  EXPECT_EQ(float_to_bfloat(1.0f + 3 * std::ldexp(1.0f, -9)),
            0x3F80);  // above the half: still truncated
  EXPECT_EQ(float_to_bfloat(1.0f + 3 * std::ldexp(1.0f, -8)),
            0x3F81);  // a tie: truncated, not to even
  EXPECT_EQ(float_to_bfloat(INFINITY), 0x7F80);
  EXPECT_EQ(float_to_bfloat(-INFINITY), 0xFF80);
  EXPECT_EQ(float_to_bfloat(NAN), 0x7FC0);
  EXPECT_EQ(float_to_bfloat(std::bit_cast<float>(0x7F800001u)),
            0x7FC0);  // payload only in the low half
  EXPECT_EQ(float_to_bfloat(std::bit_cast<float>(0xFFC00000u)), 0xFFC0);
  EXPECT_EQ(bfloat_to_float(0xC020), -2.5f);
  EXPECT_EQ(bfloat_to_float(0x0001), std::ldexp(1.0f, -133));
  EXPECT_TRUE(std::isnan(bfloat_to_float(0x7FC0)));
  for (uint32_t b = 0; b <= 0xFFFF; ++b) {
    auto bits = static_cast<uint16_t>(b);
    if (!std::isnan(bfloat_to_float(bits))) {
      EXPECT_EQ(float_to_bfloat(bfloat_to_float(bits)), bits) << b;
    }
  }
}

TEST(RefUtilTest, SetConvertsToTheDtype) {
  TensorData t(DataType::i8(), {3});
  set_i(t, 0, 300);   // wraps
  set_f(t, 1, -2.9);  // truncates toward zero
  set_f(t, 2, NAN);   // NaN becomes 0 rather than undefined behavior
  EXPECT_EQ(t.data<int8_t>()[0], 44);
  EXPECT_EQ(t.data<int8_t>()[1], -2);
  EXPECT_EQ(t.data<int8_t>()[2], 0);
  TensorData b(DataType::boolean(), {2});
  set_f(b, 0, 0.5);
  set_i(b, 1, 0);
  EXPECT_EQ(get_i(b, 0), 1);
  EXPECT_EQ(get_i(b, 1), 0);
  TensorData h(DataType::f16(), {1});
  set_f(h, 0, 1.5);
  EXPECT_EQ(h.data<uint16_t>()[0], 0x3E00);
  EXPECT_EQ(get_f(h, 0), 1.5);
  TensorData bf(DataType::bf16(), {2});
  set_f(bf, 0, -2.5);
  set_i(bf, 1, 3);
  EXPECT_EQ(bf.data<uint16_t>()[0], 0xC020);
  EXPECT_EQ(get_f(bf, 1), 3.0);
  // Integer code paths must not read bfloat16 bits as an integer.
  EXPECT_THROW(get_i(bf, 0), Error);
}

TEST(RefUtilTest, BroadcastOffsets) {
  EXPECT_EQ(broadcast_offsets({3, 1}, {2, 3, 2}),
            (std::vector<int64_t>{0, 0, 1, 1, 2, 2, 0, 0, 1, 1, 2, 2}));
  EXPECT_EQ(broadcast_offsets({}, {2}), (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(strides_of({2, 3, 4}), (std::vector<int64_t>{12, 4, 1}));
}

TEST(RefUtilTest, GatherFromMapsIndices) {
  TensorData src(DataType::i32(), {2, 2});
  for (int i = 0; i < 4; ++i) src.data<int32_t>()[i] = i;
  TensorData t =
      gather_from(src, {2, 2}, [](const std::vector<int64_t>& idx) { return idx[1] * 2 + idx[0]; });
  EXPECT_EQ(std::vector<int32_t>(t.data<int32_t>(), t.data<int32_t>() + 4),
            (std::vector<int32_t>{0, 2, 1, 3}));
}

}  // namespace
}  // namespace tessel::reference
