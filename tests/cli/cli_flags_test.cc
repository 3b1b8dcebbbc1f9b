// The tessel command's flags, as a hostile user would try them: every bad value ends with one line
// "tessel: error: ..." naming the flag and exit code 1 (usage errors from CLI11 included), never
// a signal or an internal error, and --help still prints help. Also: a resumed tune that has
// nothing left to do leaves its records file as it was.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "tests/cli/cli_runner.h"

namespace tessel {
namespace {

namespace fs = std::filesystem;

using testing::kModel;
using testing::Result;

Result run_tessel(const std::string& args) { return testing::run(testing::tessel(args)); }

class CliFlagsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("tessel-cli-flags-test-" + std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }
  static std::string path(const std::string& name) { return (dir_ / name).string(); }
  static fs::path dir_;
};
fs::path CliFlagsTest::dir_;

// `args` fails as a user error: exit 1, and its whole output is one line "tessel: error: ..."
// holding each of `parts`.
void expect_one_line_error(const std::string& args, std::initializer_list<std::string> parts) {
  SCOPED_TRACE(args);
  testing::expect_user_error(run_tessel(args), parts);
}

// CLI11's usage errors printed its own two lines without the prefix, and exited 2.
TEST_F(CliFlagsTest, UsageErrorsAreOneLineErrorsWithExitCode1) {
  expect_one_line_error("compile " + kModel + " -o " + path("x.tar") + " --bogus",
                        {"--bogus", "tessel compile --help"});
  expect_one_line_error("", {"subcommand", "tessel --help"});
  expect_one_line_error("run " + path("x.tar") + " --fill-mode sometimes",
                        {"--fill-mode", "sometimes"});
  expect_one_line_error("compile " + kModel + " -o " + path("x.tar") + " -O 7",
                        {"--opt-level", "7"});
  expect_one_line_error("compile " + path("missing.onnx") + " -o " + path("x.tar"),
                        {"missing.onnx"});
  expect_one_line_error("tune " + kModel + " -o " + path("x.json") + " --tuner annealing",
                        {"--tuner"});
  EXPECT_FALSE(fs::exists(path("x.tar")));
}

TEST_F(CliFlagsTest, HelpStillPrintsHelpAndExits0) {
  for (const char* args : {"--help", "tune --help", "run -h"}) {
    Result r = run_tessel(args);
    EXPECT_TRUE(r.exited && r.code == 0) << args << ":\n" << r.output;
    EXPECT_NE(r.output.find("Usage:"), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("error"), std::string::npos) << r.output;
  }
}

// 2147483648 was narrowed to 32 bits on its way to the kernels, and reported as a negative dim.
TEST_F(CliFlagsTest, InputShapesPast32BitsNameTheFlagInputAndDim) {
  std::string compile = "compile " + kModel + " -o " + path("x.tar") + " --input-shapes ";
  expect_one_line_error(
      compile + "'data:[1,3,2147483648,1]'",
      {"--input-shapes", "input 'data' dim 2 is 2147483648, more than 2147483647"});
  expect_one_line_error(compile + "'data:[1,3,99999999999999999999999,1]'",
                        {"--input-shapes", "input 'data' dim 2"});
  expect_one_line_error("inspect " + kModel + " --input-shapes 'data:[1,3,65536,65536]'",
                        {"--input-shapes", "input 'data' has more than 2147483647 elements"});
  for (const char* malformed :
       {"'data:[1,3'", "'data:[1,3]]'", "':[1]'", "'data:[1,,3]'", "'data:[1,-3]'",
        "'data:[1,3] data:[1,3]'", "'data:[[1]]'", "'data:]1['"}) {
    expect_one_line_error(compile + malformed, {"--input-shapes"});
  }
}

// A 100,000-step LSTM overflowed the stack in FuseOps; now it is refused before unrolling.
TEST_F(CliFlagsTest, AnLstmOverTheUnrollLimitIsRefused) {
  std::string lstm = std::string(TESSEL_MODELS_DIR) + "/lstm_classifier.onnx";
  expect_one_line_error(
      "compile " + lstm + " -o " + path("x.tar") + " --input-shapes 'seq:[100000,1,16]'",
      {"(LSTM)", "100000 time steps", "at most 1024"});
}

// NaN passed CLI11's checks (every comparison with it is false), and inf, and so did huge counts.
TEST_F(CliFlagsTest, NumbersMustBeFiniteAndInRange) {
  std::string tune = "tune " + kModel + " -o " + path("x.json") + " ";
  for (const char* flag : {"--time-budget", "--timeout", "--min-repeat-ms"}) {
    for (const char* value : {"nan", "inf", "-inf", "-1", "1e400", "0x10"}) {
      expect_one_line_error(tune + flag + " " + value, {flag});
    }
  }
  expect_one_line_error(tune + "--timeout 0", {"--timeout", "out of range"});
  for (const char* flag :
       {"--trials", "--early-stopping", "--number", "--repeat", "--model-check-rounds"}) {
    expect_one_line_error(tune + flag + " 99999999999", {flag, "out of range"});
    expect_one_line_error(tune + flag + " nan", {flag});
  }
  std::string run = "run " + path("x.tar") + " ";
  for (const char* flag : {"--repeat", "--number", "--print-top"}) {
    expect_one_line_error(run + flag + " -1", {flag});
    expect_one_line_error(run + flag + " 4294967297", {flag});
    // CLI11 would read "010" as octal 8.
    expect_one_line_error(run + flag + " 010", {flag, "leading zero"});
  }
  expect_one_line_error("compile " + kModel + " -o " + path("x.tar") + " -O nan", {"--opt-level"});
  EXPECT_FALSE(fs::exists(path("x.json")));
}

// An empty value read as "not given": `--inputs ''` ran on filled inputs.
TEST_F(CliFlagsTest, EmptyValuesAndEmptyListItemsAreErrors) {
  std::string compile = "compile " + kModel + " -o " + path("x.tar") + " ";
  for (const char* flag : {"--inputs", "--outputs"}) {
    expect_one_line_error("run " + path("x.tar") + " " + flag + " ''", {flag, "empty"});
  }
  for (const char* flag : {"--target", "--input-shapes", "--dump-ir", "--dump-dir",
                           "--tuning-records", "--disabled-pass"}) {
    expect_one_line_error(compile + flag + " ''", {flag});
  }
  expect_one_line_error("compile " + kModel + " -o ''", {"--output", "empty"});
  expect_one_line_error("inspect " + kModel + " --input-shapes ''", {"--input-shapes", "empty"});
  expect_one_line_error(compile + "--disabled-pass fuse_ops,,eliminate_common_subexpr",
                        {"--disabled-pass", "has an empty item"});
  expect_one_line_error(compile + "--dump-ir graph, --dump-dir " + path("dump"),
                        {"--dump-ir", "has an empty item"});
  std::string tune = "tune " + kModel + " -o " + path("x.json") + " ";
  expect_one_line_error(tune + "--tasks 0,1,", {"--tasks", "has an empty item"});
  expect_one_line_error(tune + "--tuning-records ''", {"--tuning-records"});
  expect_one_line_error("tune " + kModel + " -o ''", {"--output", "empty"});
  EXPECT_FALSE(fs::exists(path("x.tar")));
  EXPECT_FALSE(fs::exists(path("x.json")));
}

// An empty -mcpu meant the host CPU, a second -mcpu overrode the first.
TEST_F(CliFlagsTest, MalformedTargetsAreErrors) {
  std::string tune = "tune " + kModel + " -o " + path("x.json") + " --tasks list --target ";
  expect_one_line_error(tune + "'llvm -mcpu='", {"'-mcpu='", "malformed"});
  expect_one_line_error(tune + "'llvm -mcpu=skylake -mcpu=znver4'", {"gives -mcpu twice"});
  expect_one_line_error(tune + "'llvm -mattr=+avx2,,+fma'", {"empty CPU feature"});
  expect_one_line_error(tune + "'llvm -num-cores=99999999999'", {"-num-cores"});
}

std::string file_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Each resume of a finished run appended the re-measurements of its best configs again.
TEST_F(CliFlagsTest, ResumingAFinishedTuneAppendsNothing) {
  std::string records = path("finished.json");
  std::string tune = "tune " + kModel + " -o " + records +
                     " --tasks 0 --trials 4 --tuner random --number 1 --repeat 1 --min-repeat-ms 0"
                     " --model-check-rounds 0";
  Result r = run_tessel(tune);
  ASSERT_TRUE(r.exited && r.code == 0) << r.output;
  std::string finished = file_text(records);
  ASSERT_FALSE(finished.empty());
  for (int resume = 0; resume < 2; ++resume) {
    r = run_tessel(tune + " --resume");
    ASSERT_TRUE(r.exited && r.code == 0) << r.output;
    EXPECT_EQ(file_text(records), finished) << "resume " << resume << ":\n" << r.output;
  }
}

}  // namespace
}  // namespace tessel
