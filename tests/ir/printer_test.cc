#include "ir/printer.h"

#include <gtest/gtest.h>

namespace tessel {

TEST(PrinterTest, PrecedenceNeedsFewParentheses) {
  Var i("i"), j("j");
  EXPECT_EQ(to_string(i * 4 + j), "i*4 + j");
  EXPECT_EQ(to_string((i + j) * 4), "(i + j)*4");
  EXPECT_EQ(to_string(i - (j - 1)), "i - (j - 1)");
  EXPECT_EQ(to_string(floordiv(i, 4) + floormod(j, 3)), "i // 4 + j % 3");
  EXPECT_EQ(to_string(i < 4 && j >= 2), "i < 4 && j >= 2");
}

TEST(PrinterTest, DistinctVarsWithTheSameHintGetDistinctNames) {
  Var a("i"), b("i");
  EXPECT_EQ(to_string(a + b), "i + i_1");
}

TEST(PrinterTest, LiteralsShowTheirType) {
  EXPECT_EQ(to_string(PrimExpr(1.5f)), "1.5f");
  EXPECT_EQ(to_string(make_const(DataType::i64(), 3)), "3_int64");
  EXPECT_EQ(to_string(make_const(DataType::boolean(), 1)), "True");
}

TEST(PrinterTest, StatementsAndBuffers) {
  Buffer a = Buffer::make("A", DataType::f32(), {16});
  Var i("i");
  Stmt loop = ForNode::make(i, 0, 16, ForKind::kParallel,
                            BufferStoreNode::make(a, BufferLoadNode::make(a, {i}) * 2.0f, {i}));
  EXPECT_EQ(to_string(loop), "parallel for (i, 0, 16) {\n  A[i] = A[i]*2f\n}\n");
}

}  // namespace tessel
