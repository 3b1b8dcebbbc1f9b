// Codegen of the lazy if_then_else: a branch for a scalar condition, masked loads for a vector
// one, and no integer division in lanes that do not take the value.
#include <gtest/gtest.h>

#include <cmath>

#include "tests/codegen/codegen_test_util.h"
#include "tests/common/text.h"

namespace tessel {
namespace {

using namespace tessel::testing;

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The text of the first basic block whose label starts with `label`, up to the blank line after it.
std::string block(const std::string& ll, const std::string& label) {
  size_t begin = ll.find("\n" + label);
  if (begin == std::string::npos) return "";
  return ll.substr(begin, ll.find("\n\n", begin + 1) - begin);
}

// C[0] = if_then_else(F[0] != 0, A[F[1]], -1): the load waits for the flag.
TEST(IfThenElseCodegenTest, ScalarConditionBranchesAroundTheLoad) {
  Buffer a = Buffer::make("A", DataType::f32(), {16});
  Buffer flags = Buffer::make("F", DataType::i32(), {2});
  Buffer c = Buffer::make("C", DataType::f32(), {1});
  PrimExpr value = if_then_else(load(flags, 0) != 0, load(a, load(flags, 1)), -1.0f);
  runtime::Module m = build(make_func("guarded", {a, flags, c}, store(c, value, 0)), host_target());
  // The one float load (from A) is in the block the condition branches to.
  std::string ll = m.source("ll");
  EXPECT_EQ(count_occurrences(ll, "load float"), 1u) << ll;
  EXPECT_TRUE(contains(block(ll, "ite.then"), "load float")) << ll;

  auto in = float_array({16}, [](int64_t k) { return float(k) + 0.5f; });
  auto out = float_array({1}, [](int64_t) { return 0.0f; });
  // A wild index is never used while the flag is off.
  auto off =
      make_array<int32_t>({2}, DataType::i32(), [](int64_t k) { return k == 0 ? 0 : 1 << 30; });
  m.get_function("guarded")(in, off, out);
  EXPECT_EQ(out.data<float>()[0], -1.0f);
  auto on = make_array<int32_t>({2}, DataType::i32(), [](int64_t k) { return k == 0 ? 1 : 7; });
  m.get_function("guarded")(in, on, out);
  EXPECT_EQ(out.data<float>()[0], 7.5f);
}

// C[lanes] = if_then_else(F[0] != 0, A[F[1] + lanes], -1): a scalar condition over vector values
// (the vectorizer keeps a condition that does not depend on the loop var) is still a branch.
TEST(IfThenElseCodegenTest, ScalarConditionOverVectorValuesBranches) {
  Buffer a = Buffer::make("A", DataType::f32(), {16});
  Buffer flags = Buffer::make("F", DataType::i32(), {2});
  Buffer c = Buffer::make("C", DataType::f32(), {8});
  PrimExpr value = if_then_else(load(flags, 0) != 0, load(a, ramp(load(flags, 1), 8)), -1.0f);
  runtime::Module m =
      build(make_func("vector_values", {a, flags, c}, store(c, value, ramp(0, 8))), host_target());
  EXPECT_TRUE(contains(block(m.source("ll"), "ite.then"), "x float>")) << m.source("ll");
  auto in = float_array({16}, [](int64_t k) { return float(k); });
  auto out = float_array({8}, [](int64_t) { return 0.0f; });
  auto off =
      make_array<int32_t>({2}, DataType::i32(), [](int64_t k) { return k == 0 ? 0 : 1 << 30; });
  m.get_function("vector_values")(in, off, out);
  for (int k = 0; k < 8; ++k) EXPECT_EQ(out.data<float>()[k], -1.0f) << k;
  auto on = make_array<int32_t>({2}, DataType::i32(), [](int64_t k) { return k == 0 ? 1 : 8; });
  m.get_function("vector_values")(in, on, out);
  for (int k = 0; k < 8; ++k) EXPECT_EQ(out.data<float>()[k], float(k + 8)) << k;
}

// Values with nothing to guard (no load, no division) become a plain select.
TEST(IfThenElseCodegenTest, ValuesWithoutLoadsNeedNoBranch) {
  Buffer c = Buffer::make("C", DataType::i32(), {8});
  Var i("i");
  Stmt body = loop(i, 8, store(c, if_then_else(i < 3, i * 10, i + 1), i));
  runtime::Module m = build(make_func("cheap", {c}, body), host_target());
  auto out = make_array<int32_t>({8}, DataType::i32(), [](int64_t) { return 0; });
  m.get_function("cheap")(out);
  for (int k = 0; k < 8; ++k) EXPECT_EQ(out.data<int32_t>()[k], k < 3 ? k * 10 : k + 1) << k;
}

// P[8*io + lanes] = if_then_else(1 <= lanes < 17, A[8*io - 1 + lanes], 0): a masked vector load.
TEST(IfThenElseCodegenTest, VectorConditionMasksTheLoad) {
  Buffer a = Buffer::make("A", DataType::f32(), {16});
  Buffer p = Buffer::make("P", DataType::f32(), {24});
  Var io("io");
  PrimExpr at = ramp(io * 8, 8);
  PrimExpr inside = at >= BroadcastNode::make(1, 8) && at < BroadcastNode::make(17, 8);
  PrimExpr value = if_then_else(inside, load(a, ramp(io * 8 - 1, 8)), 0.0f);
  runtime::Module m =
      build(make_func("pad", {a, p}, loop(io, 3, store(p, value, at))), host_target());
  std::string ll = m.source("ll");
  EXPECT_TRUE(contains(ll, "llvm.masked.load")) << ll;

  auto in = float_array({16}, [](int64_t k) { return float(k) + 1.0f; });
  auto out = float_array({24}, [](int64_t) { return -1.0f; });
  m.get_function("pad")(in, out);
  for (int k = 0; k < 24; ++k)
    EXPECT_EQ(out.data<float>()[k], k >= 1 && k < 17 ? float(k) : 0.0f) << k;
}

// A strided (gathered) guarded load uses a masked gather.
TEST(IfThenElseCodegenTest, VectorConditionMasksAGather) {
  Buffer a = Buffer::make("A", DataType::f32(), {16});
  Buffer c = Buffer::make("C", DataType::f32(), {8});
  PrimExpr lanes = ramp(0, 8);
  // Lanes 5.. would read A[16], A[19], A[22].
  PrimExpr value = if_then_else(lanes < BroadcastNode::make(5, 8), load(a, ramp(1, 8, 3)), 0.0f);
  runtime::Module m = build(make_func("gather", {a, c}, store(c, value, lanes)), host_target());
  EXPECT_TRUE(contains(m.source("ll"), "llvm.masked.gather")) << m.source("ll");
  auto in = float_array({16}, [](int64_t k) { return float(k); });
  auto out = float_array({8}, [](int64_t) { return -1.0f; });
  m.get_function("gather")(in, out);
  for (int k = 0; k < 8; ++k) EXPECT_EQ(out.data<float>()[k], k < 5 ? float(1 + 3 * k) : 0.0f) << k;
}

// C[lanes] = if_then_else(lanes < F[1], A[lanes] + A[F[0]], 0): the scalar load A[F[0]] in a
// vector value is read only when some lane takes that value.
TEST(IfThenElseCodegenTest, AScalarLoadUnderAVectorConditionWaitsForAnyLane) {
  Buffer a = Buffer::make("A", DataType::f32(), {8});
  Buffer flags = Buffer::make("F", DataType::i32(), {2});
  Buffer c = Buffer::make("C", DataType::f32(), {8});
  PrimExpr lanes = ramp(0, 8);
  PrimExpr value =
      if_then_else(lanes < BroadcastNode::make(load(flags, 1), 8),
                   load(a, lanes) + BroadcastNode::make(load(a, load(flags, 0)), 8), 0.0f);
  runtime::Module m =
      build(make_func("any_lane", {a, flags, c}, store(c, value, lanes)), host_target());
  auto in = float_array({8}, [](int64_t k) { return float(k); });
  auto out = float_array({8}, [](int64_t) { return -1.0f; });
  auto none =
      make_array<int32_t>({2}, DataType::i32(), [](int64_t k) { return k == 0 ? 1 << 30 : 0; });
  m.get_function("any_lane")(in, none, out);
  for (int k = 0; k < 8; ++k) EXPECT_EQ(out.data<float>()[k], 0.0f) << k;
  auto some = make_array<int32_t>({2}, DataType::i32(), [](int64_t k) { return k == 0 ? 3 : 5; });
  m.get_function("any_lane")(in, some, out);
  for (int k = 0; k < 8; ++k) EXPECT_EQ(out.data<float>()[k], k < 5 ? float(k + 3) : 0.0f) << k;
}

// C[lanes] = if_then_else(D[lanes] != 0, 100 // D[lanes], 7): lanes with a zero divisor do not
// divide (an unguarded vector division by zero would raise SIGFPE).
TEST(IfThenElseCodegenTest, MaskedOffLanesDoNotDivide) {
  Buffer d = Buffer::make("D", DataType::i32(), {16});
  Buffer c = Buffer::make("C", DataType::i32(), {16});
  PrimExpr lanes = ramp(0, 16);
  PrimExpr divisor = load(d, lanes);
  PrimExpr value = if_then_else(divisor != BroadcastNode::make(0, 16),
                                floordiv(BroadcastNode::make(100, 16), divisor), 7);
  runtime::Module m = build(make_func("divide", {d, c}, store(c, value, lanes)), host_target());
  auto in = make_array<int32_t>({16}, DataType::i32(),
                                [](int64_t k) { return k % 3 == 0 ? 0 : int32_t(k) - 8; });
  auto out = make_array<int32_t>({16}, DataType::i32(), [](int64_t) { return 0; });
  m.get_function("divide")(in, out);
  for (int k = 0; k < 16; ++k) {
    int32_t x = in.data<int32_t>()[k];
    int32_t want = x == 0 ? 7 : static_cast<int32_t>(std::floor(100.0 / x));
    EXPECT_EQ(out.data<int32_t>()[k], want) << k;
  }
}

}  // namespace
}  // namespace tessel
