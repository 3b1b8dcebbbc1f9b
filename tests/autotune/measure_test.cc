// Isolated measurement: a correct candidate is timed; wrong answers, build errors, crashes and
// hangs (in the build or in the run) become error results while the test process goes on.
#include "autotune/measure.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <limits>
#include <thread>

#include "codegen/build.h"
#include "ir/error.h"
#include "te/operation.h"
#include "te/schedule.h"
#include "tests/common/ndarray.h"

namespace tessel::autotune {
namespace {

using tessel::testing::random_array;

constexpr int64_t kM = 32, kN = 24, kK = 16;

struct MatmulProblem {
  std::vector<runtime::NDArray> inputs{random_array({kM, kK}, 1), random_array({kK, kN}, 2)};
  std::vector<runtime::NDArray> reference;

  MatmulProblem() {
    auto c = runtime::NDArray::empty({kM, kN}, DataType::f32());
    const float* a = inputs[0].data<float>();
    const float* b = inputs[1].data<float>();
    for (int64_t i = 0; i < kM; ++i)
      for (int64_t j = 0; j < kN; ++j) {
        double sum = 0;
        for (int64_t k = 0; k < kK; ++k) sum += double(a[i * kK + k]) * b[k * kN + j];
        c.data<float>()[i * kN + j] = static_cast<float>(sum);
      }
    reference.push_back(c);
  }
};

// "mm": C[kM, kN] = A * B with its reduction over the first `k_extent` of kK steps (kK: correct),
// j split by `factor` with the reduction moved inside and j.inner unrolled, i parallel.
CandidateBuilder matmul_candidate(int64_t k_extent = kK, int64_t factor = 8) {
  return [=] {
    te::Tensor A = te::placeholder({kM, kK}, DataType::f32(), "A");
    te::Tensor B = te::placeholder({kK, kN}, DataType::f32(), "B");
    te::IterVar k = te::reduce_axis(0, k_extent, "k");
    te::Tensor C = te::compute(
        {kM, kN}, [&](te::Expr i, te::Expr j) { return te::sum(A(i, k) * B(k, j), {k}); }, "C");
    te::Schedule s = te::create_schedule({C});
    te::Stage c = s[C];
    auto [jo, ji] = c.split(C.axis(1), factor);
    c.reorder({C.axis(0), jo, k, ji});
    c.unroll(ji);
    c.parallel(C.axis(0));
    return build(s, {A, B, C}, Target::host(), "mm");
  };
}

// A module whose function "mm" is `fn`, to misbehave at run time without going through LLVM.
class FakeModule : public runtime::ModuleNode {
 public:
  explicit FakeModule(runtime::Function::Packed fn) : fn_(std::move(fn)) {}
  runtime::Function get_function(const std::string& name) override {
    return name == "mm" ? runtime::Function(name, fn_) : runtime::Function();
  }
  std::vector<std::string> function_names() const override { return {"mm"}; }
  std::string source(const std::string&) const override { return ""; }

 private:
  runtime::Function::Packed fn_;
};

CandidateBuilder fake_candidate(runtime::Function::Packed fn) {
  return [fn] { return runtime::Module(std::make_shared<FakeModule>(fn)); };
}

MeasureOptions quick(double timeout_s = 30) {
  MeasureOptions opt;
  opt.timeout_s = timeout_s;
  return opt;
}

TEST(MeasureTest, CorrectMatmulIsTimed) {
  MatmulProblem p;
  MeasureOptions opt = quick();
  MeasureResult r = measure(matmul_candidate(), "mm", p.inputs, p.reference, opt);
  ASSERT_EQ(r.error, MeasureError::kNone) << r.message;
  EXPECT_EQ(r.message, "");
  ASSERT_EQ(r.costs_s.size(), 3u);
  for (double c : r.costs_s) EXPECT_GT(c, 0);
  EXPECT_EQ(r.number, 4);
  EXPECT_GT(r.mean_cost_s(), 0);
  EXPECT_LT(r.mean_cost_s(), r.elapsed_s);
}

TEST(MeasureTest, RepeatAndCacheFlushAreHonoured) {
  MatmulProblem p;
  MeasureOptions opt = quick();
  opt.number = 2;
  opt.repeat = 5;
  opt.flush_cache = true;
  MeasureResult r = measure(matmul_candidate(), "mm", p.inputs, p.reference, opt);
  ASSERT_EQ(r.error, MeasureError::kNone) << r.message;
  ASSERT_EQ(r.costs_s.size(), 5u);
  for (double c : r.costs_s) EXPECT_GT(c, 0);
  EXPECT_EQ(r.number, 2);
}

// A baseline kernel is built on the first call and kept; one that does not build is null then
// and after, and is not built again.
TEST(MeasureTest, ABaselineKernelIsBuiltOnce) {
  int builds = 0;
  BaselineKernel ok;
  EXPECT_EQ(ok.get(), nullptr);
  auto build_matmul = [&] {
    ++builds;
    return matmul_candidate()();
  };
  const runtime::Function* f = ok.build(build_matmul, "mm");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(ok.build(build_matmul, "mm"), f);
  EXPECT_EQ(ok.get(), f);
  EXPECT_EQ(builds, 1);
  BaselineKernel broken;
  auto fail = [&]() -> runtime::Module {
    ++builds;
    throw Error("no kernel");
  };
  EXPECT_EQ(broken.build(fail, "mm"), nullptr);
  EXPECT_EQ(broken.build(fail, "mm"), nullptr);
  EXPECT_EQ(broken.get(), nullptr);
  EXPECT_EQ(builds, 2);
}

// A baseline (here a function that sleeps 20 ms a call) is timed once before each of the
// candidate's measurements, with its own number of runs; without one, there are no baseline costs.
// The sleep bounds the baseline's costs from below; the candidate (a matmul of microseconds) is
// told apart by its median, which one preempted measurement on a loaded machine cannot move.
TEST(MeasureTest, ABaselineIsTimedInTurnsWithTheCandidate) {
  MatmulProblem p;
  MeasureOptions opt = quick();
  opt.repeat = 4;
  runtime::Function sleeper("sleeper", [](const TesselValue*, const int32_t*, int32_t) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  });
  MeasureResult r = measure(matmul_candidate(), "mm", p.inputs, p.reference, opt, &sleeper);
  ASSERT_EQ(r.error, MeasureError::kNone) << r.message;
  ASSERT_EQ(r.costs_s.size(), 4u);
  ASSERT_EQ(r.baseline_costs_s.size(), 4u);
  for (double c : r.baseline_costs_s) EXPECT_GE(c, 0.02);
  std::vector<double> costs = r.costs_s;
  std::nth_element(costs.begin(), costs.begin() + 2, costs.end());
  EXPECT_LT(costs[2], 0.02);
  EXPECT_TRUE(
      measure(matmul_candidate(), "mm", p.inputs, p.reference, opt).baseline_costs_s.empty());
}

// Costs in the baseline's time: a candidate's times over the baseline's fastest in its child, but
// over the median of earlier children's once there are enough of them and the baseline ran more
// than 1.5x that slow (a slow phase of the machine: a 3 us kernel at 9-10 us).
TEST(MeasureTest, ASlowPhaseOfTheBaselineIsCostedOverItsMedian) {
  auto measured = [](std::vector<double> costs, std::vector<double> baseline) {
    MeasureResult m;
    m.costs_s = std::move(costs);
    m.baseline_costs_s = std::move(baseline);
    return m;
  };
  constexpr double kFallbackCost = 18.0;  // the fallback record's own cost, in any unit
  BaselineHistory history;
  // Too few earlier children to tell: each over its own baseline, even the slow one.
  EXPECT_EQ(history.costs(measured({1.5, 1.8}, {3.1, 3.0}), kFallbackCost),
            (std::vector<double>{1.5 * (18.0 / 3.0), 1.8 * (18.0 / 3.0)}));
  EXPECT_EQ(history.costs(measured({10.0}, {10.0, 9.0}), kFallbackCost),
            (std::vector<double>{20.0}));
  EXPECT_EQ(history.costs(measured({4.0}, {4.0}), kFallbackCost), (std::vector<double>{18.0}));
  EXPECT_EQ(history.costs(measured({3.0}, {2.0}), kFallbackCost), (std::vector<double>{27.0}));
  EXPECT_EQ(history.slow_phases(), 0);
  // Earlier fastest times 3, 9, 4, 2: median 4 (the upper of the middle two). A baseline at 6
  // is within 1.5x of it; then, with 6 added (median still 4), one at 6.5 is not, and its
  // candidate is costed over 4.
  EXPECT_EQ(history.costs(measured({3.0}, {6.0}), kFallbackCost), (std::vector<double>{9.0}));
  EXPECT_EQ(history.costs(measured({4.6, 5.0}, {10.0, 6.5}), kFallbackCost),
            (std::vector<double>{4.6 * (18.0 / 4.0), 5.0 * (18.0 / 4.0)}));
  EXPECT_EQ(history.slow_phases(), 1);
  // Without baseline times the costs stay as they are.
  EXPECT_EQ(history.costs(measured({2.0}, {}), kFallbackCost), (std::vector<double>{2.0}));
}

TEST(MeasureTest, MinRepeatMsRaisesNumber) {
  MatmulProblem p;
  MeasureOptions opt = quick();
  opt.min_repeat_ms = 20;
  MeasureResult r = measure(matmul_candidate(), "mm", p.inputs, p.reference, opt);
  ASSERT_EQ(r.error, MeasureError::kNone) << r.message;
  EXPECT_GT(r.number, opt.number);
  ASSERT_EQ(r.costs_s.size(), 3u);
  // Each measurement (number runs) lasted at least min_repeat_ms.
  for (double c : r.costs_s) EXPECT_GE(c * r.number * 1e3, opt.min_repeat_ms * 0.999);
}

TEST(MeasureTest, WrongResultIsRejected) {
  MatmulProblem p;
  MeasureResult r = measure(matmul_candidate(kK - 1), "mm", p.inputs, p.reference, quick());
  ASSERT_EQ(r.error, MeasureError::kWrongAnswer) << r.message;
  EXPECT_NE(r.message.find("output 0 (float32 [32, 24])"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("the first at [0, 0]: got"), std::string::npos) << r.message;
  EXPECT_TRUE(r.costs_s.empty());
  EXPECT_EQ(r.mean_cost_s(), std::numeric_limits<double>::infinity());
}

TEST(MeasureTest, RtolDecidesAcceptance) {
  // The reference off by 2e-3 * max(1, |y|): rejected at the default rtol 1e-4, accepted at 1e-2.
  MatmulProblem p;
  for (int64_t i = 0; i < p.reference[0].numel(); ++i) {
    float& y = p.reference[0].data<float>()[i];
    y += 2e-3f * std::max(1.0f, std::abs(y));
  }
  p.reference[0].data<float>()[0] = 100;  // far beyond any relative tolerance below 1
  MeasureOptions opt = quick();
  MeasureResult strict = measure(matmul_candidate(), "mm", p.inputs, p.reference, opt);
  EXPECT_EQ(strict.error, MeasureError::kWrongAnswer) << strict.message;
  EXPECT_NE(strict.message.find("768 of 768 elements differ"), std::string::npos) << strict.message;
  opt.rtol = 1e-2;
  MeasureResult loose = measure(matmul_candidate(), "mm", p.inputs, p.reference, opt);
  EXPECT_EQ(loose.error, MeasureError::kWrongAnswer);
  EXPECT_NE(loose.message.find("1 of 768 elements differ (rtol 0.01); the first at [0, 0]"),
            std::string::npos)
      << loose.message;
}

TEST(MeasureTest, UnwrittenOutputIsWrongAndInputWritesStayInTheChild) {
  // The kernel scribbles on its first input and never writes its output.
  MatmulProblem p;
  float before = p.inputs[0].data<float>()[0];
  auto scribble = [](const TesselValue* args, const int32_t*, int32_t) {
    static_cast<float*>(static_cast<DLTensor*>(args[0].v_handle)->data)[0] = 42;
  };
  MeasureResult r = measure(fake_candidate(scribble), "mm", p.inputs, p.reference, quick());
  ASSERT_EQ(r.error, MeasureError::kWrongAnswer) << r.message;
  EXPECT_NE(r.message.find("got -nan"), std::string::npos) << r.message;  // the 0xFF poison
  EXPECT_EQ(p.inputs[0].data<float>()[0], before);
}

TEST(MeasureTest, BuilderErrorIsBuildError) {
  MatmulProblem p;
  auto throwing = []() -> runtime::Module { throw Error("split factor 7 does not divide 24"); };
  MeasureResult r = measure(throwing, "mm", p.inputs, p.reference, quick());
  EXPECT_EQ(r.error, MeasureError::kBuildError);
  EXPECT_EQ(r.message, "split factor 7 does not divide 24");
  EXPECT_TRUE(r.costs_s.empty());
}

TEST(MeasureTest, InvalidScheduleAndMissingFunctionAreBuildErrors) {
  MatmulProblem p;
  MeasureResult bad_split = measure(matmul_candidate(kK, 0), "mm", p.inputs, p.reference, quick());
  EXPECT_EQ(bad_split.error, MeasureError::kBuildError) << bad_split.message;
  EXPECT_NE(bad_split.message.find("split"), std::string::npos) << bad_split.message;

  MeasureResult missing = measure(matmul_candidate(), "matmul", p.inputs, p.reference, quick());
  EXPECT_EQ(missing.error, MeasureError::kBuildError) << missing.message;
  EXPECT_NE(missing.message.find("matmul"), std::string::npos) << missing.message;
}

TEST(MeasureTest, KernelErrorIsRuntimeError) {
  // A: [kM, kK + 1] is rejected by the generated argument check.
  MatmulProblem p;
  p.inputs[0] = random_array({kM, kK + 1}, 3);
  MeasureResult r = measure(matmul_candidate(), "mm", p.inputs, p.reference, quick());
  EXPECT_EQ(r.error, MeasureError::kRuntimeError) << r.message;
  EXPECT_FALSE(r.message.empty());
}

TEST(MeasureTest, CrashWhileBuildingIsRuntimeError) {
  MatmulProblem p;
  auto crashing = []() -> runtime::Module {
    std::raise(SIGSEGV);
    return {};
  };
  MeasureResult r = measure(crashing, "mm", p.inputs, p.reference, quick());
  EXPECT_EQ(r.error, MeasureError::kRuntimeError);
  // Signal 11, or 6 under AddressSanitizer, which turns the SEGV into an abort.
  EXPECT_NE(r.message.find("died of signal"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("while building"), std::string::npos) << r.message;
}

TEST(MeasureTest, CrashWhileRunningIsRuntimeError) {
  MatmulProblem p;
  auto aborting = [](const TesselValue*, const int32_t*, int32_t) { std::abort(); };
  MeasureResult r = measure(fake_candidate(aborting), "mm", p.inputs, p.reference, quick());
  EXPECT_EQ(r.error, MeasureError::kRuntimeError);
  EXPECT_NE(r.message.find("signal 6"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("while running"), std::string::npos) << r.message;
}

// Hangs in the build and in the run are killed at the timeout.
TEST(MeasureTest, HangIsTimeout) {
  MatmulProblem p;
  auto sleep_forever = [] {
    for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
  };
  auto hanging_build = [&]() -> runtime::Module {
    sleep_forever();
    return {};
  };
  auto hanging_run = [&](const TesselValue*, const int32_t*, int32_t) { sleep_forever(); };
  struct Case {
    CandidateBuilder build;
    const char* phase;
  };
  for (const Case& c : {Case{hanging_build, "while building"},
                        Case{fake_candidate(hanging_run), "while running"}}) {
    auto t0 = std::chrono::steady_clock::now();
    MeasureResult r = measure(c.build, "mm", p.inputs, p.reference, quick(1));
    double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_EQ(r.error, MeasureError::kTimeout) << r.message;
    EXPECT_NE(r.message.find(c.phase), std::string::npos) << r.message;
    EXPECT_GE(waited, 1.0);
    EXPECT_LT(waited, 2.0);
    EXPECT_NEAR(r.elapsed_s, waited, 0.1);
  }
}

TEST(MeasureTest, InvalidOptionsAreErrors) {
  MatmulProblem p;
  auto opt_with = [](auto change) {
    MeasureOptions opt;
    change(opt);
    return opt;
  };
  for (const MeasureOptions& opt :
       {opt_with([](MeasureOptions& o) { o.number = 0; }),
        opt_with([](MeasureOptions& o) { o.repeat = 0; }),
        opt_with([](MeasureOptions& o) { o.timeout_s = 0; }),
        opt_with([](MeasureOptions& o) { o.rtol = -1; }),
        opt_with([](MeasureOptions& o) { o.min_repeat_ms = -1; }),
        // NaN passed `timeout_s > 0`'s negation, and an infinite or huge timeout overflowed the
        // deadline.
        opt_with([](MeasureOptions& o) { o.timeout_s = std::numeric_limits<double>::quiet_NaN(); }),
        opt_with([](MeasureOptions& o) { o.timeout_s = std::numeric_limits<double>::infinity(); }),
        opt_with([](MeasureOptions& o) { o.timeout_s = 1e300; }), opt_with([](MeasureOptions& o) {
          o.min_repeat_ms = std::numeric_limits<double>::infinity();
        })}) {
    EXPECT_THROW(measure(matmul_candidate(), "mm", p.inputs, p.reference, opt), Error);
  }
  std::vector<runtime::NDArray> half_ref{runtime::NDArray::empty({2}, DataType::f16())};
  EXPECT_THROW(measure(matmul_candidate(), "mm", p.inputs, half_ref, MeasureOptions{}), Error);
}

}  // namespace
}  // namespace tessel::autotune
