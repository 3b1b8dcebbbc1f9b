// The inline float32 exp, tanh, erf and sigmoid (codegen/llvm/float_math.h) against double
// precision std:: functions over their whole range: a dense sweep, the branch and clamp edges, the
// extremes and the special values; the vector forms of any width equal, bit for bit, to the scalar
// form; and AVX-512 code (vscalefps) equal to the portable code of an AVX2 target.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <tuple>
#include <utility>
#include <vector>

#include "tests/codegen/codegen_test_util.h"

namespace tessel {
namespace {

using namespace tessel::testing;

constexpr int kLanes = 16;
// Vector widths other than AVX-512's 16 lanes: half of one register, one and a half, two.
constexpr int kOtherLanes[] = {8, 24, 32};

// Sweep points over [-120, 120] (dense near 0), the edges of each branch and clamp, and the
// special values; a multiple of kLanes long.
std::vector<float> inputs() {
  std::vector<float> x;
  for (int k = -12000; k <= 12000; ++k) x.push_back(0.01f * static_cast<float>(k));
  for (int k = -2000; k <= 2000; ++k) x.push_back(1e-4f * static_cast<float>(k));
  for (float edge : {0.55f, 1.0f, 4.5f, 88.7f, 88.72f, 89.0f, 89.5f, -87.3f, -103.9f, -104.0f,
                     -110.0f, 1e-30f, 1e-38f, 1e-45f, 3.4e38f}) {
    for (float v : {edge, std::nextafter(edge, 0.0f), std::nextafter(edge, 1e9f)}) {
      x.push_back(v);
      x.push_back(-v);
    }
  }
  const float inf = std::numeric_limits<float>::infinity();
  for (float v : {0.0f, -0.0f, inf, -inf, std::numeric_limits<float>::quiet_NaN()}) x.push_back(v);
  while (x.size() % 96 != 0) x.push_back(0.5f);  // whole vectors of every width tested
  return x;
}

// The targets this host runs: itself, and on an AVX-512 host also an AVX2 CPU, whose exp scales
// without vscalefps.
std::vector<Target> targets() {
  std::vector<Target> all = {host_target()};
  if (host_target().has_feature("avx512f")) all.push_back(Target::parse("llvm -mcpu=haswell"));
  return all;
}

// OUT = op(X) elementwise over n floats, in scalar form or `lanes`-lane vectors.
PrimFunc elementwise(Intrinsic op, int lanes, int64_t n) {
  Buffer in = Buffer::make("X", DataType::f32(), {PrimExpr(n)});
  Buffer out = Buffer::make("OUT", DataType::f32(), {PrimExpr(n)});
  Var i("i");
  PrimExpr idx = lanes == 1 ? PrimExpr(i) : ramp(i * lanes, lanes);
  PrimExpr call = CallNode::make(DataType::f32().with_lanes(lanes), op, {load(in, idx)});
  return make_func("f", {in, out}, loop(i, PrimExpr(n / lanes), store(out, call, idx)));
}

runtime::NDArray run(Intrinsic op, int lanes, const std::vector<float>& x,
                     const Target& target = host_target()) {
  auto n = static_cast<int64_t>(x.size());
  runtime::Module mod = build(elementwise(op, lanes, n), target);
  runtime::NDArray a = float_array({n}, [&](int64_t k) { return x[k]; });
  runtime::NDArray y = float_array({n}, [](int64_t) { return 0.0f; });
  mod.get_function("f")(a, y);
  return y;
}

struct Case {
  Intrinsic op;
  std::function<double(double)> reference;
  double rel, abs;  // allowed error: abs + rel * |reference|
};

// Each value of `scalar` (op of `x`) within the case's tolerance of the double-precision reference.
void expect_accurate(const Case& c, const std::vector<float>& x, const runtime::NDArray& scalar) {
  for (size_t k = 0; k < x.size(); ++k) {
    float got = scalar.data<float>()[k];
    double want = c.reference(x[k]);
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got)) << intrinsic_name(c.op) << "(" << x[k] << ") = " << got;
    } else if (std::isinf(want) || std::fabs(want) > std::numeric_limits<float>::max()) {
      EXPECT_EQ(got, static_cast<float>(want)) << intrinsic_name(c.op) << "(" << x[k] << ")";
    } else {
      // Results in float32's subnormal range keep their absolute accuracy only.
      double tolerance = c.abs + c.rel * std::fabs(want) + std::numeric_limits<float>::denorm_min();
      if (std::fabs(want) < std::numeric_limits<float>::min()) tolerance += 1e-38;
      EXPECT_NEAR(got, want, tolerance) << intrinsic_name(c.op) << "(" << x[k] << ")";
    }
  }
}

TEST(FloatMathTest, MatchesDoublePrecisionOverTheWholeRange) {
  const double ulp = std::numeric_limits<float>::epsilon();
  std::vector<Case> cases = {
      {Intrinsic::exp, [](double v) { return std::exp(v); }, 1.0 * ulp, 0},
      {Intrinsic::log, [](double v) { return std::log(v); }, 1.0 * ulp, 0},
      {Intrinsic::tanh, [](double v) { return std::tanh(v); }, 2e-7, 0},
      {Intrinsic::erf, [](double v) { return std::erf(v); }, 2e-7, 1e-7},
      {Intrinsic::sigmoid, [](double v) { return 1 / (1 + std::exp(-v)); }, 3e-7, 0},
  };
  std::vector<float> x = inputs();
  for (const Target& target : targets()) {
    SCOPED_TRACE(target.str());
    for (const Case& c : cases) {
      runtime::NDArray scalar = run(c.op, 1, x, target), vector = run(c.op, kLanes, x, target);
      EXPECT_EQ(std::memcmp(scalar.raw_data(), vector.raw_data(), scalar.nbytes()), 0)
          << intrinsic_name(c.op) << ": the vector form differs from the scalar form";
      expect_accurate(c, x, scalar);
    }
  }
}

// The largest error of op over x on target, in ulps of the double-precision reference (each
// reference is a normal float: ulps of that float's binade), and the x where it is.
std::pair<double, float> max_ulp_error(Intrinsic op, double (*reference)(double),
                                       const std::vector<float>& x, const Target& target) {
  runtime::NDArray y = run(op, kLanes, x, target);
  std::pair<double, float> worst{0, 0};
  for (size_t k = 0; k < x.size(); ++k) {
    double want = reference(x[k]);
    double ulp = std::ldexp(1.0, std::ilogb(want) - 23);
    double err = std::fabs(y.data<float>()[k] - want) / ulp;
    if (err > worst.first) worst = {err, x[k]};
  }
  return worst;
}

// exp over 2^20 points of [-87, 88] (normal results) and log over 2^20 points spread evenly in
// exponent over every positive float, subnormals included; each also over 2^16 points next to
// where its result is small ([-1, 1] for exp, [0.5, 2] for log). The polynomial's error and the
// roundings stay under one ulp. MatchesDoublePrecisionOverTheWholeRange's tolerance is relative,
// 2^-23 of the result, which allows up to 2 ulps for results just under a power of 2.
TEST(FloatMathTest, ExpAndLogAreWithinOneUlp) {
  auto spread = [](int n, float lo, float hi, auto f) {
    std::vector<float> x;
    for (int k = 0; k < n; ++k) x.push_back(f(lo + (hi - lo) * static_cast<float>(k) / n));
    return x;
  };
  auto same = [](float v) { return v; };
  auto pow2 = [](float e) { return std::exp2(e); };
  std::vector<float> exp_x = spread(1 << 20, -87, 88, same);
  std::vector<float> near_0 = spread(1 << 16, -1, 1, same);
  exp_x.insert(exp_x.end(), near_0.begin(), near_0.end());
  std::vector<float> log_x = spread(1 << 20, -149, 128, pow2);
  std::vector<float> near_1 = spread(1 << 16, 0.5f, 2.0f, same);
  log_x.insert(log_x.end(), near_1.begin(), near_1.end());
  for (const Target& target : targets()) {
    for (auto [op, reference, x] :
         {std::tuple{Intrinsic::exp, +[](double v) { return std::exp(v); }, &exp_x},
          std::tuple{Intrinsic::log, +[](double v) { return std::log(v); }, &log_x}}) {
      auto [worst, at] = max_ulp_error(op, reference, *x, target);
      EXPECT_LT(worst, 1.0) << target.cpu << ": " << intrinsic_name(op) << "(" << at << ")";
      std::printf("-mcpu=%s: %s within %.3f ulp\n", target.cpu.c_str(), intrinsic_name(op), worst);
    }
  }
}

// Vectors of any width give the scalar form's bits (vscalefps takes 16 lanes: 8 go in a padded
// piece, 24 in two, 32 in two whole ones), and AVX-512 code the bits of AVX2 code.
TEST(FloatMathTest, EveryWidthAndTargetGivesTheSameBits) {
  std::vector<float> x = inputs();
  std::vector<Target> all = targets();
  if (all.size() == 1) {
    std::printf("(this host has no AVX-512: vscalefps is not run, only the portable form)\n");
  }
  for (Intrinsic op :
       {Intrinsic::exp, Intrinsic::log, Intrinsic::tanh, Intrinsic::erf, Intrinsic::sigmoid}) {
    runtime::NDArray scalar = run(op, 1, x, all[0]);
    auto same = [&](const runtime::NDArray& y) {
      return std::memcmp(scalar.raw_data(), y.raw_data(), scalar.nbytes()) == 0;
    };
    for (const Target& target : all) {
      for (int lanes : kOtherLanes) {
        EXPECT_TRUE(same(run(op, lanes, x, target)))
            << intrinsic_name(op) << " in " << lanes << " lanes for " << target.str();
      }
      EXPECT_TRUE(same(run(op, 1, x, target))) << intrinsic_name(op) << " for " << target.str();
    }
  }
}

// AVX-512 code scales exp's result with vscalefps, one per 16 lanes (one vector of each width
// here); AVX2 code cannot.
TEST(FloatMathTest, Avx512CodeScalesWithVscalef) {
  auto scalefs = [](int lanes, const char* cpu) {
    std::string text =
        emit_assembly({elementwise(Intrinsic::exp, lanes, lanes)},
                      Target::parse(std::string("llvm -mtriple=x86_64-linux-gnu -mcpu=") + cpu));
    int count = 0;
    for (size_t at = text.find("vscalefps"); at != std::string::npos;
         at = text.find("vscalefps", at + 1)) {
      ++count;
    }
    return count;
  };
  EXPECT_EQ(scalefs(16, "skylake-avx512"), 1);
  EXPECT_EQ(scalefs(32, "skylake-avx512"), 2);
  EXPECT_EQ(scalefs(8, "skylake-avx512"), 1);
  EXPECT_EQ(scalefs(16, "haswell"), 0);
}

// exp saturates as float32 does: exactly 0 far below, inf above, and odd functions stay odd.
TEST(FloatMathTest, SaturatesAndKeepsSymmetry) {
  std::vector<float> x(kLanes);
  for (int k = 0; k < kLanes; ++k) x[k] = 0.37f * static_cast<float>(k + 1);
  std::vector<float> neg(x.size());
  for (size_t k = 0; k < x.size(); ++k) neg[k] = -x[k];
  for (Intrinsic op : {Intrinsic::tanh, Intrinsic::erf}) {
    runtime::NDArray pos = run(op, kLanes, x), negative = run(op, kLanes, neg);
    for (size_t k = 0; k < x.size(); ++k)
      EXPECT_EQ(pos.data<float>()[k], -negative.data<float>()[k]) << intrinsic_name(op) << x[k];
  }
  std::vector<float> far(kLanes, -200.0f);
  far[1] = 200.0f;
  runtime::NDArray e = run(Intrinsic::exp, kLanes, far);
  EXPECT_EQ(e.data<float>()[0], 0.0f);
  EXPECT_EQ(e.data<float>()[1], std::numeric_limits<float>::infinity());
}

// log's edges: -inf at either zero, NaN below zero and for NaN, inf at inf, 0 at 1 exactly, the
// smallest subnormal's log, and powers of 2 exact to the float nearest k ln 2.
TEST(FloatMathTest, LogEdges) {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> x = {0.0f,
                          -0.0f,
                          -1.0f,
                          -inf,
                          std::numeric_limits<float>::quiet_NaN(),
                          inf,
                          1.0f,
                          std::numeric_limits<float>::denorm_min(),
                          1024.0f,
                          0.125f,
                          std::numeric_limits<float>::max(),
                          std::numeric_limits<float>::min(),
                          1e-42f,
                          2.0f,
                          0.5f,
                          3.0f};
  for (const Target& target : targets()) {
    SCOPED_TRACE(target.cpu);
    runtime::NDArray y = run(Intrinsic::log, kLanes, x, target);
    const float* got = y.data<float>();
    EXPECT_EQ(got[0], -inf);
    EXPECT_EQ(got[1], -inf);
    for (int k : {2, 3, 4}) EXPECT_TRUE(std::isnan(got[k])) << "log(" << x[k] << ") = " << got[k];
    EXPECT_EQ(got[5], inf);
    EXPECT_EQ(got[6], 0.0f);
    for (int k = 7; k < kLanes; ++k) {
      EXPECT_EQ(got[k], static_cast<float>(std::log(static_cast<double>(x[k]))))
          << "log(" << x[k] << ")";
    }
  }
}

}  // namespace
}  // namespace tessel
