// The default schedule's reductions (topi/schedule_default.cc): float sums, maxima and minima
// vectorized along the reduced axis (accumulator chains and a tree) or along the spatial one, in
// parallel; checked against the reference executor with the host's target and with AVX2's, for
// lengths that make several chains and one, that are whole vectors on one ISA only or on neither,
// and for the kinds that stay scalar; and the lowered kernels' shape.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "ir/printer.h"
#include "lowering_test_util.h"
#include "te/lower.h"
#include "tests/common/text.h"

namespace tessel::topi {
namespace {

using namespace testing;  // NOLINT
using tessel::testing::count_occurrences;

constexpr const char* kAvx512 = "llvm -mtriple=x86_64-linux-gnu -mcpu=skylake-avx512";
constexpr const char* kAvx2 = "llvm -mtriple=x86_64-linux-gnu -mcpu=haswell";

TensorData f32(std::vector<int64_t> shape, uint32_t seed) {
  return random_data(DataType::f32(), std::move(shape), seed, 0.5, 1.5);  // positive: ReduceLogSum
}

Attrs keep(int64_t k) { return {{"keepdims", int_attr(k)}}; }

// Over the last axis: 128, 64 and 32 (4, 2 and 1 chains of 16 lanes with AVX-512, the host's if
// it has it; 8, 4 and 2 of 8 with AVX2), 24 (whole vectors of 8 only), 37 (neither); over leading
// axes, with a last axis of those lengths.
TEST(ScheduleReductionTest, MatchesTheReferenceOnBothIsas) {
  OpGraph m;
  auto last = m.constant("last", ints({-1}));
  auto lead = m.constant("lead", ints({0, 1}));
  for (int64_t n : {128, 64, 32, 24, 37}) {
    auto x = m.input(fmt::format("x{}", n), f32({3, 5, n}, static_cast<uint32_t>(n)));
    for (const char* op : {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceL2",
                           "ReduceSumSquare", "ReduceLogSumExp", "ReduceProd"}) {
      m.op(fmt::format("{}_last{}", op, n), op, {x, last}, keep(n % 2));
      m.op(fmt::format("{}_lead{}", op, n), op, {x, lead}, keep(1));
    }
    m.op(fmt::format("argmax{}", n), "ArgMax", {x}, {{"axis", int_attr(-1)}});
  }
  // Everything into one value; a long row on few rows.
  m.op("all", "ReduceSum", {m.input("whole", f32({4, 64}, 3))}, keep(0));
  m.op("long", "ReduceMean", {m.input("long", f32({2, 4096}, 4)), last}, keep(1));
  m.check();
  m.check(kAvx2);
}

// The only fused group of a one-node graph, lowered for `target`.
struct Lowered {
  std::string trace, tir;
};
Lowered lowered(const std::string& op, std::vector<int64_t> shape, std::vector<int64_t> axes,
                const std::string& target) {
  OpGraph m;
  m.op("y", op, {m.input("x", f32(shape, 1)), m.constant("axes", ints(axes))}, keep(1));
  passes::LoweredGroup lg = m.lower_only_group(target);
  return {lg.schedule.trace().str(), to_string(te::lower(lg.schedule, lg.args, lg.name))};
}

// A sum over the last axis: 8 chains of the target's vectors (both CPUs' FMA chains, 8 and 10,
// rounded down to a divisor of the row's vectors), then halves to 2 lanes, per row in parallel;
// Mean's sum is an intermediate stage and runs in parallel all the same.
TEST(ScheduleReductionTest, ReducedAxisIntoChainsAndATree) {
  for (auto [target, lanes] : {std::pair{kAvx512, 16}, std::pair{kAvx2, 8}}) {
    SCOPED_TRACE(target);
    Lowered l = lowered("ReduceMean", {64, 1024}, {-1}, target);
    EXPECT_EQ(count_occurrences(l.trace, fmt::format("rfactor y_acc [2:k1] [{}]", 8 * lanes)), 1u)
        << l.trace;
    EXPECT_EQ(count_occurrences(l.trace, "rfactor y_acc "), lanes == 16 ? 5u : 4u) << l.trace;
    // The sum; 64 divisions are not worth a parallel loop.
    EXPECT_EQ(count_occurrences(l.tir, "parallel for"), 1u) << l.tir;
    EXPECT_NE(l.tir.find(fmt::format("ramp(0, 1, {})", 8 * lanes)), std::string::npos) << l.tir;
  }
}

// A mean over the leading axis: the output's columns in vectors below the reduce loop, 8 of them
// at once; the column blocks in parallel.
TEST(ScheduleReductionTest, SpatialAxisInVectorsBelowTheReduceLoop) {
  Lowered l = lowered("ReduceMean", {1, 128, 768}, {1}, kAvx2);
  EXPECT_EQ(l.trace.find("rfactor"), std::string::npos) << l.trace;
  EXPECT_NE(l.trace.find("unroll y_acc"), std::string::npos) << l.trace;
  EXPECT_NE(l.trace.find("vectorize y_acc"), std::string::npos) << l.trace;
  EXPECT_NE(l.tir.find("ramp("), std::string::npos) << l.tir;
  EXPECT_EQ(count_occurrences(l.tir, "parallel for"), 1u)
      << l.tir;  // 12 blocks of 8 vectors; 768 divisions
}

// A product and a short row keep scalar reduce loops.
TEST(ScheduleReductionTest, OthersStayScalar) {
  Lowered prod = lowered("ReduceProd", {64, 1024}, {-1}, kAvx512);
  EXPECT_EQ(prod.trace.find("rfactor"), std::string::npos) << prod.trace;
  EXPECT_EQ(prod.trace.find("vectorize y"), std::string::npos) << prod.trace;
  Lowered ragged = lowered("ReduceSum", {64, 37}, {-1}, kAvx512);
  EXPECT_EQ(ragged.trace.find("rfactor"), std::string::npos) << ragged.trace;
}

}  // namespace
}  // namespace tessel::topi
