#include "ir/structural_equal.h"

#include <gtest/gtest.h>

#include "ir/printer.h"

namespace tessel {

Stmt make_loop(const Buffer& buf, const char* name) {
  Var i(name);
  return ForNode::make(i, 0, 8, ForKind::kSerial, BufferStoreNode::make(buf, PrimExpr(1.0f), {i}));
}

TEST(StructuralEqualTest, BoundVarsMatchByPosition) {
  Buffer a = Buffer::make("A", DataType::f32(), {8});
  EXPECT_TRUE(structural_equal(make_loop(a, "i"), make_loop(a, "j")));
  EXPECT_EQ(structural_hash(make_loop(a, "i")), structural_hash(make_loop(a, "j")));
}

TEST(StructuralEqualTest, FreeVarsNeedIdentityUnlessMapped) {
  Var x("x"), y("x");
  EXPECT_FALSE(structural_equal(x + 1, y + 1));
  EXPECT_TRUE(structural_equal(x + 1, y + 1, /*map_free_vars=*/true));
  // A renaming must be consistent: x -> y cannot also be x -> z.
  Var z("z");
  EXPECT_FALSE(structural_equal(x + x, y + z, true));
}

TEST(StructuralEqualTest, DetectsDifferences) {
  Var x("x");
  EXPECT_FALSE(structural_equal(x + 1, x + 2));
  EXPECT_FALSE(structural_equal(x + 1, x - 1));
  EXPECT_FALSE(structural_equal(cast(DataType::i64(), x), cast(DataType::i32().with_lanes(1), x)));
  Buffer a = Buffer::make("A", DataType::f32(), {8});
  Buffer b = Buffer::make("B", DataType::f32(), {8});
  EXPECT_FALSE(structural_equal(make_loop(a, "i"), make_loop(b, "i")));
  EXPECT_TRUE(structural_equal(make_loop(a, "i"), make_loop(b, "i"), true));
}

}  // namespace tessel
