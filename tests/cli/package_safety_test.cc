// Packages and outputs from a hostile user, through the tessel command (issue 22, items 6, 7 and
// the zip items of 9): each ends with exit 1 and one `tessel: error:` line, and nothing outside the
// outputs changes.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "runtime/model.h"
#include "runtime/npz.h"
#include "tests/cli/cli_runner.h"

namespace tessel {
namespace {

namespace fs = std::filesystem;

using testing::contents;
using testing::expect_user_error;
using testing::kModel;
using testing::Result;
using testing::run;
using testing::tessel;
using testing::write;

bool is_kind(const std::string& file, mode_t kind) {
  struct stat st;
  return stat(file.c_str(), &st) == 0 && (st.st_mode & S_IFMT) == kind;
}

class PackageSafetyTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("tessel-package-safety-" + std::to_string(getpid()));
    fs::create_directories(dir_ / "package");
    Result r = run(tessel("compile " + kModel + " -o " + path("model.tar")));
    ASSERT_EQ(r.code, 0) << r.output;
    ASSERT_EQ(std::system(("tar -xf " + path("model.tar") + " -C " + path("package")).c_str()), 0);
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }
  static std::string path(const std::string& name) { return (dir_ / name).string(); }

  // The compiled package with its mod.json text and mod.so bytes edited, as a new package `name`.
  static std::string edited_package(const std::string& name,
                                    const std::function<void(std::string&)>& edit_json,
                                    const std::function<void(std::string&)>& edit_library = {}) {
    fs::path work = dir_ / (name + ".d");
    fs::create_directories(work);
    for (const char* member : {"mod.so", "mod.json", "mod.params"}) {
      fs::copy_file(dir_ / "package" / member, work / member, fs::copy_options::overwrite_existing);
    }
    std::string json = contents(work / "mod.json"), library = contents(work / "mod.so");
    edit_json(json);
    if (edit_library) edit_library(library);
    write(work / "mod.json", json);
    write(work / "mod.so", library);
    std::string cmd =
        "tar -cf " + path(name) + " -C " + work.string() + " mod.so mod.json mod.params";
    EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
    return path(name);
  }
  // The same through the executor plan's structure.
  static std::string edited_plan(const std::string& name,
                                 const std::function<void(runtime::ExecutorPlan&)>& edit) {
    return edited_package(name, [&](std::string& json) {
      runtime::ExecutorPlan plan = runtime::ExecutorPlan::from_json(json, name);
      edit(plan);
      json = plan.to_json();
    });
  }

  static fs::path dir_;
};
fs::path PackageSafetyTest::dir_;

// Kernel names were resolved with dlsym, which finds libc too: "abort" aborted, "exit" exited 0.
TEST_F(PackageSafetyTest, AKernelNamedAfterALibcFunctionIsRefused) {
  for (std::string libc_function : {"abort", "exit", "free"}) {
    std::string package = edited_plan(libc_function + ".tar", [&](runtime::ExecutorPlan& p) {
      p.kernels[0].name = libc_function;
    });
    expect_user_error(
        run(tessel("run " + package)),
        {"package " + package, "mod.so has no kernel '" + libc_function + "' in its kernel table"});
    Result loader = run(std::string(TESSEL_LOAD_PACKAGE) + " " + package);
    EXPECT_EQ(loader.code, 1) << loader.output;
    EXPECT_NE(loader.output.find("no kernel '" + libc_function + "'"), std::string::npos)
        << loader.output;
  }
}

// These loaded silently before.
TEST_F(PackageSafetyTest, InconsistentPlansAreRefused) {
  std::string twice =
      edited_plan("twice.tar", [](runtime::ExecutorPlan& p) { p.inputs.push_back(p.inputs[0]); });
  expect_user_error(run(tessel("run " + twice)),
                    {twice + ":mod.json", "input 'data' is listed twice"});

  int weight = -1;
  std::string over_weight = edited_plan("over_weight.tar", [&](runtime::ExecutorPlan& p) {
    for (size_t i = 0; i < p.storage.size() && weight < 0; ++i) {
      if (!p.storage[i].param.empty()) weight = static_cast<int>(i);
    }
    p.inputs[0].storage = weight;
  });
  expect_user_error(
      run(tessel("run " + over_weight)),
      {over_weight + ":mod.json", "input 'data' is storage entry " + std::to_string(weight),
       "which holds the weight"});

  std::string empty_param = edited_package("empty_param.tar", [](std::string& json) {
    json = std::regex_replace(json, std::regex(R"("param": "[^"]*")"), R"("param": "")",
                              std::regex_constants::format_first_only);
  });
  expect_user_error(run(tessel("run " + empty_param)),
                    {empty_param + ":mod.json", "has an empty 'param'"});

  std::string no_kernels =
      edited_plan("no_kernels.tar", [](runtime::ExecutorPlan& p) { p.kernels.clear(); });
  expect_user_error(run(tessel("run " + no_kernels)), {no_kernels + ":mod.json lists no kernels"});
}

// A package written before the kernel table: its mod.so exports the kernels only as symbols.
// Renaming the table's dynamic symbol (same length, so the ELF stays valid) makes one.
TEST_F(PackageSafetyTest, APackageFromBeforeTheKernelTableIsRefused) {
  std::string old = edited_package(
      "old.tar", [](std::string&) {},
      [](std::string& library) {
        size_t at = library.find("__tessel_kernel_table");
        ASSERT_NE(at, std::string::npos);
        library.replace(at, 21, "__tessel_kernel_tablX");
      });
  expect_user_error(run(tessel("run " + old)),
                    {"package " + old, "no kernel table", "recompile the model"});
}

// Outputs were written to a temporary file renamed over the target, which replaced a device or a
// FIFO with a plain file. The targets here are refused before anything is compiled or run.
TEST_F(PackageSafetyTest, OutputsNeverReplaceADeviceFifoOrDirectory) {
  fs::path outputs = dir_ / "outputs";
  fs::create_directories(outputs / "dir");
  std::string fifo = (outputs / "fifo").string(), dir = (outputs / "dir").string();
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  ASSERT_TRUE(is_kind("/dev/full", S_IFCHR));
  std::vector<std::pair<std::string, std::string>> targets = {
      {fifo, "FIFO"}, {dir, "directory"}, {"/dev/full", "character device"}};
  for (const auto& [target, kind] : targets) {
    expect_user_error(run(tessel("compile " + kModel + " -o " + target)),
                      {"cannot write the package '" + target + "'", "it is a " + kind});
    expect_user_error(run(tessel("run " + path("model.tar") + " --outputs " + target)),
                      {"cannot write the .npz '" + target + "'", "it is a " + kind});
  }
  EXPECT_TRUE(is_kind(fifo, S_IFIFO));
  EXPECT_TRUE(is_kind(dir, S_IFDIR));
  EXPECT_TRUE(fs::is_empty(dir));
  EXPECT_TRUE(is_kind("/dev/full", S_IFCHR));
  EXPECT_EQ(std::distance(fs::directory_iterator(outputs), fs::directory_iterator()),
            2);  // no temporaries
}

// A zip with two same-named members used the last; a member whose size is the zip64 marker
// 0xFFFFFFFF ("4 GiB") without a zip64 field reported "No such file".
TEST_F(PackageSafetyTest, NpzInputsWithImpossibleMembersNameTheMember) {
  runtime::NDArray data = runtime::NDArray::empty({1, 3, 32, 32}, DataType::f32());
  std::fill_n(data.data<float>(), data.numel(), 0.5f);
  std::string one = path("one.npz"), dup = path("dup.npz"), marker = path("marker.npz");
  runtime::write_zip(dup,
                     {{"data.npy", runtime::to_npy(data)}, {"datb.npy", runtime::to_npy(data)}});
  std::string bytes = contents(dup);
  for (size_t at; (at = bytes.find("datb.npy")) != std::string::npos;) bytes[at + 3] = 'a';
  write(dup, bytes);
  expect_user_error(run(tessel("run " + path("model.tar") + " --inputs " + dup)),
                    {"'" + dup + "' entry 'data.npy'", "two entries of this name"});

  runtime::write_zip(one, {{"data.npy", runtime::to_npy(data)}});
  bytes = contents(one);
  size_t central = bytes.find("PK\x01\x02");
  ASSERT_NE(central, std::string::npos);
  bytes.replace(central + 24, 4, "\xff\xff\xff\xff");  // the uncompressed size
  write(marker, bytes);
  expect_user_error(run(tessel("run " + path("model.tar") + " --inputs " + marker)),
                    {"'" + marker + "'", "entry 'data.npy' is corrupt: its size is 0xFFFFFFFF"});
}

}  // namespace
}  // namespace tessel
