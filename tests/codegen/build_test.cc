#include "codegen/build.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include "runtime/jit.h"
#include "tests/codegen/codegen_test_util.h"
#include "tests/common/expect_error.h"

namespace tessel {
namespace {

using namespace tessel::testing;

PrimFunc elementwise_add(const std::string& name, int64_t n) {
  Buffer a = Buffer::make("A", DataType::f32(), {PrimExpr(n)});
  Buffer b = Buffer::make("B", DataType::f32(), {PrimExpr(n)});
  Buffer c = Buffer::make("C", DataType::f32(), {PrimExpr(n)});
  Var i("i");
  Stmt body = loop(i, PrimExpr(n), store(c, load(a, i) + load(b, i), i));
  return make_func(name, {a, b, c}, body);
}

// C[i] = A[i] * B[i] + C[i] over `lanes`-wide vectors (n is a multiple of lanes).
PrimFunc vector_mul_add(int64_t n, int lanes) {
  Buffer a = Buffer::make("A", DataType::f32(), {PrimExpr(n)});
  Buffer b = Buffer::make("B", DataType::f32(), {PrimExpr(n)});
  Buffer c = Buffer::make("C", DataType::f32(), {PrimExpr(n)});
  Var i("i");
  PrimExpr idx = ramp(i * lanes, lanes);
  Stmt body =
      loop(i, PrimExpr(n / lanes), store(c, load(a, idx) * load(b, idx) + load(c, idx), idx));
  return make_func("mul_add", {a, b, c}, body);
}

TEST(BuildTest, ElementwiseAddMatchesLoop) {
  const int64_t n = 1000;
  runtime::Module mod = build(elementwise_add("add", n), host_target());
  auto a = float_array({n}, [](int64_t i) { return 0.5f * i; });
  auto b = float_array({n}, [](int64_t i) { return 3.0f - i; });
  auto c = float_array({n}, [](int64_t) { return 0.0f; });
  mod.get_function("add")(a, b, c);
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_EQ(c.data<float>()[i], a.data<float>()[i] + b.data<float>()[i]) << i;
  }
}

// The vfmadd lines of the assembly, joined.
std::string fma_lines(const std::string& assembly) {
  std::istringstream in(assembly);
  std::string out;
  for (std::string line; std::getline(in, line);) {
    if (line.find("vfmadd") != std::string::npos) out += line + "\n";
  }
  return out;
}

TEST(BuildTest, VectorMulAddComputesAndFusesIntoVectorFma) {
  const Target& target = host_target();
  if (!target.has_feature("fma") || !target.has_feature("avx")) GTEST_SKIP() << "no FMA on host";
  for (int lanes : {8, 16}) {
    const int64_t n = 64;
    runtime::Module mod = build(vector_mul_add(n, lanes), target);
    auto a = float_array({n}, [](int64_t i) { return 0.25f * i; });
    auto b = float_array({n}, [](int64_t i) { return 2.0f - 0.5f * i; });
    auto c = float_array({n}, [](int64_t i) { return 1.0f * i; });
    mod.get_function("mul_add")(a, b, c);
    for (int64_t i = 0; i < n; ++i) {
      float expected = std::fma(0.25f * i, 2.0f - 0.5f * i, 1.0f * i);
      ASSERT_NEAR(c.data<float>()[i], expected, 1e-4f) << i;
    }
    // 8 float lanes fill a ymm register; 16 fill a zmm with AVX-512, else two ymm.
    std::string reg = lanes == 16 && target.vector_bits() >= 512 ? "%zmm" : "%ymm";
    std::string fmas = fma_lines(mod.source("asm"));
    EXPECT_NE(fmas.find(reg), std::string::npos) << "lanes " << lanes << ":\n" << mod.source("asm");
  }
}

TEST(BuildTest, SourcesAreOptimizedIrAndAssembly) {
  runtime::Module mod = build(elementwise_add("add", 16), host_target());
  EXPECT_NE(mod.source("ll").find("i32 @add(ptr"), std::string::npos) << mod.source("ll");
  EXPECT_EQ(mod.source(""), mod.source("ll"));
  EXPECT_NE(mod.source("asm").find("add:"), std::string::npos);
  expect_error([&] { mod.source("ptx"); }, {"ptx"});
  EXPECT_EQ(mod.node()->function_names(), std::vector<std::string>{"add"});
  expect_error([&] { mod.get_function("sub"); }, {"sub", "add"});
}

TEST(BuildTest, SeveralFunctionsInOneModule) {
  runtime::Module mod =
      build({elementwise_add("add1", 4), elementwise_add("add2", 8)}, host_target());
  auto a = float_array({8}, [](int64_t i) { return float(i); });
  auto c = float_array({8}, [](int64_t) { return 0.0f; });
  mod.get_function("add2")(a, a, c);
  EXPECT_EQ(c.data<float>()[7], 14.0f);
  expect_error([&] { build({elementwise_add("f", 4), elementwise_add("f", 8)}, host_target()); },
               {"two functions", "'f'"});
}

TEST(BuildTest, FunctionKeepsItsModuleAlive) {
  runtime::Function fn;
  {
    runtime::Module mod = build(elementwise_add("add", 4), host_target());
    fn = mod.get_function("add");
  }
  auto a = float_array({4}, [](int64_t i) { return float(i); });
  auto c = float_array({4}, [](int64_t) { return 0.0f; });
  fn(a, a, c);
  EXPECT_EQ(c.data<float>()[3], 6.0f);
}

TEST(BuildTest, CrossTargetEmitsButDoesNotBuild) {
  Target arm = Target::parse("llvm -mtriple=aarch64-linux-gnu");
  std::vector<PrimFunc> funcs{vector_mul_add(64, 4)};
  EXPECT_NE(emit_assembly(funcs, arm).find("fmla"), std::string::npos);
  EXPECT_EQ(emit_object(funcs, arm).substr(0, 4),
            "\x7f"
            "ELF");
  EXPECT_NE(emit_llvm_ir(funcs, arm).find("aarch64"), std::string::npos);
  expect_error([&] { build(funcs, arm); }, {"aarch64", "emit_object"});
}

TEST(BuildTest, ConcurrentBuildsFromSeveralThreads) {
  std::vector<std::thread> threads;
  std::atomic<int> correct{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int k = 0; k < 3; ++k) {
        int64_t n = 8 + t * 3 + k;
        runtime::Module mod = build(elementwise_add("add", n), host_target());
        auto a = float_array({n}, [](int64_t i) { return float(i); });
        auto c = float_array({n}, [](int64_t) { return 0.0f; });
        mod.get_function("add")(a, a, c);
        if (c.data<float>()[n - 1] == 2.0f * (n - 1)) ++correct;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(correct.load(), 12);
}

int64_t resident_kib() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stoll(line.substr(6));
  }
  return 0;
}

TEST(BuildTest, DroppedModulesFreeTheirCode) {
  std::shared_ptr<runtime::JitSession> session = runtime::JitSession::shared();
  auto a = float_array({16}, [](int64_t i) { return float(i); });
  auto c = float_array({16}, [](int64_t) { return 0.0f; });
  auto build_and_run = [&](int k) {
    runtime::Module mod = build(elementwise_add("add" + std::to_string(k), 16), host_target());
    mod.get_function("add" + std::to_string(k))(a, a, c);
    EXPECT_EQ(session->num_live_modules(), 1);
  };
  for (int k = 0; k < 50; ++k) build_and_run(k);
  int64_t warm = resident_kib();
  for (int k = 50; k < 300; ++k) build_and_run(k);
  EXPECT_EQ(session->num_live_modules(), 0);
  EXPECT_EQ(c.data<float>()[15], 30.0f);
  // Keeping each module's JITDylib grows RSS by ~18 KiB per module (4.6 MiB here); freeing it
  // leaves ~0.1 MiB of noise. AddressSanitizer keeps freed memory in quarantine, so there only
  // the live-module count above tells.
#if !defined(__SANITIZE_ADDRESS__)
  EXPECT_LT(resident_kib() - warm, 2 * 1024) << "RSS grew from " << warm << " KiB";
#else
  (void)warm;
#endif
}

}  // namespace
}  // namespace tessel
