// Issue 22's malformed models through `tessel inspect` and `tessel compile`, as a user would run
// them: each ends with exit 1 and one `tessel: error:` line naming the cause, never a signal, a
// hang or an internal error.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include "tests/cli/cli_runner.h"
#include "tests/frontend/malformed_models.h"

namespace tessel {
namespace {

namespace fs = std::filesystem;

// Under a time limit (a hang exits 124), what it wrote to stderr: inspect prints the model first.
testing::Result run_tessel(const std::string& args) {
  return testing::run("timeout 120 " + testing::tessel(args), testing::Capture::kStderr);
}

void expect_one_line_error(const testing::Result& r, const std::string& message) {
  testing::expect_user_error(r, {message});
}

class ImportSafetyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / fmt::format("tessel-import-safety-{}", getpid());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  fs::path dir_;
};

TEST_F(ImportSafetyTest, MalformedModelsEndInOneErrorLine) {
  for (const auto& model : tessel::testing::malformed_models()) {
    SCOPED_TRACE(model.name);
    std::string file = path(model.name + ".onnx");
    std::ofstream(file, std::ios::binary) << model.bytes;
    expect_one_line_error(run_tessel("inspect " + file), model.error);
    expect_one_line_error(run_tessel("compile " + file + " -o " + path(model.name + ".tar")),
                          model.error);
    EXPECT_FALSE(fs::exists(path(model.name + ".tar")));
  }
}

TEST_F(ImportSafetyTest, CheckerMessagesAreOneLine) {
  // An input no node defines: the ONNX checker's message has line breaks of its own.
  tessel::testing::MalformedModel undefined_input = tessel::testing::mixed_dtype_matmul_model();
  onnx::ModelProto m;
  ASSERT_TRUE(m.ParseFromString(undefined_input.bytes));
  m.mutable_graph()->mutable_node(0)->set_input(0, "nowhere");
  std::string file = path("undefined_input.onnx");
  std::ofstream(file, std::ios::binary) << m.SerializeAsString();
  expect_one_line_error(run_tessel("inspect " + file), "failed the ONNX checker");
  expect_one_line_error(run_tessel("compile " + file + " -o " + path("x.tar")),
                        "failed the ONNX checker");
}

TEST_F(ImportSafetyTest, DevZeroIsRefusedPromptly) {
  auto start = std::chrono::steady_clock::now();
  expect_one_line_error(run_tessel("compile /dev/zero -o " + path("zero.tar")),
                        "ONNX model '/dev/zero' is not a regular file");
  expect_one_line_error(run_tessel("inspect /dev/zero"),
                        "ONNX model '/dev/zero' is not a regular file");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
}

}  // namespace
}  // namespace tessel
