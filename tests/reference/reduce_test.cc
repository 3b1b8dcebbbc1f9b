#include <gtest/gtest.h>

#include <cmath>

#include "tests/reference/ref_test_util.h"

namespace tessel::reference {
namespace {

using namespace testing;  // NOLINT
using Shape = std::vector<int64_t>;
const DataType kF32 = DataType::f32(), kI64 = DataType::i64();

// x[i][j][k] = i*6 + j*2 + k for a 2x3x2 tensor.
TensorData iota_2x3x2() { return f32({2, 3, 2}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}); }

TEST(ReduceRefTest, ReduceSumAxesInput) {
  expect_tensor(eval1("ReduceSum", {iota_2x3x2(), i64({1}, {1})}), kF32, {2, 1, 2}, {6, 9, 24, 27});
  expect_tensor(eval1("ReduceSum", {iota_2x3x2(), i64({2}, {0, -1})}, {{"keepdims", int64_t{0}}}),
                kF32, {3}, {14, 22, 30});
  expect_tensor(eval1("ReduceSum", {iota_2x3x2()}, {{"keepdims", int64_t{0}}}), kF32, {}, {66});
  expect_tensor(eval1("ReduceSum", {iota_2x3x2(), i64({1}, {2})}), kF32, {2, 3, 1},
                {1, 5, 9, 13, 17, 21});
  TensorData same =
      eval1("ReduceSum", {iota_2x3x2(), i64({0}, {})}, {{"noop_with_empty_axes", int64_t{1}}});
  expect_tensor(same, kF32, {2, 3, 2}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
}

TEST(ReduceRefTest, OtherReductions) {
  TensorData x = f32({2, 2}, {1, -2, 3, 4});
  Shape axis1{1};
  auto r = [&](const char* op) {
    return eval1(op, {x}, {{"axes", axis1}, {"keepdims", int64_t{0}}});
  };
  expect_tensor(r("ReduceMean"), kF32, {2}, {-0.5, 3.5});
  expect_tensor(r("ReduceMax"), kF32, {2}, {1, 4});
  expect_tensor(r("ReduceMin"), kF32, {2}, {-2, 3});
  expect_tensor(r("ReduceProd"), kF32, {2}, {-2, 12});
  expect_tensor(r("ReduceL1"), kF32, {2}, {3, 7});
  expect_tensor(r("ReduceL2"), kF32, {2}, {std::sqrt(5.0), 5});
  expect_tensor(r("ReduceSumSquare"), kF32, {2}, {5, 25});
  expect_tensor(eval1("ReduceLogSum", {f32({2}, {1, 2})}), kF32, {1}, {std::log(3.0)});
  expect_tensor(eval1("ReduceLogSumExp", {f32({2}, {1, 2})}), kF32, {1},
                {std::log(std::exp(1.0) + std::exp(2.0))});
}

TEST(ReduceRefTest, IntegerReductionsAreExact) {
  TensorData x = i64({3}, {7, -2, 4});
  expect_tensor(eval1("ReduceMean", {x}), kI64, {1}, {3});  // 9 / 3
  expect_tensor(eval1("ReduceProd", {x}), kI64, {1}, {-56});
  expect_tensor(eval1("ReduceMax", {x}), kI64, {1}, {7});
}

TEST(ReduceRefTest, ArgMaxArgMinWithTies) {
  TensorData x = f32({2, 3}, {1, 5, 5, 7, 0, 0});
  expect_tensor(eval1("ArgMax", {x}, {{"axis", int64_t{1}}}), kI64, {2, 1}, {1, 0});
  expect_tensor(eval1("ArgMax", {x}, {{"axis", int64_t{1}}, {"select_last_index", int64_t{1}}}),
                kI64, {2, 1}, {2, 0});
  expect_tensor(eval1("ArgMin", {x}, {{"axis", int64_t{-1}}, {"keepdims", int64_t{0}}}), kI64, {2},
                {0, 1});
  expect_tensor(eval1("ArgMin", {x}, {{"keepdims", int64_t{0}}}), kI64, {3}, {0, 1, 1});
}

TEST(ReduceRefTest, CumSumModes) {
  TensorData x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  TensorData axis = make_tensor(DataType::i32(), {}, {1});
  expect_tensor(eval1("CumSum", {x, axis}), kF32, {2, 3}, {1, 3, 6, 4, 9, 15});
  expect_tensor(eval1("CumSum", {x, axis}, {{"exclusive", int64_t{1}}}), kF32, {2, 3},
                {0, 1, 3, 0, 4, 9});
  expect_tensor(eval1("CumSum", {x, axis}, {{"reverse", int64_t{1}}}), kF32, {2, 3},
                {6, 5, 3, 15, 11, 6});
  expect_tensor(eval1("CumSum", {x, axis}, {{"reverse", int64_t{1}}, {"exclusive", int64_t{1}}}),
                kF32, {2, 3}, {5, 3, 0, 11, 6, 0});
  expect_tensor(eval1("CumSum", {i64({3}, {1, 2, 3}), i64({}, {-1})}), kI64, {3}, {1, 3, 6});
}

TEST(ReduceRefTest, TopKLargestSmallestAndTies) {
  TensorData x = f32({2, 4}, {3, 1, 3, 2, 0, 9, 8, 9});
  auto out = eval("TopK", {x, i64({1}, {2})}, {}, 2);
  expect_tensor(out[0], kF32, {2, 2}, {3, 3, 9, 9});
  expect_tensor(out[1], kI64, {2, 2}, {0, 2, 1, 3});  // equal values: lower index first
  out = eval("TopK", {x, i64({1}, {3})}, {{"largest", int64_t{0}}}, 2);
  expect_tensor(out[0], kF32, {2, 3}, {1, 2, 3, 0, 8, 9});
  expect_tensor(out[1], kI64, {2, 3}, {1, 3, 0, 0, 2, 1});
  out = eval("TopK", {x, i64({1}, {1})}, {{"axis", int64_t{0}}}, 2);
  expect_tensor(out[0], kF32, {1, 4}, {3, 9, 8, 9});
  expect_tensor(out[1], kI64, {1, 4}, {0, 1, 1, 1});
}

}  // namespace
}  // namespace tessel::reference
