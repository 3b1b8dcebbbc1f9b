// The inline float32 exp, tanh, erf and sigmoid (codegen/llvm/float_math.h) against double
// precision std:: functions over their whole range: a dense sweep, the branch and clamp edges, the
// extremes and the special values; and the vector form equal, bit for bit, to the scalar form.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <vector>

#include "tests/codegen/codegen_test_util.h"

namespace tessel {
namespace {

using namespace tessel::testing;

constexpr int kLanes = 16;

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
  while (x.size() % kLanes != 0) x.push_back(0.5f);
  return x;
}

// OUT = op(X) elementwise, in scalar form or kLanes-lane vectors.
runtime::NDArray run(Intrinsic op, int lanes, const std::vector<float>& x) {
  auto n = static_cast<int64_t>(x.size());
  Buffer in = Buffer::make("X", DataType::f32(), {PrimExpr(n)});
  Buffer out = Buffer::make("OUT", DataType::f32(), {PrimExpr(n)});
  Var i("i");
  PrimExpr idx = lanes == 1 ? PrimExpr(i) : ramp(i * lanes, lanes);
  PrimExpr call = CallNode::make(DataType::f32().with_lanes(lanes), op, {load(in, idx)});
  runtime::Module mod =
      build(make_func("f", {in, out}, loop(i, PrimExpr(n / lanes), store(out, call, idx))),
            host_target());
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

TEST(FloatMathTest, MatchesDoublePrecisionOverTheWholeRange) {
  const double ulp = std::numeric_limits<float>::epsilon();
  std::vector<Case> cases = {
      {Intrinsic::exp, [](double v) { return std::exp(v); }, 1.0 * ulp, 0},
      {Intrinsic::tanh, [](double v) { return std::tanh(v); }, 2e-7, 0},
      {Intrinsic::erf, [](double v) { return std::erf(v); }, 2e-7, 1e-7},
      {Intrinsic::sigmoid, [](double v) { return 1 / (1 + std::exp(-v)); }, 3e-7, 0},
  };
  std::vector<float> x = inputs();
  for (const Case& c : cases) {
    runtime::NDArray scalar = run(c.op, 1, x), vector = run(c.op, kLanes, x);
    EXPECT_EQ(std::memcmp(scalar.raw_data(), vector.raw_data(), scalar.nbytes()), 0)
        << intrinsic_name(c.op) << ": the vector form differs from the scalar form";
    for (size_t k = 0; k < x.size(); ++k) {
      float got = scalar.data<float>()[k];
      double want = c.reference(x[k]);
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(got)) << intrinsic_name(c.op) << "(" << x[k] << ") = " << got;
      } else if (std::isinf(want) || std::fabs(want) > std::numeric_limits<float>::max()) {
        EXPECT_EQ(got, static_cast<float>(want)) << intrinsic_name(c.op) << "(" << x[k] << ")";
      } else {
        // Results in float32's subnormal range keep their absolute accuracy only.
        double tolerance =
            c.abs + c.rel * std::fabs(want) + std::numeric_limits<float>::denorm_min();
        if (std::fabs(want) < std::numeric_limits<float>::min()) tolerance += 1e-38;
        EXPECT_NEAR(got, want, tolerance) << intrinsic_name(c.op) << "(" << x[k] << ")";
      }
    }
  }
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

}  // namespace
}  // namespace tessel
