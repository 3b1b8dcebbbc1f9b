#include <gtest/gtest.h>

#include <cmath>

#include "tests/reference/ref_test_util.h"

namespace tessel::reference {
namespace {

using namespace testing;  // NOLINT
const DataType kF32 = DataType::f32(), kI64 = DataType::i64(), kBool = DataType::boolean();

TEST(ElementwiseRefTest, AddBroadcasts) {
  TensorData out = eval1("Add", {f32({2, 1}, {10, 20}), f32({3}, {1, 2, 3})});
  expect_tensor(out, kF32, {2, 3}, {11, 12, 13, 21, 22, 23});
}

TEST(ElementwiseRefTest, IntegerDivisionTruncatesAndModFollowsDivisorSign) {
  expect_tensor(eval1("Div", {i64({4}, {7, -7, 7, -7}), i64({4}, {2, 2, -2, -2})}), kI64, {4},
                {3, -3, -3, 3});
  expect_tensor(eval1("Mod", {i64({4}, {7, -7, 7, -7}), i64({4}, {3, 3, -3, -3})}), kI64, {4},
                {1, 2, -2, -1});
  expect_tensor(eval1("Mod", {i64({2}, {-7, 7}), i64({2}, {3, -3})}, {{"fmod", int64_t{1}}}), kI64,
                {2}, {-1, 1});
  expect_tensor(eval1("Mod", {f32({2}, {-7.5, 7.5}), f32({1}, {2})}, {{"fmod", int64_t{1}}}), kF32,
                {2}, {-1.5, 1.5});
  expect_error([] { eval1("Div", {i64({1}, {1}), i64({1}, {0})}); }, {"division by zero"});
}

TEST(ElementwiseRefTest, IntegerMathIsExact) {
  // 2^62 + 1 does not fit a double; int64 arithmetic keeps it.
  TensorData big = make_tensor(kI64, {1}, {0});
  big.data<int64_t>()[0] = (int64_t{1} << 62) + 1;
  TensorData sum = eval1("Add", {big, i64({1}, {1})});
  EXPECT_EQ(sum.data<int64_t>()[0], (int64_t{1} << 62) + 2);
  expect_tensor(eval1("Pow", {i64({3}, {3, -2, 5}), i64({3}, {4, 3, 0})}), kI64, {3}, {81, -8, 1});
  expect_tensor(eval1("Pow", {f32({2}, {4, 2}), i64({2}, {-1, 3})}), kF32, {2}, {0.25, 8});
}

TEST(ElementwiseRefTest, ActivationsMatchTheirFormulas) {
  TensorData x = f32({4}, {-2, -0.5, 0.5, 2});
  auto f = [&](const char* op, std::map<std::string, graph::Attr> attrs, double (*ref)(double)) {
    std::vector<double> want;
    for (double v : {-2.0, -0.5, 0.5, 2.0}) want.push_back(ref(v));
    SCOPED_TRACE(op);
    expect_tensor(eval1(op, {x}, std::move(attrs)), kF32, {4}, want, 1e-6);
  };
  f("LeakyRelu", {{"alpha", 0.1}}, [](double v) { return v < 0 ? 0.1 * v : v; });
  f("Elu", {}, [](double v) { return v < 0 ? std::exp(v) - 1 : v; });
  f("Selu", {}, [](double v) {
    return 1.0507009873554805 * (v > 0 ? v : 1.6732632423543772 * (std::exp(v) - 1));
  });
  f("HardSigmoid", {}, [](double v) { return std::max(0.0, std::min(1.0, 0.2 * v + 0.5)); });
  f("HardSwish", {}, [](double v) { return v * std::max(0.0, std::min(1.0, v / 6 + 0.5)); });
  f("Sigmoid", {}, [](double v) { return 1 / (1 + std::exp(-v)); });
  f("Softplus", {}, [](double v) { return std::log(1 + std::exp(v)); });
  f("Softsign", {}, [](double v) { return v / (1 + std::abs(v)); });
  f("Celu", {{"alpha", 2.0}}, [](double v) { return v > 0 ? v : 2 * (std::exp(v / 2) - 1); });
  f("ThresholdedRelu", {{"alpha", 1.0}}, [](double v) { return v > 1 ? v : 0.0; });
  f("Shrink", {{"bias", 0.5}, {"lambd", 1.0}}, [](double v) {
    return v < -1 ? v + 0.5 : v > 1 ? v - 0.5 : 0.0;
  });
  f("Erf", {}, [](double v) { return std::erf(v); });
  f("Atan", {}, [](double v) { return std::atan(v); });
}

TEST(ElementwiseRefTest, RoundIsHalfToEvenAndSignWorksOnInts) {
  expect_tensor(eval1("Round", {f32({5}, {0.5, 1.5, 2.5, -0.5, -1.7})}), kF32, {5},
                {0, 2, 2, -0.0, -2});
  expect_tensor(eval1("Sign", {i64({3}, {-5, 0, 9})}), kI64, {3}, {-1, 0, 1});
  expect_tensor(eval1("Relu", {i64({2}, {-5, 9})}), kI64, {2}, {0, 9});
  expect_tensor(eval1("Abs", {make_tensor(DataType::i8(), {2}, {-3, 4})}), DataType::i8(), {2},
                {3, 4});
}

TEST(ElementwiseRefTest, ClipBoundsFromInputs) {
  TensorData x = f32({4}, {-3, -1, 1, 3});
  expect_tensor(eval1("Clip", {x, f32({}, {-2}), f32({}, {2})}), kF32, {4}, {-2, -1, 1, 2});
  expect_tensor(eval1("Clip", {x, TensorData(), f32({}, {0})}), kF32, {4}, {-3, -1, 0, 0});
  expect_tensor(eval1("Clip", {x, f32({}, {-1.5})}), kF32, {4}, {-1.5, -1, 1, 3});
  expect_tensor(eval1("Clip", {x}), kF32, {4}, {-3, -1, 1, 3});
  TensorData xi = make_tensor(DataType::i8(), {3}, {-100, 5, 100});
  expect_tensor(eval1("Clip", {xi, make_tensor(DataType::i8(), {}, {-10})}), DataType::i8(), {3},
                {-10, 5, 100});
}

TEST(ElementwiseRefTest, ComparisonsLogicAndWhere) {
  expect_tensor(eval1("Less", {f32({3}, {1, 2, 3}), f32({1}, {2})}), kBool, {3}, {1, 0, 0});
  expect_tensor(eval1("GreaterOrEqual", {i64({3}, {1, 2, 3}), i64({1}, {2})}), kBool, {3},
                {0, 1, 1});
  TensorData a = make_tensor(kBool, {4}, {0, 0, 1, 1}), b = make_tensor(kBool, {4}, {0, 1, 0, 1});
  expect_tensor(eval1("Xor", {a, b}), kBool, {4}, {0, 1, 1, 0});
  expect_tensor(eval1("And", {a, b}), kBool, {4}, {0, 0, 0, 1});
  expect_tensor(eval1("Not", {a}), kBool, {4}, {1, 1, 0, 0});
  TensorData cond = make_tensor(kBool, {2, 1}, {1, 0});
  expect_tensor(eval1("Where", {cond, f32({2}, {1, 2}), f32({1}, {9})}), kF32, {2, 2},
                {1, 2, 9, 9});
  expect_tensor(
      eval1("IsInf", {f32({3}, {INFINITY, -INFINITY, 1})}, {{"detect_negative", int64_t{0}}}),
      kBool, {3}, {1, 0, 0});
  expect_tensor(eval1("IsNaN", {f32({2}, {NAN, 1})}), kBool, {2}, {1, 0});
}

TEST(ElementwiseRefTest, VariadicOps) {
  TensorData a = f32({2}, {1, 5}), b = f32({1}, {3}), c = f32({2, 1}, {0, 10});
  expect_tensor(eval1("Max", {a, b, c}), kF32, {2, 2}, {3, 5, 10, 10});
  expect_tensor(eval1("Min", {a, b}), kF32, {2}, {1, 3});
  expect_tensor(eval1("Sum", {a, b, c}), kF32, {2, 2}, {4, 8, 14, 18});
  expect_tensor(eval1("Mean", {a, b}), kF32, {2}, {2, 4});
  expect_tensor(eval1("Sum", {a}), kF32, {2}, {1, 5});
}

TEST(ElementwiseRefTest, CastAndCastLike) {
  TensorData x = f32({4}, {1.7, -1.7, 300, 0});
  expect_tensor(eval1("Cast", {x}, {{"to", int64_t{3}}}), DataType::i8(), {4}, {1, -1, 44, 0});
  expect_tensor(eval1("Cast", {x}, {{"to", int64_t{9}}}), kBool, {4}, {1, 1, 1, 0});
  TensorData h = eval1("Cast", {f32({2}, {0.1, 70000})}, {{"to", int64_t{10}}});
  EXPECT_EQ(h.data<uint16_t>()[0], 0x2E66);
  EXPECT_EQ(h.data<uint16_t>()[1], 0x7C00);
  expect_tensor(eval1("CastLike", {h, make_tensor(DataType::f64(), {}, {0})}), DataType::f64(), {2},
                {0.0999755859375, INFINITY});
}

TEST(ElementwiseRefTest, CastToAndFromBfloat16) {
  const double tie = 1.0 + 3 * std::ldexp(1.0, -8);
  TensorData b = eval1("Cast", {f32({7}, {1.0, -2.5, 3.14159, 1e-40, tie, INFINITY, NAN})},
                       {{"to", int64_t{16}}});
  ASSERT_EQ(b.dtype(), DataType::bf16());
  EXPECT_EQ(std::vector<uint16_t>(b.data<uint16_t>(), b.data<uint16_t>() + 7),
            (std::vector<uint16_t>{0x3F80, 0xC020, 0x4049, 0x0001, 0x3F81, 0x7F80, 0x7FC0}));
  expect_tensor(
      eval1("Cast", {b}, {{"to", int64_t{1}}}), kF32, {7},
      {1.0, -2.5, 3.140625, std::ldexp(1.0, -133), 1.0 + std::ldexp(1.0, -7), INFINITY, NAN}, 0);
  TensorData small = eval1("Cast", {f32({3}, {1.0, -2.5, 3.14159})}, {{"to", int64_t{16}}});
  expect_tensor(eval1("CastLike", {small, make_tensor(DataType::i32(), {}, {0})}), DataType::i32(),
                {3}, {1, -2, 3});
  TensorData from_int = eval1("CastLike", {make_tensor(DataType::i64(), {2}, {-3, 257}), b});
  EXPECT_EQ(from_int.dtype(), DataType::bf16());
  EXPECT_EQ(from_int.data<uint16_t>()[0], 0xC040);
  EXPECT_EQ(from_int.data<uint16_t>()[1], 0x4380);  // 257 truncates to 256
}

TEST(ElementwiseRefTest, BitShiftIsLogical) {
  TensorData x = make_tensor(DataType::u8(), {3}, {16, 255, 1});
  TensorData s = make_tensor(DataType::u8(), {3}, {1, 4, 7});
  expect_tensor(eval1("BitShift", {x, s}, {{"direction", std::string("RIGHT")}}), DataType::u8(),
                {3}, {8, 15, 0});
  expect_tensor(eval1("BitShift", {x, s}, {{"direction", std::string("LEFT")}}), DataType::u8(),
                {3}, {32, 240, 128});
}

TEST(ElementwiseRefTest, PReluAndDropout) {
  expect_tensor(eval1("PRelu", {f32({2, 2}, {-1, 1, -2, 2}), f32({2}, {0.5, 0.25})}), kF32, {2, 2},
                {-0.5, 1, -1, 2});
  auto out = eval("Dropout", {f32({2}, {1, 2}), f32({}, {0.3})}, {}, 2);
  expect_tensor(out[0], kF32, {2}, {1, 2});
  expect_tensor(out[1], kBool, {2}, {1, 1});
  expect_error(
      [] {
        eval("Dropout", {f32({2}, {1, 2}), f32({}, {0.3}), make_tensor(kBool, {}, {1})}, {}, 2);
      },
      {"training-mode"});
}

}  // namespace
}  // namespace tessel::reference
