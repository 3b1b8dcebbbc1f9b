// Elementwise graph ops lowered through topi (topi/compute_elementwise.cc), compiled and checked
// against the reference executor.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "lowering_test_util.h"
#include "te/printer.h"

namespace tessel::topi {
namespace {

using namespace testing;  // NOLINT
using graph::Attr;

TEST(ComputeElementwiseTest, FloatMathMatchesTheReference) {
  OpGraph m;
  auto x = m.input("x", random_data(DataType::f32(), {2, 3, 7}, 1, -0.95, 0.95));
  auto wide = m.input("wide", random_data(DataType::f32(), {2, 3, 7}, 2, -6, 6));
  auto ge1 = m.input("ge1", random_data(DataType::f32(), {42}, 3, 1, 40));
  for (const char* op : {"Asin", "Acos", "Atanh", "Atan", "Tan"})
    m.op(std::string(op) + "_x", op, {x});
  for (const char* op : {"Atan", "Sinh", "Cosh", "Asinh", "Celu", "Tan"})
    m.op(std::string(op) + "_wide", op, {wide});
  m.op("acosh", "Acosh", {ge1});
  m.op("atan_big", "Atan", {ge1});
  m.op("celu_alpha", "Celu", {wide}, {{"alpha", Attr(0.5)}});
  m.op("thresholded_relu", "ThresholdedRelu", {wide}, {{"alpha", Attr(0.7)}});
  m.op("shrink", "Shrink", {wide}, {{"bias", Attr(1.5)}, {"lambd", Attr(2.0)}});
  m.op("shrink_default", "Shrink", {x});
  m.check();
}

// Softplus past float32's exp range: log(e^x + 1) is x there, not inf (e^x overflows at 88.7).
TEST(ComputeElementwiseTest, SoftplusOfLargeInputsStaysFinite) {
  OpGraph m;
  auto x = m.input(
      "x", make_tensor<double>(DataType::f32(), {2, 4}, {-120, -30, -1, 0, 2.5, 30, 89, 1e30}));
  auto wide = m.input("wide", random_data(DataType::f32(), {4, 16}, 10, -100, 100));
  m.op("softplus_x", "Softplus", {x});
  m.op("softplus_wide", "Softplus", {wide});
  m.check();
}

TEST(ComputeElementwiseTest, NanAndInfTests) {
  OpGraph m;
  const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
  auto x = m.input(
      "x", make_tensor<double>(DataType::f32(), {2, 4}, {inf, -inf, nan, 0, 1, -1e30, 3.5, -inf}));
  m.op("isnan", "IsNaN", {x});
  m.op("isinf", "IsInf", {x});
  m.op("isinf_pos", "IsInf", {x}, {{"detect_negative", Attr(int64_t{0})}});
  m.op("isinf_neg", "IsInf", {x}, {{"detect_positive", Attr(int64_t{0})}});
  m.check();
}

TEST(ComputeElementwiseTest, ComparisonsAndLogicGiveBools) {
  OpGraph m;
  // Few distinct values, so that Equal and the *OrEqual forms see ties.
  auto a = m.input("a", random_data(DataType::f32(), {3, 1, 5}, 4, -2, 2));
  auto b = m.input("b", random_data(DataType::f32(), {4, 5}, 5, -2, 2));
  auto ia = m.input("ia", random_data(DataType::i64(), {3, 4, 5}, 6, -2, 2));
  auto ib = m.input("ib", random_data(DataType::i64(), {5}, 7, -2, 2));
  auto p = m.input("p", random_data(DataType::boolean(), {3, 4, 1}, 8));
  auto q = m.input("q", random_data(DataType::boolean(), {4, 5}, 9));
  for (const char* op : {"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"}) {
    m.op(std::string(op) + "_f32", op, {a, b});
    m.op(std::string(op) + "_i64", op, {ia, ib});
  }
  auto floor_a = m.op("floor_a", "Floor", {a})[0];
  m.op("equal_rounded", "Equal", {floor_a, m.op("floor_b", "Floor", {b})[0]});
  for (const char* op : {"And", "Or", "Xor"}) m.op(op, op, {p, q});
  m.op("not", "Not", {q});
  m.op("equal_bool", "Equal", {p, q});
  m.check();
}

TEST(ComputeElementwiseTest, WhereBroadcastsAllThreeInputs) {
  OpGraph m;
  auto c = m.input("c", random_data(DataType::boolean(), {2, 1, 4}, 10));
  auto x = m.input("x", random_data(DataType::f32(), {3, 1}, 11));
  auto y = m.input("y", random_data(DataType::f32(), {4}, 12));
  auto ix = m.input("ix", random_data(DataType::i64(), {2, 3, 4}, 13, -100, 100));
  auto iy = m.input("iy", random_data(DataType::i64(), {1}, 14, -100, 100));
  m.op("where_f32", "Where", {c, x, y});
  m.op("where_i64", "Where", {c, ix, iy});
  m.check();
}

TEST(ComputeElementwiseTest, CastBetweenFloatIntAndBool) {
  OpGraph m;
  auto x = m.input("x", make_tensor<double>(DataType::f32(), {8},
                                            {-2.7, -0.5, 0, 0.25, 1.5, 3.99, 100.2, -0.0}));
  auto i = m.input("i", make_tensor<int64_t>(DataType::i64(), {6}, {-300, -1, 0, 1, 255, 70000}));
  auto flag = m.input("flag", random_data(DataType::boolean(), {5}, 15));
  auto like = m.input("like", random_data(DataType::i32(), {1}, 16));
  auto to = [](int64_t code) { return std::map<std::string, Attr>{{"to", Attr(code)}}; };
  m.op("f32_to_i32", "Cast", {x}, to(6));
  m.op("f32_to_i64", "Cast", {x}, to(7));
  m.op("f32_to_bool", "Cast", {x}, to(9));
  m.op("f32_to_f64", "Cast", {x}, to(11));
  m.op("i64_to_f32", "Cast", {i}, to(1));
  m.op("i64_to_i32", "Cast", {i}, to(6));
  m.op("i64_to_u8", "Cast", {i}, to(2));  // wraps
  m.op("i64_to_bool", "Cast", {i}, to(9));
  m.op("bool_to_f32", "Cast", {flag}, to(1));
  m.op("bool_to_i64", "Cast", {flag}, to(7));
  m.op("i64_to_i64", "Cast", {i}, to(7));
  m.op("cast_like", "CastLike", {x, like});
  m.check();
}

TensorData bfloat16_of(std::vector<uint16_t> bits) {
  TensorData t(DataType::bf16(), {static_cast<int64_t>(bits.size())});
  std::copy(bits.begin(), bits.end(), t.data<uint16_t>());
  return t;
}

TEST(ComputeElementwiseTest, CastToAndFromBfloat16) {
  OpGraph m;
  const double tie = 1 + 3 * std::ldexp(1.0, -8), above_half = 1 + 3 * std::ldexp(1.0, -9);
  const double inf = std::numeric_limits<double>::infinity(),
               nan = std::numeric_limits<double>::quiet_NaN();
  auto x = m.input(
      "x", make_tensor<double>(DataType::f32(), {10},
                               {1.0, -2.5, 3.14159, 1e-40, tie, above_half, inf, -inf, nan, -0.0}));
  auto d = m.input("d", make_tensor<double>(DataType::f64(), {4}, {1.0 + 1e-12, -3.3, 1e300, nan}));
  auto i = m.input("i", ints({-300, 0, 257, 70001, 16777217}));
  // 1, -2.5, the smallest subnormal, inf, -inf, NaN, 3.140625, -0, 2^23, -2^31.
  auto b = m.input("b", bfloat16_of({0x3F80, 0xC020, 0x0001, 0x7F80, 0xFF80, 0x7FC0, 0x4049, 0x8000,
                                     0x4B00, 0xCF00}));
  auto finite = m.input("finite", bfloat16_of({0x3F80, 0xC020, 0x4049, 0x8000, 0x4B00, 0xC2FF}));
  // Wide enough for the vectorized loop and its tail.
  auto bulk = m.input("bulk", random_data(DataType::f32(), {3, 41}, 17, -1e4, 1e4));
  auto to = [](int64_t code) { return std::map<std::string, Attr>{{"to", Attr(code)}}; };
  m.op("f32_to_bf16", "Cast", {x}, to(16));
  m.op("f64_to_bf16", "Cast", {d}, to(16));
  m.op("i64_to_bf16", "Cast", {i}, to(16));
  m.op("bf16_to_f32", "Cast", {b}, to(1));
  m.op("bf16_to_f64", "Cast", {b}, to(11));
  m.op("bf16_to_bool", "Cast", {b}, to(9));
  m.op("bf16_to_i32", "Cast", {finite}, to(6));
  m.op("bf16_to_i64", "Cast", {finite}, to(7));
  m.op("castlike_to_bf16", "CastLike", {x, b});
  m.op("castlike_from_bf16", "CastLike", {b, x});
  auto bulk_bf16 = m.op("bulk_to_bf16", "Cast", {bulk}, to(16))[0];
  m.op("bulk_round_trip", "Cast", {bulk_bf16}, to(1));
  m.check();
}

TEST(ComputeElementwiseTest, BfloatArithmeticIsAClearError) {
  OpGraph m;
  auto b = m.input("b", bfloat16_of({0x3F80, 0xC020}));
  m.op("sum", "Add", {b, b});
  expect_compile_error(m.b.g, "bfloat16 tensors are supported only by Cast and CastLike");
}

TEST(ComputeElementwiseTest, PowWithIntegerAndMixedOperands) {
  OpGraph m;
  auto base = m.input("base", random_data(DataType::i64(), {3, 4}, 21, -5, 5));
  auto exponent = m.input("exponent", random_data(DataType::i32(), {4}, 22, 0, 6));
  auto fbase = m.input("fbase", random_data(DataType::f32(), {4}, 23, 0.5, 2));
  m.op("int_pow", "Pow", {base, exponent});
  m.op("float_int_pow", "Pow", {fbase, exponent});
  m.check();
}

// Pow by a constant integer exponent in [-2, 4] is multiplies (of 1 / x for a negative one),
// at the IEEE edges too; other constants, and exponents that broadcast the base, stay pow.
TEST(ComputeElementwiseTest, PowByASmallConstantIntegerIsMultiplies) {
  const double inf = std::numeric_limits<double>::infinity();
  auto scalar = [](double v) { return make_tensor<double>(DataType::f32(), {}, {v}); };
  OpGraph m;
  auto x = m.input("x", make_tensor<double>(DataType::f32(), {2, 8},
                                            {0, -0.0, 1, -1, 2.5, -3.25, inf, -inf, std::nan(""),
                                             1e-20, -7, 0.5, 1e10, -1e10, 11, 1.5}));
  for (double e : {0.0, 1.0, 2.0, 3.0, 4.0, -1.0, -2.0, 0.5, 5.0}) {
    m.op(fmt::format("pow_{}", e), "Pow", {x, m.constant(fmt::format("e{}", e), scalar(e))});
  }
  m.op("pow_int_exponent", "Pow",
       {x, m.constant("i3", make_tensor<double>(DataType::i64(), {1}, {3}))});
  m.op("pow_broadcasting", "Pow",
       {x, m.constant("e111", make_tensor<double>(DataType::f32(), {1, 1, 1}, {2}))});
  m.check();

  auto body_of = [&](double e) {
    OpGraph one;
    auto base = one.input("x", random_data(DataType::f32(), {4, 4}, 30));
    one.op("pow", "Pow", {base, one.constant("e", scalar(e))});
    passes::LoweredGroup g = one.lower_only_group(CompileOptions{}.target);
    return te::body_to_string(g.args.back().op().as<te::ComputeOpNode>()->body);
  };
  EXPECT_EQ(body_of(2).find("pow"), std::string::npos) << body_of(2);
  EXPECT_EQ(body_of(-1).find("pow"), std::string::npos) << body_of(-1);
  EXPECT_NE(body_of(0.5).find("pow"), std::string::npos) << body_of(0.5);

  // x^-2 where x * x overflows: a float still (1e-40, subnormal), which the tolerances above take
  // for 0.
  OpGraph big;
  big.op("pow", "Pow",
         {big.input("x", make_tensor<double>(DataType::f32(), {2}, {1e20, -1e20})),
          big.constant("e", scalar(-2))});
  CompiledModel compiled = compile_graph(big.b.g, CompileOptions{});
  compiled.set_input("x", to_ndarray(big.feeds.at("x")));
  compiled.run();
  TensorData got = to_tensor_data(compiled.get_output(0));
  for (int k = 0; k < 2; ++k) EXPECT_NEAR(got.data<float>()[k], 1e-40f, 1e-44f) << k;
}

TEST(ComputeElementwiseTest, IntegerDivModAndFloatFmod) {
  OpGraph m;
  auto a = m.input("a", make_tensor<int64_t>(DataType::i64(), {2, 6},
                                             {-7, -6, -1, 0, 5, 7, 9, -9, 4, -4, 13, -13}));
  auto b = m.input("b", make_tensor<int64_t>(DataType::i64(), {6}, {3, -3, 2, -5, -3, 4}));
  auto a32 = m.input("a32", random_data(DataType::i32(), {4, 6}, 17, -50, 50));
  auto b32 = m.input("b32", make_tensor<int64_t>(DataType::i32(), {6}, {7, -7, 3, -2, 11, -13}));
  auto fa = m.input("fa", random_data(DataType::f32(), {4, 6}, 18, -10, 10));
  auto fb =
      m.input("fb", make_tensor<double>(DataType::f32(), {6}, {1.5, -2.25, 3, -0.7, 4.5, -5}));
  m.op("mod_i64", "Mod", {a, b});
  m.op("fmod_i64", "Mod", {a, b}, {{"fmod", Attr(int64_t{1})}});
  m.op("mod_i32", "Mod", {a32, b32});
  m.op("fmod_i32", "Mod", {a32, b32}, {{"fmod", Attr(int64_t{1})}});
  m.op("fmod_f32", "Mod", {fa, fb}, {{"fmod", Attr(int64_t{1})}});
  m.op("div_i64", "Div", {a, b});
  m.op("div_i32", "Div", {a32, b32});
  m.check();
}

TEST(ComputeElementwiseTest, FloatModWithoutFmodIsAnErrorNamingTheNode) {
  OpGraph m;
  auto fa = m.input("fa", random_data(DataType::f32(), {4}, 19));
  m.op("bad_mod", "Mod", {fa, fa});
  expect_compile_error(m.b.g, "node 'bad_mod' (Mod): fmod must be 1");
}

TEST(ComputeElementwiseTest, BitShiftWrapsPerWidth) {
  OpGraph m;
  auto x8 = m.input("x8", make_tensor<int64_t>(DataType::u8(), {6}, {1, 3, 128, 255, 16, 7}));
  auto s8 = m.input("s8", make_tensor<int64_t>(DataType::u8(), {6}, {0, 1, 1, 7, 4, 9}));
  auto x32 = m.input("x32", random_data(DataType::u32(), {3, 4}, 20, 0, 4000000000.0));
  auto s32 = m.input("s32", random_data(DataType::u32(), {4}, 21, 0, 31));
  auto x64 = m.input("x64", random_data(DataType::u64(), {8}, 22, 0, 9.0e18));
  auto s64 =
      m.input("s64", make_tensor<int64_t>(DataType::i64(), {8}, {0, 1, 13, 31, 32, 63, 62, 5}));
  auto x64u = m.op("s64_as_u64", "Cast", {s64}, {{"to", Attr(int64_t{13})}})[0];
  for (const char* dir : {"LEFT", "RIGHT"}) {
    auto attrs = std::map<std::string, Attr>{{"direction", Attr(std::string(dir))}};
    m.op(std::string("shift8_") + dir, "BitShift", {x8, s8}, attrs);
    m.op(std::string("shift32_") + dir, "BitShift", {x32, s32}, attrs);
    m.op(std::string("shift64_") + dir, "BitShift", {x64, x64u}, attrs);
  }
  m.check();
}

TEST(ComputeElementwiseTest, IntegerShrinkComparesInFloat) {
  OpGraph m;
  auto i = m.input("i", random_data(DataType::i32(), {12}, 23, -5, 5));
  m.op("shrink_i32", "Shrink", {i}, {{"bias", Attr(1.0)}, {"lambd", Attr(1.5)}});
  m.check();
}

TEST(ComputeElementwiseTest, ScalarOperands) {
  OpGraph m;
  auto x = m.input("x", random_data(DataType::f32(), {2, 3}, 24));
  auto s = m.input("s", random_data(DataType::f32(), {}, 25));
  m.op("mul_const", "Mul",
       {x, m.constant("half", make_tensor<double>(DataType::f32(), {}, {0.5}))});
  m.op("add_scalar", "Add", {x, s});
  m.op("neg_scalar", "Neg", {s});
  m.check();
}

}  // namespace
}  // namespace tessel::topi
