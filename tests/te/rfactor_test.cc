// Schedule::rfactor: a reduction split into partial results along a new data axis, checked
// against naive loops (divisible and not, several reduce axes, an axis not starting at 0), in
// traces, and its errors.
#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "ir/structural_equal.h"
#include "te_test_util.h"
#include "tests/common/expect_error.h"

namespace tessel::te {
namespace {

using namespace testing;  // NOLINT: te's test helpers
using tessel::testing::expect_error;

// C[i] = reducer over k in [lo, hi) of A[i, k].
struct RowReduction {
  Tensor A, C;
  IterVar k;
  RowReduction(int64_t rows, int64_t cols, int64_t lo, int64_t hi, bool use_max) {
    A = placeholder({rows, cols}, DataType::f32(), "A");
    k = reduce_axis(lo, hi, "k");
    C = compute(
        {rows}, [&](Expr i) { return use_max ? max(A(i, k), {k}) : sum(A(i, k), {k}); }, "C");
  }
};

std::vector<float> naive_rows(const runtime::NDArray& a, int64_t rows, int64_t cols, int64_t lo,
                              int64_t hi, bool use_max) {
  std::vector<float> want(rows);
  const float* p = a.data<float>();
  for (int64_t i = 0; i < rows; ++i) {
    double acc = use_max ? -std::numeric_limits<double>::infinity() : 0.0;
    for (int64_t k = lo; k < hi; ++k)
      acc = use_max ? std::max(acc, double(p[i * cols + k])) : acc + p[i * cols + k];
    want[i] = static_cast<float>(acc);
  }
  return want;
}

// rf's factored axis is innermost (vectorized when the factor divides k's extent: the points
// past it are a guard inside the loop otherwise), and rf is computed per row of C.
void schedule_rows(Schedule& s, const RowReduction& r, const Tensor& rf, bool vectorize = true) {
  Stage st = s[rf];
  st.reorder({st.axis(0), st->leaf_iter_vars[2], st.axis(1)});
  if (vectorize) st.vectorize(st.axis(1));
  st.compute_at(s[r.C], r.C.axis(0));
}

struct Case {
  int64_t rows, cols, lo, hi, factor;
  bool use_max;
};

TEST(RfactorTest, MatchesNaiveLoops) {
  for (const Case& c : {Case{6, 64, 0, 64, 16, false}, Case{5, 37, 0, 37, 8, true},
                        Case{3, 32, 3, 30, 4, false}, Case{4, 40, 1, 40, 16, true}}) {
    SCOPED_TRACE(fmt::format("A[{}, {}], k in [{}, {}), factor {}, {}", c.rows, c.cols, c.lo, c.hi,
                             c.factor, c.use_max ? "max" : "sum"));
    RowReduction r(c.rows, c.cols, c.lo, c.hi, c.use_max);
    Schedule s = create_schedule({r.C});
    Tensor rf = s.rfactor(r.C, r.k, c.factor);
    EXPECT_EQ(rf.shape().size(), 2u);
    EXPECT_EQ(*as_const_int(rf.shape()[1]), c.factor);
    schedule_rows(s, r, rf, (c.hi - c.lo) % c.factor == 0);
    // Negative values: a max that combined the points past the extent (or zeros) would show.
    auto a = random_array({c.rows, c.cols}, 7);
    for (int64_t i = 0; i < c.rows * c.cols; ++i) a.data<float>()[i] -= 2.0f;
    auto out = zeros({c.rows});
    build_and_run(s, {r.A, r.C}, {a, out});
    expect_near(out, naive_rows(a, c.rows, c.cols, c.lo, c.hi, c.use_max));
  }
}

// The rf stage's update is one vector operation per step of the outer part of k.
TEST(RfactorTest, FactoredAxisVectorizes) {
  RowReduction r(4, 64, 0, 64, false);
  Schedule s = create_schedule({r.C});
  Tensor rf = s.rfactor(r.C, r.k, 16);
  schedule_rows(s, r, rf);
  std::string text = to_string(lower(s, {r.A, r.C}, "f"));
  // A 16-float partial buffer per row, updated by whole vectors.
  EXPECT_NE(text.find("allocate C.rf: float32[16_int64]"), std::string::npos) << text;
  EXPECT_NE(text.find("C.rf[ramp(0_int64, 1_int64, 16)] = C.rf[ramp(0_int64, 1_int64, 16)] + "
                      "A[ramp(i*64_int64 + k.outer*16_int64, 1_int64, 16)]"),
            std::string::npos)
      << text;
}

// Of two reduce axes, either one may be factored; the other stays a reduction of rf.
TEST(RfactorTest, EitherOfTwoReduceAxes) {
  for (int which : {0, 1}) {
    SCOPED_TRACE(which);
    Tensor A = placeholder({4, 6, 20}, DataType::f32(), "A");
    IterVar r = reduce_axis(0, 6, "r"), k = reduce_axis(0, 20, "k");
    Tensor C = compute({4}, [&](Expr i) { return sum(A(i, r, k) * 2.0f, {r, k}); }, "C");
    Schedule s = create_schedule({C});
    Tensor rf = s.rfactor(C, which == 0 ? r : k, which == 0 ? 4 : 8);
    EXPECT_EQ(rf.op().as<ComputeOpNode>()->reduce_axis.size(), 2u);
    auto a = random_array({4, 6, 20}, 3), out = zeros({4});
    build_and_run(s, {A, C}, {a, out});
    std::vector<float> want(4, 0.0f);
    for (int i = 0; i < 4; ++i)
      for (int x = 0; x < 120; ++x) want[i] += 2.0f * a.data<float>()[i * 120 + x];
    expect_near(out, want, 1e-4f);
  }
}

// A condition on the reduction, reading a tensor, goes with the points into rf (k not a whole
// number of factors, so rf also skips the points past k's extent).
TEST(RfactorTest, AConditionThatReadsATensor) {
  Tensor A = placeholder({4, 30}, DataType::f32(), "A");
  Tensor M = placeholder({30}, DataType::f32(), "M");
  IterVar k = reduce_axis(0, 30, "k");
  Tensor C = compute({4}, [&](Expr i) { return sum(A(i, k), {k}, M(k) > 0.0f); }, "C");
  Schedule s = create_schedule({C});
  s.rfactor(C, k, 8);
  auto a = random_array({4, 30}, 8), m = random_array({30}, 9), out = zeros({4});
  build_and_run(s, {A, M, C}, {a, m, out});
  std::vector<float> want(4, 0.0f);
  for (int i = 0; i < 4; ++i)
    for (int x = 0; x < 30; ++x)
      if (m.data<float>()[x] > 0) want[i] += a.data<float>()[i * 30 + x];
  expect_near(out, want);
}

// A reduction whose readers are computed later reads the new stage through C.
TEST(RfactorTest, ReadersOfTheReductionKeepWorking) {
  RowReduction r(8, 48, 0, 48, true);
  Tensor D = compute({8, 48}, [&](Expr i, Expr j) { return r.A(i, j) - r.C(i); }, "D");
  Schedule s = create_schedule({D});
  Tensor rf = s.rfactor(r.C, r.k, 16);
  schedule_rows(s, r, rf);
  s[r.C].compute_at(s[D], D.axis(0));
  auto a = random_array({8, 48}, 5), out = zeros({8, 48});
  build_and_run(s, {r.A, D}, {a, out});
  std::vector<float> mx = naive_rows(a, 8, 48, 0, 48, true), want(8 * 48);
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 48; ++j) want[i * 48 + j] = a.data<float>()[i * 48 + j] - mx[i];
  expect_near(out, want);
}

TEST(RfactorTest, ReplaysFromItsTrace) {
  RowReduction r(6, 64, 0, 64, false);
  Schedule s = create_schedule({r.C});
  schedule_rows(s, r, s.rfactor(r.C, r.k, 16));
  std::string text = s.trace().str();
  EXPECT_NE(text.find("rfactor C [1:k] [16] []"), std::string::npos) << text;
  RowReduction fresh(6, 64, 0, 64, false);
  Schedule s2 = create_schedule({fresh.C});
  s2.replay(Trace::parse(text));
  EXPECT_EQ(s2.trace().str(), text);
  PrimFunc f1 = lower(s, {r.A, r.C}, "f"), f2 = lower(s2, {fresh.A, fresh.C}, "f");
  EXPECT_TRUE(structural_equal(f1, f2)) << f1 << "\nvs\n" << f2;
}

TEST(RfactorTest, ErrorsNameTheStageAndAxis) {
  RowReduction r(6, 64, 0, 64, false);
  Tensor D = compute({6}, [&](Expr i) { return r.C(i) * 2.0f; }, "D");
  Schedule s = create_schedule({D});
  expect_error<ScheduleError>([&] { s.rfactor(D, r.k, 4); },
                              {"rfactor", "stage 'D'", "no reduction"});
  expect_error<ScheduleError>([&] { s.rfactor(r.C, r.C.axis(0), 4); },
                              {"rfactor", "stage 'C'", "axis 'i'", "reduce axes (k)"});
  expect_error<ScheduleError>([&] { s.rfactor(r.C, r.k, 1); },
                              {"stage 'C'", "factor 1", "axis 'k'", "at least 2"});
  expect_error<ScheduleError>([&] { s.rfactor(r.C, r.k, 65); },
                              {"stage 'C'", "factor 65", "extent 64"});
  // A stage computed inside C would lose its place.
  Tensor B = compute({6, 64}, [&](Expr i, Expr j) { return r.A(i, j) * 2.0f; }, "B");
  IterVar k2 = reduce_axis(0, 64, "k");
  Tensor E = compute({6}, [&](Expr i) { return sum(B(i, k2), {k2}); }, "E");
  Schedule s2 = create_schedule({E});
  s2[B].compute_at(s2[E], E.axis(0));
  expect_error<ScheduleError>([&] { s2.rfactor(E, k2, 4); }, {"stage 'E'", "compute_at into it"});
  s[r.C].split(r.C.axis(0), 2);
  expect_error<ScheduleError>([&] { s.rfactor(r.C, r.k, 4); },
                              {"stage 'C'", "before the stage's other primitives"});
  Tensor other = placeholder({3}, DataType::f32(), "other");
  expect_error<Error>([&] { s.rfactor(other, r.k, 4); }, {"'other'", "not part of this schedule"});
}

}  // namespace
}  // namespace tessel::te
