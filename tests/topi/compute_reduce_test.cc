// Reductions lowered through topi (topi/compute_reduce.cc), compiled and checked against the
// reference executor: every Reduce* kind with axes as an attribute or an input, ArgMax/ArgMin with
// ties, CumSum variants, and TopK.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "lowering_test_util.h"

namespace tessel::topi {
namespace {

using namespace testing;  // NOLINT
using graph::Attr;
using Attrs = std::map<std::string, Attr>;

const char* const kReductions[] = {"ReduceSum",       "ReduceMean",     "ReduceMax", "ReduceMin",
                                   "ReduceProd",      "ReduceL1",       "ReduceL2",  "ReduceLogSum",
                                   "ReduceLogSumExp", "ReduceSumSquare"};

// The opset-17 form: axes are an attribute, except ReduceSum's (an input).
TEST(ComputeReduceTest, EveryKindWithAxesAttributes) {
  OpGraph m;
  auto x = m.input("x", random_data(DataType::f32(), {3, 4, 5}, 1, 0.5, 1.5));  // positive: LogSum
  auto axes = m.constant("axes", ints({-1, 0}));
  for (std::string op : kReductions) {
    bool sum = op == "ReduceSum";
    auto with_axes = [&](std::vector<int64_t> a, int64_t keep) {
      Attrs attrs{{"keepdims", Attr(keep)}};
      if (!sum) attrs["axes"] = Attr(a);
      return attrs;
    };
    std::vector<ValueId> in = sum ? std::vector<ValueId>{x, axes} : std::vector<ValueId>{x};
    m.op(op + "_keep", op, in, with_axes({-1, 0}, 1));
    m.op(op + "_drop", op, in, with_axes({-1, 0}, 0));
    m.op(op + "_all", op, {x}, {{"keepdims", Attr(int64_t{0})}});
  }
  m.check();
}

// Axes as an input for every kind (ReduceSum's form, which opset 18 gives them all);
// noop_with_empty_axes keeps the input's shape.
TEST(ComputeReduceTest, EveryKindWithAxesInputs) {
  OpGraph m;
  auto x = m.input("x", random_data(DataType::f32(), {2, 3, 4}, 2, 0.5, 1.5));
  auto axes = m.constant("axes", ints({1}));
  auto none =
      m.constant("none", make_tensor<int64_t>(DataType::i64(), {0}, std::vector<int64_t>{}));
  for (std::string op : kReductions) {
    m.op(op + "_mid", op, {x, axes}, {{"keepdims", Attr(int64_t{0})}});
    m.op(op + "_noop", op, {x, none}, {{"noop_with_empty_axes", Attr(int64_t{1})}});
    m.op(op + "_empty_axes", op, {x, none});
  }
  m.check();
}

TEST(ComputeReduceTest, IntegerReductionsAreExact) {
  OpGraph m;
  auto x = m.input("x", random_data(DataType::i64(), {3, 5, 2}, 3, -7, 7));
  auto i32 = m.input("i32", random_data(DataType::i32(), {4, 6}, 4, -100, 100));
  auto axes = m.constant("axes", ints({1}));
  for (const char* op : {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd",
                         "ReduceL1", "ReduceSumSquare", "ReduceL2"}) {
    m.op(std::string(op) + "_i64", op, {x, axes});
    m.op(std::string(op) + "_i32", op, {i32, axes}, {{"keepdims", Attr(int64_t{0})}});
  }
  m.check();
}

TEST(ComputeReduceTest, LogSumExpDoesNotOverflow) {
  OpGraph m;
  auto x = m.input("x", random_data(DataType::f32(), {2, 6}, 5, 80, 95));
  m.op("lse", "ReduceLogSumExp", {x, m.constant("axes", ints({-1}))});
  m.check();
}

TEST(ComputeReduceTest, ArgMaxArgMinWithTies) {
  OpGraph m;
  auto x = m.input("x", random_data(DataType::f32(), {4, 6, 3}, 6, -1, 1));
  auto ties = m.op("ties", "Round", {x})[0];  // values in {-1, 0, 1}
  auto i = m.input("i", random_data(DataType::i64(), {5, 4}, 7, -2, 2));
  for (const char* op : {"ArgMax", "ArgMin"}) {
    for (int64_t last : {0, 1}) {
      std::string n = std::string(op) + (last ? "_last" : "_first");
      m.op(n + "_axis1", op, {ties},
           {{"axis", Attr(int64_t{1})}, {"select_last_index", Attr(last)}});
      m.op(n + "_neg_drop", op, {ties},
           {{"axis", Attr(int64_t{-1})},
            {"keepdims", Attr(int64_t{0})},
            {"select_last_index", Attr(last)}});
      m.op(n + "_i64", op, {i}, {{"select_last_index", Attr(last)}});
    }
    m.op(std::string(op) + "_distinct", op, {x}, {{"axis", Attr(int64_t{2})}});
  }
  m.check();
}

TEST(ComputeReduceTest, CumSumVariants) {
  OpGraph m;
  auto x = m.input("x", random_data(DataType::f32(), {3, 5}, 8));
  auto i = m.input("i", random_data(DataType::i32(), {2, 3, 4}, 9, -50, 50));
  auto axis0 = m.constant("axis0", make_tensor<int64_t>(DataType::i32(), {}, {0}));
  auto axis_last = m.constant("axis_last", make_tensor<int64_t>(DataType::i64(), {1}, {-1}));
  for (int64_t exclusive : {0, 1}) {
    for (int64_t reverse : {0, 1}) {
      Attrs attrs{{"exclusive", Attr(exclusive)}, {"reverse", Attr(reverse)}};
      std::string n = fmt::format("cumsum_e{}_r{}", exclusive, reverse);
      m.op(n + "_f32", "CumSum", {x, axis_last}, attrs);
      m.op(n + "_i32", "CumSum", {i, axis0}, attrs);
    }
  }
  m.check();
}

TEST(ComputeReduceTest, ReductionFusesWithItsElementwiseInput) {
  OpGraph m;
  auto x = m.input("x", random_data(DataType::f32(), {4, 8}, 10));
  auto e = m.b.op("Exp", {x}, {}, "exp");
  m.op("sum", "ReduceSum", {e, m.constant("axes", ints({1}))});
  std::string summary = m.check();
  EXPECT_NE(summary.find("[Exp+ReduceSum]"), std::string::npos) << summary;
}

// TopK over axes, largest/smallest, integer values, ties (the lower index first), k = 1 and k = the
// whole axis.
TEST(ComputeReduceTest, TopKVariants) {
  OpGraph m;
  auto x = m.input("x", random_data(DataType::f32(), {3, 4, 6}, 12));
  auto k2 = m.constant("k2", ints({2}));
  m.op("top_last", "TopK", {x, k2}, {}, 2);
  m.op("top_axis1", "TopK", {x, m.constant("k3", ints({3}))}, {{"axis", Attr(int64_t{1})}}, 2);
  m.op("small_neg_axis", "TopK", {x, k2},
       {{"axis", Attr(int64_t{-3})}, {"largest", Attr(int64_t{0})}}, 2);
  m.op("unsorted_all", "TopK", {x, m.constant("k6", ints({6}))}, {{"sorted", Attr(int64_t{0})}}, 2);
  auto ties = m.input("ties", make_tensor(DataType::f32(), {2, 5},
                                          std::vector<double>{1, 3, 3, 1, 2, 0, 0, 0, 0, 0}));
  m.op("ties_largest", "TopK", {ties, m.constant("k4", ints({4}))}, {}, 2);
  m.op("ties_smallest", "TopK", {ties, m.constant("k1", ints({1}))},
       {{"largest", Attr(int64_t{0})}}, 2);
  auto i = m.input("i", random_data(DataType::i32(), {4, 7}, 13, -3, 3));
  m.op("int_ties", "TopK", {i, m.constant("k5", ints({5}))}, {{"axis", Attr(int64_t{1})}}, 2);
  m.check();
}

}  // namespace
}  // namespace tessel::topi
