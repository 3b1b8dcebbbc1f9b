// Stage::pragma("auto_unroll_max_step"): which loops inside the annotated one are unrolled (the
// step count rule: stores, unrolled and vector loops; never the annotated loop itself), the numbers
// it computes, traces, and its errors.
#include <fmt/format.h>

#include "ir/structural_equal.h"
#include "te/schedule_to_tir.h"
#include "te_test_util.h"
#include "tests/common/expect_error.h"
#include "tests/common/text.h"

namespace tessel::te {
namespace {

using namespace testing;  // NOLINT: te's test helpers
using tessel::testing::count_occurrences;
using tessel::testing::expect_error;

// C[i, j] = sum over k of A[i, k] * B[k, j], 32 x 32 x 32: i split by 8 (the pragma's loop
// i.outer, parallel), j by 4, k by 4, order (i.outer, j.outer, k.outer, i.inner, k.inner, j.inner).
struct Tiled {
  Tensor A, B, C;
  IterVar k;
  Schedule s;
  IterVar io, ii, jo, ji, ko, ki;
  explicit Tiled(bool vectorize_j = false) {
    A = placeholder({32, 32}, DataType::f32(), "A");
    B = placeholder({32, 32}, DataType::f32(), "B");
    k = reduce_axis(0, 32, "k");
    C = compute({32, 32}, [&](Expr i, Expr j) { return sum(A(i, k) * B(k, j), {k}); }, "C");
    s = create_schedule({C});
    Stage st = s[C];
    std::tie(io, ii) = st.split(C.axis(0), 8);
    std::tie(jo, ji) = st.split(C.axis(1), 4);
    std::tie(ko, ki) = st.split(k, 4);
    st.reorder({io, jo, ko, ii, ki, ji});
    st.parallel(io);
    if (vectorize_j) st.vectorize(ji);
  }
  std::string loops() const { return to_string(schedule_to_tir(s, {A, B, C}, "f")); }
  void check() const {
    auto a = random_array({32, 32}, 1), b = random_array({32, 32}, 2), c = zeros({32, 32});
    build_and_run(s, {A, B, C}, {a, b, c});
    expect_near(c, naive_matmul(a, b, 32, 32, 32));
  }
};

TEST(PragmaTest, AutoUnrollUnrollsTheLoopsWithinTheStepCount) {
  // j.inner is 4 steps, k.inner x j.inner 16, i.inner x k.inner x j.inner 128; the init's j loop
  // is 4 steps and its i loop 32.
  struct Case {
    int64_t max_step;
    size_t unrolled;
  };
  for (Case c : {Case{0, 0}, Case{3, 0}, Case{4, 2}, Case{16, 3}, Case{40, 4}, Case{128, 5}}) {
    SCOPED_TRACE(c.max_step);
    Tiled t;
    t.s[t.C].pragma(t.io, "auto_unroll_max_step", c.max_step);
    std::string loops = t.loops();
    EXPECT_EQ(count_occurrences(loops, "unrolled for"), c.unrolled) << loops;
    EXPECT_EQ(count_occurrences(loops, "parallel for"), 1u) << loops;  // the pragma's own loop
    t.check();
  }
}

// A vector loop is one step per statement: the init's i loop over vectors of j is 8 steps, the
// update's k.inner 4 (and i.inner then 32).
TEST(PragmaTest, AVectorLoopCountsOneStep) {
  Tiled t(/*vectorize_j=*/true);
  t.s[t.C].pragma(t.io, "auto_unroll_max_step", 8);
  std::string loops = t.loops();
  EXPECT_EQ(count_occurrences(loops, "unrolled for"), 2u) << loops;
  EXPECT_EQ(count_occurrences(loops, "vectorized for"), 2u) << loops;
  t.check();
}

// However large the budget, the annotated loop itself and the loops around it stay rolled.
TEST(PragmaTest, OnlyTheLoopsInsideTheAnnotatedOneUnroll) {
  Tiled t;
  t.s[t.C].pragma(t.jo, "auto_unroll_max_step", 1 << 20);
  std::string loops = t.loops();
  // Inside j.outer: the init's two loops and the update's four.
  EXPECT_EQ(count_occurrences(loops, "unrolled for"), 6u) << loops;
  EXPECT_EQ(count_occurrences(loops, "parallel for (i.outer"), 1u) << loops;
  EXPECT_EQ(count_occurrences(loops, "  for (j.outer"), 1u) << loops;
  t.check();
}

TEST(PragmaTest, ReplaysFromItsTrace) {
  Tiled t;
  t.s[t.C].pragma(t.io, "auto_unroll_max_step", 16);
  std::string text = t.s.trace().str();
  EXPECT_NE(text.find("pragma C [3:i.outer] [16] [auto_unroll_max_step]"), std::string::npos)
      << text;
  Tiled fresh;
  Schedule s2 = create_schedule({fresh.C});
  s2.replay(Trace::parse(text));
  EXPECT_EQ(s2.trace().str(), text);
  EXPECT_TRUE(structural_equal(lower(t.s, {t.A, t.B, t.C}, "f"),
                               lower(s2, {fresh.A, fresh.B, fresh.C}, "f")));
}

TEST(PragmaTest, ErrorsNameTheStageAxisAndPragma) {
  Tiled t;
  Stage st = t.s[t.C];
  expect_error<ScheduleError>(
      [&] { st.pragma(t.io, "unroll_everything", 4); },
      {"pragma", "stage 'C'", "'unroll_everything'", "axis 'i.outer'", "auto_unroll_max_step"});
  expect_error<ScheduleError>([&] { st.pragma(t.io, "auto_unroll_max_step", -1); },
                              {"stage 'C'", "axis 'i.outer'", "-1", "at least 0"});
  expect_error<ScheduleError>([&] { st.pragma(t.C.axis(0), "auto_unroll_max_step", 4); },
                              {"pragma", "stage 'C'", "axis 'i'", "not a leaf"});
}

}  // namespace
}  // namespace tessel::te
