#include "tir/transforms/lower_intrinsics.h"

#include <gtest/gtest.h>

#include <cmath>

#include "ir/functor.h"
#include "test_util.h"

namespace tessel::tir {
namespace {

using testing::Interpreter;
using testing::ir_equal;

bool has_call(const PrimExpr& e, Intrinsic op) {
  struct Finder : IRVisitor {
    Intrinsic op;
    bool found = false;
    void visit_Call(const CallNode* c, const PrimExpr& self) override {
      found |= c->op == op;
      IRVisitor::visit_Call(c, self);
    }
  } finder;
  finder.op = op;
  finder.visit_expr(e);
  return finder.found;
}

// Max abs error of the lowered `op` against `reference` over [-10, 10], evaluated in float32.
double max_error(PrimExpr (*op)(PrimExpr), double (*reference)(double)) {
  Var x("x", DataType::f32());
  PrimExpr lowered = lower_intrinsic_calls(op(x));
  EXPECT_FALSE(has_call(lowered, Intrinsic::tanh) || has_call(lowered, Intrinsic::erf));
  Interpreter interp;
  double worst = 0;
  for (int k = -20000; k <= 20000; ++k) {
    float v = static_cast<float>(k) * 5e-4f;
    interp.env[x.get()] = {v};
    double got = interp.eval(lowered)[0];
    worst = std::max(worst, std::fabs(got - reference(v)));
  }
  return worst;
}

TEST(LowerIntrinsicsTest, TanhApproximationIsAccurate) {
  EXPECT_LT(max_error(tanh, [](double v) { return std::tanh(v); }), 2e-6);
}

TEST(LowerIntrinsicsTest, ErfApproximationIsAccurate) {
  EXPECT_LT(max_error(erf, [](double v) { return std::erf(v); }), 2e-6);
}

TEST(LowerIntrinsicsTest, SigmoidAndRsqrtBecomeArithmetic) {
  Var x("x", DataType::f32());
  EXPECT_TRUE(ir_equal(EvaluateNode::make(lower_intrinsic_calls(sigmoid(x))),
                       EvaluateNode::make(PrimExpr(1.0f) / (PrimExpr(1.0f) + exp(-x)))));
  EXPECT_TRUE(ir_equal(EvaluateNode::make(lower_intrinsic_calls(rsqrt(x))),
                       EvaluateNode::make(PrimExpr(1.0f) / sqrt(x))));
}

TEST(LowerIntrinsicsTest, VectorCallsLowerToVectorArithmetic) {
  Buffer a = Buffer::make("A", DataType::f32(), {64});
  PrimExpr v = BufferLoadNode::make(a, {RampNode::make(PrimExpr(0), PrimExpr(1), 8)});
  PrimExpr lowered = lower_intrinsic_calls(tanh(v) + sigmoid(v));
  EXPECT_EQ(lowered.dtype(), DataType::f32().with_lanes(8));
  EXPECT_FALSE(has_call(lowered, Intrinsic::tanh));
  EXPECT_FALSE(has_call(lowered, Intrinsic::sigmoid));
  EXPECT_TRUE(has_call(lowered, Intrinsic::exp));
  // A loaded argument is evaluated once, through a let.
  EXPECT_TRUE(lowered.as<AddNode>()->a.is<LetNode>());
}

TEST(LowerIntrinsicsTest, KeepsNativeCallsAndFloat64) {
  Var x("x", DataType::f32()), d("d", DataType::f64());
  Buffer a = Buffer::make("A", DataType::f32(), {8});
  PrimExpr kept = exp(x) + log(x) + sqrt(x) + floor(x);
  Stmt body = IfThenElseNode::make(
      likely(x < 1.0f), BufferStoreNode::make(a, kept + cast(DataType::f32(), tanh(d)), {0}));
  PrimFunc f = PrimFunc::make("f", {a->data}, {a}, body);
  EXPECT_TRUE(lower_intrinsics(f).same_as(f));
}

}  // namespace
}  // namespace tessel::tir
