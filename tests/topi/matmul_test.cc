// The register-tiled CPU matmul: correct on sizes the tiles do not divide, and really compiled
// to vector FMA instructions.
#include "topi/matmul.h"

#include <gtest/gtest.h>

#include <regex>

#include "codegen/build.h"
#include "ir/error.h"
#include "te/lower.h"
#include "tests/common/ndarray.h"

namespace tessel::topi {
namespace {

using tessel::testing::random_array;

class MatmulCpuTest : public ::testing::TestWithParam<std::tuple<int, int, int>> {};

TEST_P(MatmulCpuTest, MatchesNaiveLoops) {
  auto [M, N, K] = GetParam();
  Matmul mm = matmul_packed(M, N, K, 32);
  runtime::Module m = build(schedule_matmul_cpu(mm, {}), {mm.A, mm.B, mm.C},
                            Target::parse("llvm -mcpu=native"), "mm");
  auto a = random_array({M, K}, 1), b = random_array({K, N}, 2);
  auto c = runtime::NDArray::empty({M, N}, DataType::f32());
  m.get_function("mm")(a, b, c);
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double want = 0;
      for (int k = 0; k < K; ++k)
        want += double(a.data<float>()[i * K + k]) * b.data<float>()[k * N + j];
      ASSERT_NEAR(c.data<float>()[i * N + j], want, 1e-4 * (1 + std::fabs(want)))
          << "C[" << i << ", " << j << "]";
    }
}

INSTANTIATE_TEST_SUITE_P(Sizes, MatmulCpuTest,
                         ::testing::Values(std::tuple{64, 64, 64}, std::tuple{100, 70, 33},
                                           std::tuple{1, 1, 1}, std::tuple{7, 129, 5},
                                           std::tuple{33, 31, 64}));

TEST(MatmulCpuAsmTest, MicroKernelUsesVectorFma) {
  Matmul mm = matmul_packed(256, 256, 256, 32);
  Target target = Target::parse("llvm -mcpu=native");
  PrimFunc f = te::lower(schedule_matmul_cpu(mm, {}), {mm.A, mm.B, mm.C}, "mm");
  std::string asm_text = emit_assembly({f}, target);
  // A 32-wide float tile: zmm FMAs with AVX-512, ymm with AVX2.
  std::string reg = target.vector_bits() >= 512 ? "zmm" : "ymm";
  std::regex fma("vfmadd[0-9]+ps[^\\n]*%" + reg);
  auto n = std::distance(std::sregex_iterator(asm_text.begin(), asm_text.end(), fma),
                         std::sregex_iterator());
  // 8 rows x 32 columns / lanes, unrolled 4 times over k.
  EXPECT_GE(n, 8 * 32 / (target.vector_bits() / 32) * 4) << "vector FMAs found: " << n;
}

TEST(MatmulCpuTest, BadPanelWidthIsAnError) {
  EXPECT_THROW(matmul_packed(8, 8, 8, 0), Error);
  Matmul plain = matmul(8, 8, 8);
  EXPECT_THROW(schedule_matmul_cpu(plain, {}), Error);
}

}  // namespace
}  // namespace tessel::topi
