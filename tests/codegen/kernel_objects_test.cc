// Kernels compiled as objects (codegen/kernel_objects.h): equal kernels compiled once, the same
// bytes for any number of jobs, the cache's hits, and the objects linked into a shared library and
// into this process alike.
#include "codegen/kernel_objects.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "runtime/jit.h"
#include "runtime/library.h"
#include "tests/codegen/codegen_test_util.h"
#include "tests/common/expect_error.h"
#include "tests/runtime/temp_dir_fixture.h"

namespace tessel {
namespace {

using namespace tessel::testing;

// C[i] = A[i] * factor + B[i] over n elements, with buffers named after the kernel.
PrimFunc axpy(const std::string& name, float factor, int64_t n = 64) {
  Buffer a = Buffer::make(name + "_A", DataType::f32(), {PrimExpr(n)});
  Buffer b = Buffer::make(name + "_B", DataType::f32(), {PrimExpr(n)});
  Buffer c = Buffer::make(name + "_C", DataType::f32(), {PrimExpr(n)});
  Var i("i");
  return make_func(name, {a, b, c},
                   loop(i, PrimExpr(n), store(c, load(a, i) * PrimExpr(factor) + load(b, i), i)));
}

// Three kernels, of which two are the same code under different names.
std::vector<PrimFunc> kernels() { return {axpy("first", 2), axpy("second", 3), axpy("third", 2)}; }

// Checks funcs {first, second, third} of `mod` against the formula.
void check_kernels(const runtime::Module& mod) {
  auto a = float_array({64}, [](int64_t i) { return float(i); });
  auto b = float_array({64}, [](int64_t i) { return float(1000 - i); });
  for (auto [name, factor] : {std::pair{"first", 2.0f}, {"second", 3.0f}, {"third", 2.0f}}) {
    auto c = float_array({64}, [](int64_t) { return 0.0f; });
    mod.get_function(name)(a, b, c);
    for (int64_t i = 0; i < 64; ++i)
      ASSERT_EQ(c.data<float>()[i], float(i) * factor + float(1000 - i)) << name << " " << i;
  }
}

class KernelObjectsTest : public TempDirTest {};

TEST_F(KernelObjectsTest, EqualKernelsAreCompiledOnce) {
  KernelObjects objects = compile_kernel_objects(kernels(), host_target(), {.jobs = 2});
  ASSERT_EQ(objects.symbols.size(), 2u);  // first and third share one
  EXPECT_EQ(objects.objects.size(), 3u);  // and the kernel table
  EXPECT_EQ(objects.cache_hits, 0);
  EXPECT_GT(objects.optimize_ms, 0);
  check_kernels(runtime::JitSession::shared()->add_objects(objects.objects, "test objects"));
  link_shared_library(objects.objects, path("lib.so"));
  check_kernels(runtime::load_library(path("lib.so"), {"first", "second", "third"}, "lib.so"));
}

TEST_F(KernelObjectsTest, TheBytesDoNotDependOnTheNumberOfJobs) {
  std::vector<PrimFunc> funcs;
  for (int k = 0; k < 6; ++k) funcs.push_back(axpy("k" + std::to_string(k), float(k), 64 + k));
  std::vector<std::string> one = compile_kernel_objects(funcs, host_target(), {.jobs = 1}).objects;
  EXPECT_EQ(compile_kernel_objects(funcs, host_target(), {.jobs = 3}).objects, one);
  EXPECT_EQ(compile_kernel_objects(funcs, host_target(), {.jobs = 0}).objects, one);
}

TEST_F(KernelObjectsTest, ACachedKernelIsNotCompiledAgain) {
  KernelCache cache(path("cache"));
  KernelObjects cold = compile_kernel_objects(kernels(), host_target(), {.cache = &cache});
  EXPECT_EQ(cold.cache_hits, 0);
  // Another model with one of the same kernels under other names, and one new kernel.
  KernelObjects warm = compile_kernel_objects({axpy("renamed", 3), axpy("fourth", 4)},
                                              host_target(), {.cache = &cache});
  EXPECT_EQ(warm.cache_hits, 1);
  EXPECT_EQ(warm.symbols[0], cold.symbols[1]);
  EXPECT_EQ(warm.objects[0], cold.objects[1]);
  // Another target misses.
  Target haswell = Target::parse("llvm -mcpu=haswell");
  EXPECT_EQ(compile_kernel_objects(kernels(), haswell, {.cache = &cache}).cache_hits, 0);
  EXPECT_EQ(compile_kernel_objects(kernels(), host_target(), {.cache = &cache}).cache_hits, 2);
}

TEST_F(KernelObjectsTest, ACorruptCacheEntryIsCompiledAgain) {
  KernelCache cache(path("cache"));
  KernelObjects cold = compile_kernel_objects(kernels(), host_target(), {.cache = &cache});
  for (const auto& entry : std::filesystem::directory_iterator(path("cache") + "/kernels"))
    std::ofstream(entry.path(), std::ios::trunc) << "corrupt";
  KernelObjects again = compile_kernel_objects(kernels(), host_target(), {.cache = &cache});
  EXPECT_EQ(again.cache_hits, 0);
  EXPECT_EQ(again.objects, cold.objects);
  check_kernels(runtime::JitSession::shared()->add_objects(again.objects, "test objects"));
}

TEST_F(KernelObjectsTest, ErrorsNameTheKernelAndTheArgumentByPosition) {
  runtime::Module mod = runtime::JitSession::shared()->add_objects(
      compile_kernel_objects(kernels(), host_target()).objects, "test objects");
  auto a = float_array({64}, [](int64_t) { return 0.0f; });
  auto short_b = float_array({8}, [](int64_t) { return 0.0f; });
  expect_error([&] { mod.get_function("third")(a, short_b, a); },
               {"third: argument 1 has shape [8] but expects [64]"});
}

TEST(KernelObjectsErrorTest, ObjectsForAnotherArchitectureCompileButDoNotRun) {
  Target arm = Target::parse("llvm -mtriple=aarch64-linux-gnu -mcpu=neoverse-n1");
  KernelObjects objects = compile_kernel_objects(kernels(), arm);
  EXPECT_EQ(objects.objects[0].substr(0, 4),
            "\x7f"
            "ELF");
  expect_error([&] { build_cached(kernels(), arm); },
               {"build: cannot run code for aarch64-unknown-linux-gnu on this", "use emit_object"});
}

TEST(KernelObjectsErrorTest, TwoFunctionsWithOneName) {
  expect_error([&] { compile_kernel_objects({axpy("f", 1), axpy("f", 2)}, host_target()); },
               {"two functions are named 'f'"});
}

}  // namespace
}  // namespace tessel
