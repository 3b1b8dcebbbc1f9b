#include "te/printer.h"

#include <gtest/gtest.h>

#include "ir/printer.h"
#include "te/operation.h"

namespace tessel::te {
namespace {

TEST(TePrinterTest, ReadsAndReductions) {
  Tensor A = placeholder({4, 8}, DataType::f32(), "A");
  IterVar k = reduce_axis(0, 8, "k");
  Tensor S = compute({4}, [&](Expr i) { return sum(A(i, k), {k}, k < 5); }, "S");
  const auto* c = S.op().as<ComputeOpNode>();
  EXPECT_EQ(body_to_string(c->body), "sum(A(i, k), axis=[k], where=k < 5)");
  Var i("i");
  EXPECT_EQ(body_to_string(S(i) * 2.0f + max(A(i, 0), {k})), "S(i)*2f + max(A(i, 0), axis=[k])");
}

TEST(TePrinterTest, IrPrinterShowsTeNodesAsPlaceholders) {
  Tensor A = placeholder({4}, DataType::f32(), "A");
  EXPECT_EQ(to_string(A(1) + 1.0f), "<non-ir node> + 1f");
}

}  // namespace
}  // namespace tessel::te
