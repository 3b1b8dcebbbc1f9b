// tessel tune: the tuners a build has (XGBoost is optional), and the model check's verdicts in a
// resumed records file, in their own form or in version 1's.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "tests/cli/cli_runner.h"

namespace tessel::testing {
namespace {

namespace fs = std::filesystem;

class TuneCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tessel-tune-cli-" + std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

 private:
  fs::path dir_;
};

// `tessel tune --help` says which tuners this build has; xgb is either one of them or, in a build
// without XGBoost, named as missing, and asking for it then is an error that says why.
TEST_F(TuneCliTest, TheHelpListsTheTunersOfThisBuild) {
  Result help = run(tessel("tune --help"));
  ASSERT_EQ(help.code, 0) << help.output;
  bool with_xgb = help.output.find("--tuner TEXT:{random,grid,ga,xgb}=xgb") != std::string::npos;
  bool without_xgb =
      help.output.find("--tuner TEXT:{random,grid,ga}=ga") != std::string::npos &&
      help.output.find("xgb, XGBoost-guided, is not in this build") != std::string::npos;
  EXPECT_NE(with_xgb, without_xgb) << help.output;

  std::string xgb =
      tessel("tune " + kModel + " -o " + path("xgb.json") + " --tuner xgb --tasks list");
  Result r = run(xgb);
  if (with_xgb) {
    EXPECT_EQ(r.code, 0) << r.output;
  } else {
    expect_user_error(r, {"--tuner", "the xgb tuner is not in this build",
                          "TESSEL_WITH_XGBOOST=OFF", "random, grid, ga"});
  }
  expect_user_error(run(tessel("tune " + kModel + " -o " + path("x.json") + " --tuner annealing")),
                    {"--tuner", "unknown tuner 'annealing'"});
}

// A resumed run counts the verdicts among the records it resumes from: one of version 1's form
// (a measurement whose error named it) and one of its own kind; neither is skipped.
TEST_F(TuneCliTest, AResumedRunReadsVerdictsOfEitherForm) {
  const std::string workload = "Conv|unused";
  const std::string common = R"("target":"llvm -mcpu=other","workload":")" + workload +
                             R"(","config":{"tile":[1,4]},"config_index":3,)";
  write(path("records.json"),
        R"({"v":1,)" + common +
            R"("costs":[0.001],"error":"none","error_msg":"","timestamp":1700000000})" + "\n" +
            R"({"v":1,)" + common +
            R"("costs":[0.002],"error":"slower_in_model","error_msg":"","timestamp":1700000001})" +
            "\n" + R"({"v":2,"kind":"model_check",)" + common +
            R"("verdict":"pin","tuned_ms":2,"untuned_ms":1,"speedup":0.5,"rounds":20,)" +
            R"("kernels":["k"],"timestamp":1700000002,"fallback":true})" + "\n");
  Result r = run(tessel("tune " + kModel + " -o " + path("records.json") +
                        " --resume --tasks 0 --trials 1 --tuner random --number 1 --repeat 1"
                        " --min-repeat-ms 0 --model-check-rounds 0"));
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("resuming: 3 records in " + path("records.json") +
                          " (2 of them model-check verdicts)"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("warning"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace tessel::testing
