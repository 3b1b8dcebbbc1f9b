// The statistics schedule (topi/schedule_statistics.cc): softmax and normalizations over trailing
// axes as one loop over rows with vector partial sums, checked against the reference executor with
// the host's target and with AVX2's, for row lengths that make 4, 2 and 1 accumulator chains, that
// are whole vectors on one ISA only, and on neither; the lowered kernels' shape (the chains'
// accumulators, the halving of the partial vectors, one exp per element); and the statistics over
// leading axes that keep the schedule at root.
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
TensorData f32(std::vector<int64_t> shape, uint32_t seed) {
  return random_data(DataType::f32(), std::move(shape), seed, -3, 3);
}

constexpr const char* kAvx512 = "llvm -mtriple=x86_64-linux-gnu -mcpu=skylake-avx512";
constexpr const char* kAvx2 = "llvm -mtriple=x86_64-linux-gnu -mcpu=haswell";

// Row lengths: 128, 64 and 32 (whole vectors of 8 and of 16: 4, 2 and 1 accumulator chains with 16
// lanes, 4, 4 and 2 with 8), 24 (of 8 only), 37 (neither); 2 x 4 rows, in pairs where 2 rows are
// at most 16 vectors, and 3 x 5 rows, one at a time.
TEST(ScheduleStatisticsTest, SoftmaxFamilyOverRows) {
  OpGraph m;
  for (int64_t n : {128, 64, 32, 24, 37}) {
    auto x = m.input(fmt::format("x{}", n), f32({2, 4, n}, static_cast<uint32_t>(n)));
    m.op(fmt::format("softmax{}", n), "Softmax", {x});
    m.op(fmt::format("log_softmax{}", n), "LogSoftmax", {x});
    m.op(fmt::format("hardmax{}", n), "Hardmax", {x});
    m.op(fmt::format("softmax_odd_rows{}", n), "Softmax",
         {m.input(fmt::format("odd{}", n), f32({3, 5, n}, static_cast<uint32_t>(n + 1)))});
  }
  // Leading dims of 1 are rows too; a long row; the axis before the last (statistics at root).
  m.op("softmax_ones", "Softmax", {m.input("ones", f32({1, 1, 4, 48}, 5))});
  m.op("softmax_long", "Softmax", {m.input("long", f32({4, 1000}, 6))});
  m.op("softmax_axis1", "Softmax", {m.input("mid", f32({2, 32, 16}, 7))}, {{"axis", int_attr(1)}});
  m.check();
  m.check(kAvx2);
}

TEST(ScheduleStatisticsTest, NormalizationsOverRows) {
  OpGraph m;
  auto x = m.input("x", f32({2, 8, 64}, 11));
  m.op("layer_last", "LayerNormalization",
       {x, m.constant("s64", f32({64}, 12)), m.constant("b64", f32({64}, 13))});
  m.op("layer_two_axes", "LayerNormalization", {x, m.constant("s8x64", f32({8, 64}, 14))},
       {{"axis", int_attr(1)}, {"epsilon", float_attr(1e-3)}});
  auto odd = m.input("odd", f32({3, 5, 37}, 15));
  m.op("layer_odd", "LayerNormalization", {odd, m.constant("s37", f32({37}, 16))});
  m.op("instance", "InstanceNormalization",
       {m.input("img", f32({2, 4, 4, 16}, 17)), m.constant("s4", f32({4}, 18)),
        m.constant("b4", f32({4}, 19))});
  auto wide = m.input("wide", f32({2, 768}, 20));
  m.op("layer_wide", "LayerNormalization", {wide, m.constant("s768", f32({768}, 21))});
  // Rows in blocks (of 2 with either ISA's code), the last axis of two and over two axes.
  auto blocks = m.input("blocks", f32({2, 4, 768}, 22));
  m.op("layer_blocks", "LayerNormalization",
       {blocks, m.constant("s768b", f32({768}, 23)), m.constant("b768", f32({768}, 24))});
  auto planes = m.input("planes", f32({8, 2, 384}, 25));
  m.op("layer_block_planes", "LayerNormalization",
       {planes, m.constant("s2x384", f32({2, 384}, 26))}, {{"axis", int_attr(1)}});
  // Planes of 16 x 32 in blocks of 4 channels, reduced over two axes.
  m.op("instance_blocks", "InstanceNormalization",
       {m.input("maps", f32({1, 8, 16, 32}, 27)), m.constant("s8", f32({8}, 28)),
        m.constant("b8", f32({8}, 29))});
  m.check();
  m.check(kAvx2);
}

// The only fused group of a one-node graph, lowered for `target`.
passes::LoweredGroup lowered(const std::string& op, std::vector<int64_t> shape,
                             const std::string& target, std::map<std::string, graph::Attr> attrs) {
  OpGraph m;
  std::vector<graph::ValueId> inputs{m.input("x", f32(shape, 1))};
  if (op == "LayerNormalization") inputs.push_back(m.constant("scale", f32({shape.back()}, 2)));
  if (op == "InstanceNormalization") {
    inputs.push_back(m.constant("scale", f32({shape[1]}, 2)));
    inputs.push_back(m.constant("bias", f32({shape[1]}, 3)));
  }
  m.op("y", op, inputs, std::move(attrs));
  return m.lower_only_group(target);
}

TEST(ScheduleStatisticsTest, SoftmaxIsOneParallelLoopOverRowsWithVectorPartials) {
  for (auto [target, lanes] : {std::pair{kAvx512, 16}, std::pair{kAvx2, 8}}) {
    SCOPED_TRACE(target);
    // Rows of 128 are 8 vectors of 16 lanes, which go in pairs, or 16 of 8, which do not.
    int rows = lanes == 16 ? 2 : 1;
    passes::LoweredGroup lg = lowered("Softmax", {4, 32, 128}, target, {});
    std::string trace = lg.schedule.trace().str();
    // The max and the sum each factored into 4 vectors of the target's lanes (4 accumulator
    // chains), which reduce to one vector, then to its halves down to 2 lanes: 16, 8, 4, 2.
    EXPECT_EQ(count_occurrences(trace, fmt::format("rfactor y_max [3:r2] [{}]", 4 * lanes)), 1u)
        << trace;
    EXPECT_EQ(count_occurrences(trace, fmt::format("rfactor y_sum [3:r2] [{}]", 4 * lanes)), 1u)
        << trace;
    size_t halvings = lanes == 16 ? 3 : 2;
    EXPECT_EQ(count_occurrences(trace, "rfactor y_max "), 2 + halvings) << trace;
    EXPECT_EQ(count_occurrences(trace, "rfactor y_sum "), 2 + halvings) << trace;
    std::string tir = to_string(te::lower(lg.schedule, lg.args, lg.name));
    EXPECT_EQ(count_occurrences(tir, "parallel for"), 1u) << tir;
    // Row buffers inside the row loop: the partials, vectors each, and the exponentials.
    EXPECT_NE(tir.find(fmt::format("allocate y_max.rf: float32[{}]", 4 * lanes * rows)),
              std::string::npos)
        << tir;
    EXPECT_NE(tir.find(fmt::format("y_max.rf_1[ramp(0, 1, {})]", lanes)), std::string::npos) << tir;
    EXPECT_NE(tir.find(fmt::format("y_sum.rf_{}[ramp(0, 1, 2)]", 1 + halvings)), std::string::npos)
        << tir;
    EXPECT_NE(tir.find(fmt::format("allocate y_exp: float32[{}]", 128 * rows)), std::string::npos)
        << tir;
    // Once per element: the rows' vectors, unrolled.
    EXPECT_EQ(count_occurrences(tir, "exp("), static_cast<size_t>(128 / lanes * rows)) << tir;
  }
}

// Rows of up to 8 vectors go in pairs: the row loop steps by two rows, and each stage computes
// both, unrolled (no loop over them). Not where the innermost row dim is odd (a pair would
// straddle two of the dim before), nor for fewer than 4 rows (one iteration for two threads), nor
// for longer rows.
TEST(ScheduleStatisticsTest, ShortRowsGoInPairs) {
  // The extent of the first loop, the rows'.
  auto row_loop = [](std::vector<int64_t> shape, const char* target) {
    passes::LoweredGroup lg = lowered("Softmax", shape, target, {});
    std::string tir = to_string(te::lower(lg.schedule, lg.args, lg.name));
    size_t at = tir.find(", 0, ", tir.find("for (")) + 5;
    return tir.substr(at, tir.find(')', at) - at);
  };
  EXPECT_EQ(row_loop({4, 32, 128}, kAvx512), "64");
  EXPECT_EQ(row_loop({4, 32, 64}, kAvx2), "64");
  EXPECT_EQ(row_loop({4, 32, 128}, kAvx2), "128");
  EXPECT_EQ(row_loop({3, 5, 128}, kAvx512), "15");
  EXPECT_EQ(row_loop({6, 3, 128}, kAvx512), "18");
  EXPECT_EQ(row_loop({2, 256}, kAvx512), "2");
  passes::LoweredGroup lg = lowered("Softmax", {4, 32, 128}, kAvx512, {});
  std::string tir = to_string(te::lower(lg.schedule, lg.args, lg.name));
  // The parallel loop over the pairs is the only loop over rows; each row has its reduce loops.
  EXPECT_EQ(count_occurrences(tir, "for (i"), 1u) << tir;
  EXPECT_EQ(count_occurrences(tir, "for (r2.outer"), 4u) << tir;  // max and sum, two rows each
}

// Rows too long to unroll and without a row buffer (layer norms, not softmax) go in blocks when
// their chains fit the registers: a block's statistics reduce each vector of every row in turn
// (one loop over a row's vectors per statistic, not per row), the rows unrolled inside it.
TEST(ScheduleStatisticsTest, LongRowsOfNormalizationsGoInBlocks) {
  struct Case {
    const char* op;
    std::vector<int64_t> shape;
    const char* target;
    std::string row_loop;  // the extent of the first loop, the rows': rows / block
    size_t reduce_loops;   // loops over a row's vectors, "for (r<d>.outer": one per statistic,
                           // where a block's rows (unrolled) without the interleave had one each
  };
  // 768 floats: 4 accumulator chains of 16 or 8 lanes per row, 2 rows (3 KiB each) in a quarter
  // of L1; 512 floats: 4 rows, where AVX2's 16 registers hold the chains of 2; 2048 floats: one
  // row of 8 KiB fills it; 256 floats: 1 KiB is short of a block; softmax keeps its exponentials
  // in a row buffer; 5 rows (odd) take no block of 2.
  for (const Case& c : {
           Case{"LayerNormalization", {128, 768}, kAvx512, "64", 2},
           Case{"LayerNormalization", {1, 128, 768}, kAvx2, "64", 2},
           Case{"LayerNormalization", {16, 2048}, kAvx512, "16", 2},
           Case{"LayerNormalization", {64, 256}, kAvx512, "64", 2},
           Case{"LayerNormalization", {64, 256}, kAvx2, "64", 2},
           Case{"LayerNormalization", {64, 512}, kAvx512, "16", 2},
           Case{"LayerNormalization", {64, 512}, kAvx2, "32", 2},
           Case{"LayerNormalization", {5, 768}, kAvx512, "5", 2},
           Case{"InstanceNormalization", {1, 8, 16, 32}, kAvx512, "2", 2},
           Case{"Softmax", {64, 768}, kAvx512, "64", 2},
       }) {
    SCOPED_TRACE(fmt::format("{} [{}] {}", c.op, fmt::join(c.shape, ","), c.target));
    passes::LoweredGroup lg = lowered(c.op, c.shape, c.target, {});
    std::string tir = to_string(te::lower(lg.schedule, lg.args, lg.name));
    size_t at = tir.find(", 0, ", tir.find("for (")) + 5;
    EXPECT_EQ(tir.substr(at, tir.find(')', at) - at), c.row_loop) << tir;
    size_t d = c.shape.size() - 1;
    EXPECT_EQ(count_occurrences(tir, fmt::format("for (r{}.outer", d)), c.reduce_loops) << tir;
  }
}

// A row of several dims is as much work as all of them: InstanceNorm over 56 x 56 planes runs in
// parallel. Trailing dims of 1 leave the reduced axis contiguous: it is factored.
TEST(ScheduleStatisticsTest, RowsOfSeveralDims) {
  passes::LoweredGroup lg = lowered("InstanceNormalization", {1, 8, 56, 56}, kAvx512, {});
  EXPECT_EQ(count_occurrences(to_string(te::lower(lg.schedule, lg.args, lg.name)), "parallel for"),
            1u);
  lg = lowered("Softmax", {1, 1024, 1, 1}, kAvx512, {{"axis", int_attr(1)}});
  std::string trace = lg.schedule.trace().str();
  EXPECT_EQ(count_occurrences(trace, "rfactor y_max [4:r1] [64]"), 1u) << trace;
}

TEST(ScheduleStatisticsTest, RowsThatAreNotWholeVectorsReduceWithoutPartials) {
  passes::LoweredGroup lg = lowered("LayerNormalization", {4, 37}, kAvx512, {});
  std::string trace = lg.schedule.trace().str();
  EXPECT_EQ(trace.find("rfactor"), std::string::npos) << trace;
  EXPECT_NE(trace.find("compute_at y_sum"), std::string::npos) << trace;
}

TEST(ScheduleStatisticsTest, StatisticsOverALeadingAxisStayAtRoot) {
  passes::LoweredGroup lg = lowered("Softmax", {64, 32}, kAvx512, {{"axis", int_attr(0)}});
  std::string trace = lg.schedule.trace().str();
  EXPECT_EQ(trace.find("rfactor"), std::string::npos) << trace;
  EXPECT_EQ(trace.find("compute_at"), std::string::npos) << trace;
}

}  // namespace
}  // namespace tessel::topi
