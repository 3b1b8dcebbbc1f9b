// The kernel cache: keys that tell kernels apart exactly (names aside), entries that round-trip,
// and entries that fail their checks read as misses (codegen/kernel_cache.h).
#include "codegen/kernel_cache.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tests/codegen/codegen_test_util.h"
#include "tests/common/scoped_env.h"
#include "tests/runtime/temp_dir_fixture.h"

namespace tessel {
namespace {

using namespace tessel::testing;

// C[i*cols + j] = A[i*cols + j] or, transposed, A[j*rows + i], over a rows x cols grid with loop
// vars of `index` type.
PrimFunc copy(const std::string& name, const std::string& a_name, bool transposed,
              DataType index = DataType::i32()) {
  Buffer a = Buffer::make(a_name, DataType::f32(), {PrimExpr(int64_t{12})});
  Buffer c = Buffer::make("C", DataType::f32(), {PrimExpr(int64_t{12})});
  Var i("i", index), j("j", index);
  PrimExpr three = make_const(index, 3), four = make_const(index, 4);
  PrimExpr src = transposed ? j * three + i : i * four + j;
  return make_func(name, {a, c},
                   loop(i, three, loop(j, four, store(c, load(a, src), i * four + j))));
}

TEST(KernelKeyTest, NamesDoNotMatterAndCodeDoes) {
  const Target& host = host_target();
  std::string key = kernel_key(copy("f", "A", false), host);
  EXPECT_EQ(key.size(), 32u);
  EXPECT_EQ(kernel_key(copy("g", "Input_17", false), host), key);
  EXPECT_NE(kernel_key(copy("f", "A", true), host), key);
  EXPECT_NE(kernel_key(copy("f", "A", false, DataType::i64()), host), key);
  EXPECT_NE(kernel_key(copy("f", "A", false), Target::parse("llvm -mcpu=haswell")),
            kernel_key(copy("f", "A", false), Target::parse("llvm -mcpu=skylake-avx512")));
}

class KernelCacheTest : public TempDirTest {};

TEST_F(KernelCacheTest, StoresAndReadsBackAnObject) {
  KernelCache cache(path("cache"));
  std::string key(32, 'a'), object(
                                "\x7f"
                                "ELF object bytes\n\0with a zero",
                                30);
  EXPECT_FALSE(cache.get(key));
  cache.put(key, object);
  ASSERT_TRUE(cache.get(key));
  EXPECT_EQ(*cache.get(key), object);
  EXPECT_FALSE(cache.get(std::string(32, 'b')));
}

TEST_F(KernelCacheTest, AnEntryThatFailsItsChecksIsAMiss) {
  KernelCache cache(path("cache"));
  std::string key(32, 'c');
  std::string file = path("cache") + "/kernels/" + key + ".o";
  auto rewrite = [&](const std::function<std::string(std::string)>& edit) {
    cache.put(key, std::string(1000, 'x'));
    std::ifstream in(file, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    in.close();
    std::ofstream(file, std::ios::binary | std::ios::trunc) << edit(bytes);
  };
  rewrite([](std::string b) { return b.substr(0, b.size() - 10); });  // truncated
  EXPECT_FALSE(cache.get(key));
  rewrite([](std::string b) { return b + "tail"; });  // trailing bytes
  EXPECT_FALSE(cache.get(key));
  rewrite([](std::string b) {  // a flipped byte of the object
    b[b.size() - 1] = 'y';
    return b;
  });
  EXPECT_FALSE(cache.get(key));
  rewrite([](std::string) { return std::string("garbage"); });
  EXPECT_FALSE(cache.get(key));
  rewrite([&](std::string b) {  // another key's entry under this name
    return b.replace(b.find(key), key.size(), std::string(32, 'd'));
  });
  EXPECT_FALSE(cache.get(key));
  cache.put(key, "fresh");  // the next put repairs it
  EXPECT_EQ(cache.get(key).value_or(""), "fresh");
}

TEST_F(KernelCacheTest, AnUnwritableFolderOnlyCostsTime) {
  std::ofstream(path("file")) << "not a folder";
  KernelCache cache(path("file"));
  cache.put(std::string(32, 'e'), "object");
  EXPECT_FALSE(cache.get(std::string(32, 'e')));
}

TEST(KernelCacheEnvTest, TesselCacheDirMovesOrDisablesTheCache) {
  {
    ScopedEnv dir("TESSEL_CACHE_DIR", "/somewhere/else");
    ASSERT_TRUE(KernelCache::from_environment());
    EXPECT_EQ(KernelCache::from_environment()->dir(), "/somewhere/else");
  }
  for (const char* off : {"", "off"}) {
    ScopedEnv dir("TESSEL_CACHE_DIR", off);
    EXPECT_FALSE(KernelCache::from_environment()) << "'" << off << "'";
  }
  ScopedEnv dir("TESSEL_CACHE_DIR", nullptr);
  {
    ScopedEnv xdg("XDG_CACHE_HOME", "/xdg");
    EXPECT_EQ(KernelCache::from_environment().value_or(KernelCache("")).dir(), "/xdg/tessel");
  }
  ScopedEnv xdg("XDG_CACHE_HOME", nullptr);
  ScopedEnv home("HOME", "/home/user");
  EXPECT_EQ(KernelCache::from_environment().value_or(KernelCache("")).dir(),
            "/home/user/.cache/tessel");
}

}  // namespace
}  // namespace tessel
