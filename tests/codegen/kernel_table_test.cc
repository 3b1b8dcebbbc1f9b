// export_library writes the kernel table that runtime::load_library serves its kernels from, so a
// loaded library exposes exactly its PrimFuncs (issue 22, item 7).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "codegen/build.h"
#include "runtime/library.h"
#include "tests/codegen/codegen_test_util.h"
#include "tests/common/expect_error.h"

namespace tessel {
namespace {

using namespace tessel::testing;

// C[i] = A[i] * scale, a kernel per scale.
PrimFunc scale(const std::string& name, float factor) {
  Buffer a = Buffer::make("A", DataType::f32(), {PrimExpr(int64_t{4})});
  Buffer c = Buffer::make("C", DataType::f32(), {PrimExpr(int64_t{4})});
  Var i("i");
  return make_func(name, {a, c},
                   loop(i, PrimExpr(int64_t{4}), store(c, load(a, i) * PrimExpr(factor), i)));
}

TEST(KernelTableTest, ExportedLibraryServesExactlyItsKernels) {
  std::string library = (std::filesystem::path(::testing::TempDir()) /
                         ("tessel-kernel-table-" + std::to_string(getpid()) + ".so"))
                            .string();
  export_library({scale("twice", 2), scale("thrice", 3)}, host_target(), library);
  runtime::Module mod = runtime::load_library(library, {"twice", "thrice"}, "test library");
  std::remove(library.c_str());  // mapped already
  EXPECT_EQ(mod.node()->function_names(), (std::vector<std::string>{"thrice", "twice"}));
  auto a = float_array({4}, [](int64_t i) { return float(i); });
  auto c = float_array({4}, [](int64_t) { return 0.0f; });
  mod.get_function("thrice")(a, c);
  EXPECT_EQ(c.data<float>()[3], 9.0f);
  // Symbols the library can reach but does not list: libc's, and its own internal helpers.
  for (const char* name : {"abort", "free", "twice_compute"}) {
    expect_error([&] { mod.get_function(name); }, {std::string("no function '") + name + "'"});
  }
}

TEST(KernelTableTest, LoadingNamesAKernelTheTableLacks) {
  std::string library = (std::filesystem::path(::testing::TempDir()) /
                         ("tessel-kernel-table-missing-" + std::to_string(getpid()) + ".so"))
                            .string();
  export_library({scale("twice", 2)}, host_target(), library);
  expect_error([&] { runtime::load_library(library, {"twice", "exit"}, "lib.so"); },
               {"lib.so has no kernel 'exit' in its kernel table"});
  std::remove(library.c_str());
}

}  // namespace
}  // namespace tessel
