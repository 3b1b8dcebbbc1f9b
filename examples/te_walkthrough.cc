// Prints the lowered loop IR of a matmul after each schedule primitive: the walkthrough in
// docs/te.md is this program's output.
#include <iostream>

#include "te/lower.h"
#include "topi/matmul.h"

using namespace tessel;

int main() {
  const int M = 1024, N = 1024, K = 1024;
  auto A = te::placeholder({M, K}, DataType::f32(), "A");
  auto B = te::placeholder({K, N}, DataType::f32(), "B");
  auto k = te::reduce_axis(0, K, "k");
  auto C = te::compute(
      {M, N}, [&](te::Expr i, te::Expr j) { return te::sum(A(i, k) * B(k, j), {k}); }, "C");
  te::Schedule s = te::create_schedule({C});
  auto show = [&](const char* step) {
    std::cout << "### " << step << "\n```\n" << te::lower(s, {A, B, C}, "matmul") << "```\n\n";
  };
  show("create_schedule");
  auto [io, jo, ii, ji] = s[C].tile(C.axis(0), C.axis(1), 32, 32);
  show("s[C].tile(i, j, 32, 32)");
  s[C].reorder({io, jo, k, ii, ji});
  show("s[C].reorder({io, jo, k, ii, ji})");
  s[C].vectorize(ji);
  show("s[C].vectorize(ji)");
  s[C].parallel(io);
  show("s[C].parallel(io)");
  std::cout << "### trace\n```\n" << s.trace().str() << "```\n";
  return 0;
}
