#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include "tests/codegen/codegen_test_util.h"

namespace tessel {
namespace {

using namespace tessel::testing;

struct IntrinCase {
  Intrinsic op;
  std::function<double(double, double, double)> reference;
  double lo, hi;  // input range of every argument
};

std::vector<IntrinCase> intrinsic_cases() {
  using std::sqrt;
  return {
      {Intrinsic::exp, [](double x, double, double) { return std::exp(x); }, -5, 5},
      {Intrinsic::exp2, [](double x, double, double) { return std::exp2(x); }, -5, 5},
      {Intrinsic::log, [](double x, double, double) { return std::log(x); }, 0.01, 50},
      {Intrinsic::log2, [](double x, double, double) { return std::log2(x); }, 0.01, 50},
      {Intrinsic::sqrt, [](double x, double, double) { return std::sqrt(x); }, 0, 50},
      {Intrinsic::rsqrt, [](double x, double, double) { return 1 / std::sqrt(x); }, 0.01, 50},
      {Intrinsic::tanh, [](double x, double, double) { return std::tanh(x); }, -4, 4},
      {Intrinsic::sigmoid, [](double x, double, double) { return 1 / (1 + std::exp(-x)); }, -8, 8},
      {Intrinsic::erf, [](double x, double, double) { return std::erf(x); }, -3, 3},
      {Intrinsic::pow, [](double x, double y, double) { return std::pow(x, y); }, 0.1, 3},
      {Intrinsic::fabs, [](double x, double, double) { return std::fabs(x); }, -5, 5},
      {Intrinsic::floor, [](double x, double, double) { return std::floor(x); }, -5, 5},
      {Intrinsic::ceil, [](double x, double, double) { return std::ceil(x); }, -5, 5},
      {Intrinsic::round, [](double x, double, double) { return std::nearbyint(x); }, -5, 5},
      {Intrinsic::trunc, [](double x, double, double) { return std::trunc(x); }, -5, 5},
      {Intrinsic::sin, [](double x, double, double) { return std::sin(x); }, -6, 6},
      {Intrinsic::cos, [](double x, double, double) { return std::cos(x); }, -6, 6},
      {Intrinsic::fma, [](double x, double y, double z) { return std::fma(x, y, z); }, -3, 3},
  };
}

// Inputs spread over [lo, hi], including exact halves so round's tie rule is exercised.
float input(int64_t k, int arg, double lo, double hi, int64_t n) {
  double t = static_cast<double>((k * (arg + 3)) % n) / static_cast<double>(n - 1);
  double v = lo + t * (hi - lo);
  return static_cast<float>(std::clamp(std::round(v * 4) / 4, lo, hi));
}

// OUT = op(X, Y, Z) elementwise, in scalar form or 8-lane vectors.
TEST(CodeGenLLVMIntrinTest, EveryMathIntrinsicMatchesStd) {
  const int64_t n = 64;
  for (const IntrinCase& c : intrinsic_cases()) {
    int arity = intrinsic_arity(c.op);
    for (int lanes : {1, 8}) {
      std::vector<Buffer> buffers;
      for (const char* name : {"X", "Y", "Z", "OUT"}) {
        buffers.push_back(Buffer::make(name, DataType::f32(), {PrimExpr(n)}));
      }
      Var i("i");
      PrimExpr idx = lanes == 1 ? PrimExpr(i) : ramp(i * lanes, lanes);
      std::vector<PrimExpr> args;
      for (int k = 0; k < arity; ++k) args.push_back(load(buffers[k], idx));
      PrimExpr call = CallNode::make(DataType::f32().with_lanes(lanes), c.op, args);
      Stmt body = loop(i, PrimExpr(n / lanes), store(buffers[3], call, idx));
      runtime::Module mod = build(make_func("intrin", buffers, body), host_target());
      std::vector<runtime::NDArray> arrays;
      for (int a = 0; a < 3; ++a) {
        arrays.push_back(float_array({n}, [&](int64_t k) { return input(k, a, c.lo, c.hi, n); }));
      }
      arrays.push_back(float_array({n}, [](int64_t) { return 0.0f; }));
      mod.get_function("intrin")(arrays[0], arrays[1], arrays[2], arrays[3]);
      for (int64_t k = 0; k < n; ++k) {
        double expected = c.reference(arrays[0].data<float>()[k], arrays[1].data<float>()[k],
                                      arrays[2].data<float>()[k]);
        EXPECT_NEAR(arrays[3].data<float>()[k], expected, 2e-6 + 2e-6 * std::fabs(expected))
            << intrinsic_name(c.op) << " lanes " << lanes << " x=" << arrays[0].data<float>()[k];
      }
    }
  }
}

TEST(CodeGenLLVMIntrinTest, IsNanInScalarAndVectorForm) {
  const int64_t n = 16;
  for (int lanes : {1, 8}) {
    Buffer x = Buffer::make("X", DataType::f32(), {PrimExpr(n)});
    Buffer out = Buffer::make("OUT", DataType::i32(), {PrimExpr(n)});
    Var i("i");
    PrimExpr idx = lanes == 1 ? PrimExpr(i) : ramp(i * lanes, lanes);
    PrimExpr nan = CallNode::make(DataType::boolean(lanes), Intrinsic::isnan, {load(x, idx)});
    Stmt body =
        loop(i, PrimExpr(n / lanes), store(out, cast(DataType::i32().with_lanes(lanes), nan), idx));
    runtime::Module mod = build(make_func("nan", {x, out}, body), host_target());
    auto xs = float_array({n}, [](int64_t k) { return k % 3 == 0 ? NAN : float(k); });
    auto result = runtime::NDArray::empty({n}, DataType::i32());
    mod.get_function("nan")(xs, result);
    for (int k = 0; k < n; ++k) EXPECT_EQ(result.data<int32_t>()[k], k % 3 == 0 ? 1 : 0) << k;
  }
}

}  // namespace
}  // namespace tessel
