// load_package calls only the kernels of mod.so's kernel table and refuses inconsistent plans and
// corrupt package files (issue 22, item 7). The libraries are small C files built with the system
// cc, as export_library links its objects, so these tests need no LLVM.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "runtime/model.h"
#include "tests/common/expect_error.h"
#include "tests/runtime/temp_dir_fixture.h"

namespace tessel::runtime {
namespace {

namespace fs = std::filesystem;
using tessel::testing::expect_error;

const fs::path kSourceRoot = fs::path(__FILE__).parent_path().parent_path().parent_path();

// add_one: y = x + 1 for float32[1] arrays (args x, y).
constexpr const char* kAddOne = R"(
#include "runtime/c_runtime_api.h"
int32_t add_one(const TesselValue* args, const int32_t* codes, int32_t n) {
  if (n != 2) return -1;
  float* x = *(float**)args[0].v_handle; /* DLTensor starts with its data pointer */
  float* y = *(float**)args[1].v_handle;
  y[0] = x[0] + 1;
  return 0;
}
)";

const char* host_arch() {
#if defined(__x86_64__)
  return "x86_64";
#else
  return "aarch64";
#endif
}

class PackageLoaderTest : public tessel::testing::TempDirTest {
 protected:
  // kAddOne and `table` (C code after it) built into a shared library with cc.
  std::string library(const std::string& name, const std::string& table) const {
    std::string source = path(name + ".c");
    std::ofstream(source) << kAddOne << table;
    std::string command =
        "cc -shared -fPIC -I" + kSourceRoot.string() + " -o " + path(name + ".so") + " " + source;
    EXPECT_EQ(std::system(command.c_str()), 0) << command;
    return path(name + ".so");
  }
  std::string good_library() const {
    return library("good", R"(
static const TesselKernelEntry kernels[] = {{"add_one", add_one}};
const TesselKernelTable __tessel_kernel_table = {TESSEL_KERNEL_TABLE_VERSION, 1, kernels};
)");
  }
};

// x -> add_one -> y, and a weight w that no kernel reads.
ExecutorPlan add_one_plan() {
  ExecutorPlan p;
  p.target = "llvm";
  p.arch = host_arch();
  p.storage = {{{1}, DataType::f32(), -1, ""},
               {{1}, DataType::f32(), -1, ""},
               {{1}, DataType::f32(), -1, "w"}};
  p.kernels = {{"add_one", {0, 1}, "Add", 0}};
  p.inputs = {{"x", 0}};
  p.outputs = {{"y", 1}};
  return p;
}

std::map<std::string, NDArray> weights() {
  NDArray w = NDArray::empty({1}, DataType::f32());
  w.data<float>()[0] = 5;
  return {{"w", w}};
}

TEST_F(PackageLoaderTest, RunsTheKernelsOfTheTable) {
  std::string package = path("good.tar");
  write_package(package, good_library(), add_one_plan(), weights());
  Model m = load_package(package);
  NDArray x = NDArray::empty({1}, DataType::f32());
  x.data<float>()[0] = 41;
  m.set_input("x", x);
  m.run();
  EXPECT_EQ(m.get_output("y").data<float>()[0], 42);
  EXPECT_EQ(m.module().node()->function_names(), std::vector<std::string>{"add_one"});
}

// dlsym on the library handle found libc too: a mod.json naming "abort" ran abort().
TEST_F(PackageLoaderTest, AKernelOutsideTheTableIsRefused) {
  std::string library = good_library();
  for (std::string name : {"abort", "exit", "free", "add_one_missing"}) {
    ExecutorPlan plan = add_one_plan();
    plan.kernels[0].name = name;
    std::string package = path(name + ".tar");
    write_package(package, library, plan, weights());
    expect_error([&] { load_package(package); },
                 {"package " + package + ": mod.so", "no kernel '" + name + "'"});
  }
}

// Packages from before the kernel table export their kernels as plain symbols only.
TEST_F(PackageLoaderTest, ALibraryWithoutAKernelTableIsRefused) {
  std::string package = path("old.tar");
  write_package(package, library("old", ""), add_one_plan(), weights());
  expect_error([&] { load_package(package); },
               {"package " + package, "no kernel table", "recompile the model"});
}

TEST_F(PackageLoaderTest, MalformedKernelTablesAreRefused) {
  struct Case {
    std::string table, message;
  };
  const Case cases[] = {
      {R"(static const TesselKernelEntry kernels[] = {{"add_one", add_one}};
          const TesselKernelTable __tessel_kernel_table = {2, 1, kernels};)",
       "kernel table version 2"},
      {R"(static const TesselKernelEntry kernels[] = {{"add_one", add_one}, {"add_one", add_one}};
          const TesselKernelTable __tessel_kernel_table = {TESSEL_KERNEL_TABLE_VERSION, 2, kernels};)",
       "lists 'add_one' twice"},
      {R"(static const TesselKernelEntry kernels[] = {{"add_one", 0}};
          const TesselKernelTable __tessel_kernel_table = {TESSEL_KERNEL_TABLE_VERSION, 1, kernels};)",
       "entry 0 is null"},
      {R"(const TesselKernelTable __tessel_kernel_table = {TESSEL_KERNEL_TABLE_VERSION, 0xffffffff, 0};)",
       "corrupt kernel table"},
  };
  int i = 0;
  for (const Case& c : cases) {
    std::string package = path("bad" + std::to_string(i) + ".tar");
    write_package(package, library("bad" + std::to_string(i++), c.table), add_one_plan(),
                  weights());
    expect_error([&] { load_package(package); }, {"package " + package, c.message});
  }
}

// Each of these loaded silently before: a duplicate input, an input over a weight's storage, an
// empty 'param' (read as no weight), an empty kernel list.
TEST_F(PackageLoaderTest, InconsistentPlansAreRefused) {
  std::string good = add_one_plan().to_json();
  auto edited = [&](const std::string& from, const std::string& to) {
    std::string text = good;
    size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return text.replace(at, from.size(), to);
  };
  const std::string inputs = R"("inputs": [
  {
   "name": "x",
   "storage": 0
  }
 ])";
  struct Case {
    std::string json, message;
  };
  const Case cases[] = {
      {edited(inputs, R"("inputs": [{"name": "x", "storage": 0}, {"name": "x", "storage": 0}])"),
       "input 'x' is listed twice"},
      {edited(inputs, R"("inputs": [{"name": "x", "storage": 0}, {"name": "x2", "storage": 0}])"),
       "inputs 'x' and 'x2' are the same storage entry 0"},
      {edited(inputs, R"("inputs": [{"name": "x", "storage": 2}])"),
       "input 'x' is storage entry 2, which holds the weight 'w'"},
      {edited(R"("param": "w")", R"("param": "")"), "storage entry 2 has an empty 'param'"},
      {edited(R"("dtype": "float32")", R"("dtype": "float32", "buffer": -1)"),
       "storage entry 0 has the buffer index -1"},
      {edited(R"("dtype": "float32")", R"("dtype": "float32", "offset": 8)"),
       "storage entry 0 has the offset 8, which is not inside a buffer"},
      {good.substr(0, good.find(R"("kernels": [)")) + R"("kernels": [], )" +
           good.substr(good.find(R"("outputs")")),
       "pkg:mod.json lists no kernels"},
  };
  ExecutorPlan::from_json(good, "pkg:mod.json");
  for (const Case& c : cases) {
    expect_error([&] { ExecutorPlan::from_json(c.json, "pkg:mod.json"); },
                 {"pkg:mod.json", c.message});
  }
  // Through load_package, naming the package.
  ExecutorPlan plan = add_one_plan();
  plan.inputs.push_back(plan.inputs[0]);
  std::string package = path("twice.tar");
  write_package(package, good_library(), plan, weights());
  expect_error([&] { load_package(package); },
               {package + ":mod.json", "input 'x' is listed twice"});
}

std::string contents(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// A view at an offset into a buffer (a Concat part written in place) survives the package, and
// one that would reach past its buffer is refused when the model allocates it.
TEST_F(PackageLoaderTest, ViewsAtAnOffsetIntoABuffer) {
  ExecutorPlan plan = add_one_plan();
  plan.buffer_bytes = {64};
  plan.storage[1].buffer = 0;
  plan.storage[1].offset = 60;
  std::string package = path("offset.tar");
  write_package(package, good_library(), plan, weights());
  Model m = load_package(package);
  EXPECT_EQ(m.plan().storage[1].offset, 60);
  NDArray x = NDArray::empty({1}, DataType::f32());
  x.data<float>()[0] = 1;
  m.set_input("x", x);
  m.run();
  EXPECT_EQ(m.get_output("y").data<float>()[0], 2);
  plan.storage[1].offset = 62;
  write_package(path("past.tar"), good_library(), plan, weights());
  expect_error([&] { load_package(path("past.tar")); },
               {"a float32 view needs 4 bytes from byte 62, the array has 64"});
}

// A tar header claiming more bytes than the file has made read_tar allocate them first.
TEST_F(PackageLoaderTest, AMemberClaimingMoreThanTheFileIsRefused) {
  std::string package = path("good.tar");
  write_package(package, good_library(), add_one_plan(), weights());
  std::string bytes = contents(package);
  ASSERT_EQ(bytes.substr(0, 6), "mod.so");  // the first ustar header
  bytes.replace(124, 11, "77777777777");    // size: 8 GiB - 1, in octal
  bytes.replace(148, 8, 8, ' ');            // the checksum counts its own field as spaces
  unsigned sum = 0;
  for (int i = 0; i < 512; ++i) sum += static_cast<unsigned char>(bytes[i]);
  std::string checksum = fmt::format("{:06o}", sum);
  bytes.replace(148, 7, checksum + '\0');
  std::ofstream(package, std::ios::binary | std::ios::trunc) << bytes;
  expect_error([&] { load_package(package); },
               {"package " + package, "member mod.so claims 8589934591 bytes"});
}

TEST_F(PackageLoaderTest, TwoMembersOfTheSameNameAreRefused) {
  std::string package = path("good.tar");
  write_package(package, good_library(), add_one_plan(), weights());
  std::ofstream(path("mod.json")) << "{}";
  std::string command = "tar -rf " + package + " -C " + dir_.string() + " mod.json";
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  expect_error([&] { load_package(package); },
               {"package " + package, "two members named mod.json"});
}

TEST_F(PackageLoaderTest, ParamsClaimingMoreThanTheFileAreRefusedBeforeAllocating) {
  NDArray small = NDArray::empty({2}, DataType::f32());
  std::string bytes = save_params({{"w", small}});
  // The dim (8 bytes after name and dtype) becomes 2^40: 4 TiB of float32 in a file of 60 bytes.
  size_t dim = bytes.find("float32") + 7 + 4;
  int64_t huge = int64_t{1} << 40;
  bytes.replace(dim, 8, std::string(reinterpret_cast<const char*>(&huge), 8));
  uint64_t nbytes = static_cast<uint64_t>(huge) * 4;
  bytes.replace(dim + 8, 8, std::string(reinterpret_cast<const char*>(&nbytes), 8));
  expect_error([&] { load_params(bytes, "p:mod.params"); }, {"p:mod.params is truncated"});
}

}  // namespace
}  // namespace tessel::runtime
