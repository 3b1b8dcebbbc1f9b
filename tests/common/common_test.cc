// The shared test helpers fail where they should: every suite's error and numeric checks rely on
// them.
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "tests/common/compare.h"
#include "tests/common/expect_error.h"
#include "tests/common/ndarray.h"
#include "tests/common/random.h"
#include "tests/common/tensor.h"

namespace tessel::testing {
namespace {

TEST(ExpectErrorTest, ChecksTheTypeAndEverySubstring) {
  auto e = expect_error<ScheduleError>([] { throw ScheduleError("brief", "stage 'C': axis 'i'"); },
                                       {"stage 'C'", "axis 'i'"});
  ASSERT_TRUE(e);
  EXPECT_EQ(e->brief(), "brief");
  EXPECT_NONFATAL_FAILURE(expect_error([] {}, {"x"}), "none was thrown");
  EXPECT_NONFATAL_FAILURE(expect_error([] { throw Error("stage 'C'"); }, {"stage 'D'"}),
                          "'stage 'D'' not in: stage 'C'");
  // A different exception type is not swallowed.
  EXPECT_THROW(expect_error<ScheduleError>([] { throw Error("plain"); }), Error);
}

TEST(CompareTest, IsCloseFollowsNumpy) {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
  EXPECT_TRUE(is_close(1.0 + 1e-6, 1.0, {1e-6, 0}));
  EXPECT_TRUE(is_close(100.005, 100.0, {0, 1e-4}));
  EXPECT_FALSE(is_close(100.02, 100.0, {0, 1e-4}));
  EXPECT_TRUE(is_close(nan, nan, {}));
  EXPECT_FALSE(is_close(nan, 1.0, {1, 1}));
  EXPECT_TRUE(is_close(-inf, -inf, {}));
  EXPECT_FALSE(is_close(inf, 1e308, {1, 1}));
}

graph::TensorData big_ints(int64_t low) {
  return make_tensor<int64_t>(DataType::i64(), {2}, {(int64_t{1} << 60) + low, 3});
}

TEST(CompareTest, TensorsMatchDtypeShapeAndIntegersExactly) {
  expect_all_close(big_ints(0), big_ints(0), {});
  // 2^60 and 2^60 + 1 are the same double: integers are compared as integers.
  EXPECT_NONFATAL_FAILURE(expect_all_close(big_ints(1), big_ints(0), {1, 1}, "ints"),
                          "ints element 0");
  EXPECT_NONFATAL_FAILURE(
      expect_all_close(big_ints(0), big_ints(0).reshaped({1, 2}), {}, "reshaped"),
      "reshaped: got int64[2], expected int64[1, 2]");
  EXPECT_NONFATAL_FAILURE(expect_all_close(std::vector<double>{1, 2}, {1, 2.5}, {0.1, 0.1}),
                          "result element 1: got 2, expected 2.5");
}

TEST(RandomTest, SeededPerDtypeAndInRange) {
  graph::TensorData ints = random_tensor(DataType::i32(), {1000}, 7, -3, 3);
  std::vector<double> v = values_of(ints);
  EXPECT_EQ(*std::min_element(v.begin(), v.end()), -3);
  EXPECT_EQ(*std::max_element(v.begin(), v.end()), 3);
  for (double b : values_of(random_tensor(DataType::boolean(), {64}, 7)))
    EXPECT_TRUE(b == 0 || b == 1);
  for (double f : values_of(random_tensor(DataType::f64(), {64}, 7, 0.5, 2)))
    EXPECT_TRUE(f >= 0.5 && f <= 2);
  // The same seed gives the same values, as a TensorData or an NDArray.
  EXPECT_EQ(values_of(random_tensor({16}, 3)), values_of(random_array({16}, 3)));
  EXPECT_NE(values_of(random_tensor({16}, 3)), values_of(random_tensor({16}, 4)));
}

TEST(TensorTest, ValuesStoredByPlainConversion) {
  EXPECT_EQ(values_of(make_tensor(DataType::i8(), {3}, {-5, 0, 7})),
            (std::vector<double>{-5, 0, 7}));
  EXPECT_EQ(values_of(make_tensor(DataType::u16(), {2}, {0, 65535})),
            (std::vector<double>{0, 65535}));
  graph::TensorData bf(DataType::bf16(), {1});
  bf.data<uint16_t>()[0] = 0xC020;  // -2.5
  EXPECT_EQ(element_value(bf, 0), -2.5);
  EXPECT_EQ(values_of(zeros({2, 2})), (std::vector<double>(4, 0.0)));
}

}  // namespace
}  // namespace tessel::testing
