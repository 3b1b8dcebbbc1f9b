#include "topi/broadcast.h"

#include <gtest/gtest.h>

#include "codegen/build.h"
#include "ir/error.h"
#include "tests/common/expect_error.h"
#include "tests/common/ndarray.h"

namespace tessel::topi {
namespace {

using tessel::testing::random_array;

TEST(BroadcastTest, BinaryBroadcastsLikeNumpyUnderTheDefaultSchedule) {
  // [4, 1, 5] + [3, 1] -> [4, 3, 5], then a unary op; the default schedule vectorizes.
  auto a = te::placeholder({4, 1, 5}, DataType::f32(), "a");
  auto b = te::placeholder({3, 1}, DataType::f32(), "b");
  auto sum = binary(a, b, [](PrimExpr x, PrimExpr y) { return x + y; }, "sum");
  auto out = unary(sum, [](PrimExpr x) { return max(x, make_zero(x.dtype())); }, "relu");
  te::Schedule s = te::create_schedule({out});
  s[sum].compute_inline();
  schedule_injective(s, out, 8);
  runtime::Module m = build(s, {a, b, out}, Target::parse("llvm -mcpu=native"), "f");
  auto x = random_array({4, 1, 5}, 1, -2, 2), y = random_array({3, 1}, 2, -2, 2);
  auto z = runtime::NDArray::empty({4, 3, 5}, DataType::f32());
  m.get_function("f")(x, y, z);
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 5; ++k) {
        float want = std::max(0.0f, x.data<float>()[i * 5 + k] + y.data<float>()[j]);
        ASSERT_FLOAT_EQ(z.data<float>()[(i * 3 + j) * 5 + k], want);
      }
}

TEST(BroadcastTest, MismatchedDimsAreAnError) {
  auto a = te::placeholder({4, 3}, DataType::f32(), "a");
  auto b = te::placeholder({4, 2}, DataType::f32(), "b");
  tessel::testing::expect_error(
      [&] { binary(a, b, [](PrimExpr x, PrimExpr y) { return x + y; }, "add7"); },
      {"add7: dims 3 and 2 do not broadcast"});
}

}  // namespace
}  // namespace tessel::topi
