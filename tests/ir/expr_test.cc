#include "ir/expr.h"

#include <gtest/gtest.h>

#include <limits>

#include "ir/error.h"
#include "ir/printer.h"
#include "tests/common/expect_error.h"

namespace tessel {

using tessel::testing::expect_error;

TEST(DataTypeTest, StrAndParseRoundTrip) {
  for (DataType t :
       {DataType::i8(), DataType::i32(), DataType::u16(), DataType::f32(), DataType::f64(),
        DataType::boolean(), DataType::f32().with_lanes(8), DataType::i64().with_lanes(4),
        DataType::bf16(), DataType::bf16().with_lanes(8)}) {
    EXPECT_EQ(DataType::parse(t.str()), t) << t.str();
  }
  EXPECT_EQ(DataType::bf16().str(), "bfloat16");
  // bfloat16 is its own code (DLPack's kDLBfloat), not a float16 that float code paths would take.
  EXPECT_EQ(DataType::bf16().code(), DataType::kBFloat);
  EXPECT_FALSE(DataType::bf16().is_float());
  EXPECT_EQ(DataType::bf16().bytes(), 2);
  EXPECT_EQ(DataType::f32().with_lanes(16).str(), "float32x16");
  EXPECT_EQ(DataType::boolean().str(), "bool");
}

TEST(DataTypeTest, ParseRejectsGarbageWithClearMessage) {
  expect_error([] { DataType::parse("float33"); }, {"float33"});
  // Lane counts and bit widths are whole decimal numbers in range, not wrapped or truncated.
  for (const char* bad : {"float32x65536", "float32x-1", "float32x0", "float32x8abc", "float32x",
                          "float32abc", "int 8", "float+32"}) {
    expect_error([bad] { DataType::parse(bad); }, {bad});
  }
  EXPECT_EQ(DataType::parse("float32x1024").lanes(), 1024);
}

TEST(ExprTest, IntegerConstantsFold) {
  PrimExpr e = PrimExpr(3) * 4 + 5;
  ASSERT_NE(as_const_int(e), nullptr);
  EXPECT_EQ(*as_const_int(e), 17);
  EXPECT_EQ(*as_const_int(floordiv(PrimExpr(-7), 2)), -4);
  EXPECT_EQ(*as_const_int(floormod(PrimExpr(-7), 2)), 1);
  EXPECT_EQ(*as_const_int(ceildiv(PrimExpr(10), 4)), 3);
}

TEST(ExprTest, TypeLimits) {
  EXPECT_EQ(*as_const_int(max_value(DataType::i64())), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(*as_const_int(min_value(DataType::i64())), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(*as_const_int(max_value(DataType::i32())), std::numeric_limits<int32_t>::max());
  EXPECT_EQ(*as_const_int(max_value(DataType::u8())), 255);
}

TEST(ExprTest, IdentitiesDoNotBuildNodes) {
  Var x("x");
  EXPECT_TRUE((x + 0).same_as(x));
  EXPECT_TRUE((x * 1).same_as(x));
  EXPECT_TRUE(is_zero(x * 0));
  EXPECT_TRUE(floordiv(x, 1).same_as(x));
}

TEST(ExprTest, ConstantsAdoptTheOtherSideType) {
  Var x("x", DataType::i64());
  EXPECT_EQ((x + 1).dtype(), DataType::i64());
  Var f("f", DataType::f32());
  EXPECT_EQ((f * 2).dtype(), DataType::f32());
  EXPECT_EQ((x < 3).dtype(), DataType::boolean());
}

TEST(ExprTest, IntMeetsFloatAsFloat) {
  Var i("i"), f("f", DataType::f32());
  PrimExpr e = i + f;
  EXPECT_EQ(e.dtype(), DataType::f32());
  EXPECT_NE(e.as<AddNode>()->a.as<CastNode>(), nullptr);
}

TEST(ExprTest, ScalarsBroadcastToVectors) {
  PrimExpr v = RampNode::make(Var("i"), 1, 8);
  PrimExpr e = v * 2;
  EXPECT_EQ(e.dtype(), DataType::i32().with_lanes(8));
}

TEST(ExprTest, UserErrorsNameTheProblem) {
  Var f("f", DataType::f32());
  EXPECT_THROW(floordiv(f, f), Error);
  EXPECT_THROW(Var("b", DataType::f32()) && Var("c", DataType::f32()), Error);
  EXPECT_THROW(floordiv(Var("x"), 0), Error);
  expect_error([] { exp(Var("n")); }, {"exp needs a floating-point argument"});
}

TEST(ExprTest, InternalChecksAreNotUserErrors) {
  Var x("x"), y("y", DataType::i64());
  EXPECT_THROW(AddNode::make(x, y), InternalError);
}

TEST(ExprTest, RefCountingReleasesNodes) {
  Var x("x");
  EXPECT_EQ(x->use_count(), 1);
  {
    PrimExpr a = x + 1;
    EXPECT_EQ(x->use_count(), 2);
  }
  EXPECT_EQ(x->use_count(), 1);
}

TEST(ExprTest, AsChecksTheKindTag) {
  PrimExpr e = Var("x") + 1;
  EXPECT_NE(e.as<AddNode>(), nullptr);
  EXPECT_EQ(e.as<SubNode>(), nullptr);
  EXPECT_EQ(PrimExpr().as<AddNode>(), nullptr);
}

}  // namespace tessel
