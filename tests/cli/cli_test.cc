// The tessel command, driven as a user would: compile a bundled model to a package, run it on an
// .npz and compare with the reference executor, time and profile it, inspect the model, load the
// package in a program without LLVM, and every user error with its message and exit code.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <string>

#include "frontend/onnx_importer.h"
#include "reference/reference.h"
#include "runtime/npz.h"
#include "tests/cli/cli_runner.h"
#include "tests/common/compare.h"
#include "tests/common/ndarray.h"

namespace tessel {
namespace {

namespace fs = std::filesystem;

using testing::kModel;
using testing::random_array;
using testing::Result;
using testing::run;
using testing::tessel;

class CliTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("tessel-cli-test-" + std::to_string(getpid()));
    fs::create_directories(dir_);
    Result r = run(tessel("compile " + kModel + " -o " + path("model.tar")));
    ASSERT_EQ(r.code, 0) << r.output;
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }
  static std::string path(const std::string& name) { return (dir_ / name).string(); }

  // Rewrites the package's mod.json with `edit` (via the system tar) into a new package.
  static std::string edited_package(const std::string& name, const std::string& sed_expr) {
    fs::path work = dir_ / (name + ".d");
    fs::create_directories(work);
    std::string cmd = "tar -xf " + path("model.tar") + " -C " + work.string() + " && sed -i '" +
                      sed_expr + "' " + (work / "mod.json").string() + " && tar -cf " + path(name) +
                      " -C " + work.string() + " mod.so mod.json mod.params";
    EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
    return path(name);
  }

  static fs::path dir_;
};
fs::path CliTest::dir_;

// The command exited with `code` and its output contains `message`.
void expect_cli_error(const Result& r, int code, const std::string& message) {
  EXPECT_EQ(r.code, code) << r.output;
  EXPECT_NE(r.output.find(message), std::string::npos) << "expected '" << message << "' in:\n"
                                                       << r.output;
}

// Runs `package` on a random .npz input and compares its output with the reference executor.
void expect_package_matches_reference(const std::string& package, const std::string& work_prefix) {
  runtime::NDArray x = random_array({1, 3, 32, 32}, 3);
  runtime::save_npz(work_prefix + "in.npz", {{"data", x}});
  Result r = run(tessel("run " + package + " --inputs " + work_prefix + "in.npz --outputs " +
                        work_prefix + "out.npz"));
  ASSERT_EQ(r.code, 0) << r.output;
  auto outputs = runtime::load_npz(work_prefix + "out.npz");
  ASSERT_EQ(outputs.size(), 1u);
  EXPECT_EQ(outputs[0].first, "prob");

  graph::TensorData xt(DataType::f32(), x.shape());
  std::memcpy(xt.raw(), x.raw_data(), x.nbytes());
  std::vector<graph::TensorData> want =
      reference::run(frontend::import_onnx(kModel), {{"data", xt}});
  const runtime::NDArray& got = outputs[0].second;
  ASSERT_EQ(got.shape(), want[0].shape());
  testing::expect_all_close(testing::values_of(got), testing::values_of(want[0]), {1e-6, 1e-4});
}

TEST_F(CliTest, PackageRunOnNpzMatchesTheReferenceExecutor) {
  expect_package_matches_reference(path("model.tar"), path("plain-"));
}

TEST_F(CliTest, PrintTimeAndProfilePrintTables) {
  Result r = run(tessel("run " + path("model.tar") + " --print-time --repeat 3 --number 2"));
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("Execution time summary (3 repeats x 2 runs)"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("median (ms)"), std::string::npos) << r.output;

  r = run(tessel("run " + path("model.tar") + " --profile --print-top 3"));
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("GFLOP/s"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("Conv"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("more kernels"), std::string::npos)
      << r.output;  // only the top 3 are shown
  EXPECT_NE(r.output.find("total "), std::string::npos) << r.output;
}

TEST_F(CliTest, InspectShowsIoOpsFusionGroupsAndMemoryPlan) {
  Result r = run(tessel("inspect " + kModel));
  ASSERT_EQ(r.code, 0) << r.output;
  for (const char* want :
       {"data", "float32[1, 3, 32, 32]", "prob", "BatchNormalization", "unsupported ops: none",
        "fusion groups", "+Add+Relu]", "memory plan:"}) {  // Conv or ConvNCHWc, by target
    EXPECT_NE(r.output.find(want), std::string::npos) << want << " in:\n" << r.output;
  }
}

// A model that does not import still shows what its file declares, and why it does not import.
TEST_F(CliTest, InspectShowsAModelWithUnsupportedOps) {
  std::string model = path("unsupported.onnx");
  std::ofstream(model, std::ios::binary) << frontend::onnx_text_to_model_bytes(R"(
    <ir_version: 8, opset_import: ["" : 13, "com.example" : 1]>
    g (float[2, 3] x) => (float[2, 3] y) {
      a = Relu(x)
      b = LpNormalization(a)
      y = com.example.MyOp(b)
    })");
  Result r = run(tessel("inspect " + model));
  ASSERT_EQ(r.code, 0) << r.output;
  for (const char* want : {"3 nodes", "x", "float32[2, 3]", "Relu", "com.example.MyOp",
                           "unsupported ops:", "LpNormalization (ai.onnx opset 13): 1 node"}) {
    EXPECT_NE(r.output.find(want), std::string::npos) << want << " in:\n" << r.output;
  }
  EXPECT_EQ(r.output.find("fusion groups"), std::string::npos) << r.output;
}

TEST_F(CliTest, PackageLoadsInAProgramWithoutLlvm) {
  Result r = run(std::string(TESSEL_LOAD_PACKAGE) + " " + path("model.tar"));
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("output 'prob': 10 elements of float32"), std::string::npos) << r.output;
  Result libs = run(std::string("ldd ") + TESSEL_LOAD_PACKAGE);
  ASSERT_EQ(libs.code, 0) << libs.output;
  EXPECT_EQ(libs.output.find("LLVM"), std::string::npos) << libs.output;
}

TEST_F(CliTest, DumpIrWritesEveryStage) {
  fs::path dump = dir_ / "dump";
  Result r = run(tessel("compile " + kModel + " -o " + path("dumped.tar") +
                        " --dump-ir all --dump-dir " + dump.string()));
  ASSERT_EQ(r.code, 0) << r.output;
  for (const char* file : {"graph.txt", "te.txt", "tir.txt", "llvm.ll", "asm.s"}) {
    EXPECT_GT(fs::file_size(dump / file), 0u) << file;
  }
  expect_cli_error(run(tessel("compile " + kModel + " -o " + path("x.tar") +
                              " --dump-ir graph,bogus --dump-dir " + dump.string())),
                   1, "--dump-ir: unknown stage 'bogus'");
}

TEST_F(CliTest, DisabledPassesChangeTheKernels) {
  Result fused = run(tessel("compile " + kModel + " -o " + path("fused.tar")));
  Result unfused =
      run(tessel("compile " + kModel + " -o " + path("unfused.tar") + " --disabled-pass fuse_ops"));
  ASSERT_EQ(fused.code, 0) << fused.output;
  ASSERT_EQ(unfused.code, 0) << unfused.output;
  auto kernels = [](const std::string& out) {
    size_t at = out.find(" kernels for ");
    size_t open = out.rfind('(', at);
    return at == std::string::npos ? -1 : std::stoi(out.substr(open + 1, at - open - 1));
  };
  EXPECT_GT(kernels(unfused.output), kernels(fused.output)) << fused.output << unfused.output;
}

TEST_F(CliTest, FlagErrorsNameTheFlag) {
  expect_cli_error(run(tessel("compile " + kModel + " -o " + path("x.tar") + " --bogus")), 1,
                   "--bogus");
  expect_cli_error(run(tessel("run " + path("model.tar") + " --fill-mode sometimes")), 1,
                   "--fill-mode");
  expect_cli_error(run(tessel("compile " + kModel + " -o " + path("x.tar") + " -O 7")), 1,
                   "--opt-level");
  expect_cli_error(
      run(tessel("compile " + kModel + " -o " + path("x.tar") + " --input-shapes 'data[1,3]'")), 1,
      "--input-shapes: 'data[1,3]'");
  expect_cli_error(
      run(tessel("compile " + kModel + " -o " + path("x.tar") + " --input-shapes 'data:[1,x]'")), 1,
      "bad dim 'x'");
  expect_cli_error(run(tessel("compile " + kModel + " -o " + path("x.tar") +
                              " --input-shapes 'nope:[1,3,32,32]'")),
                   1, "'nope', which is not an input");
  expect_cli_error(run(tessel("compile " + path("missing.onnx") + " -o " + path("x.tar"))), 1,
                   "missing.onnx");
  expect_cli_error(run(tessel("compile " + kModel + " -o " + path("x.tar") +
                              " --disabled-pass fold_constant,bogus")),
                   1, "disabled pass 'bogus' is not a graph pass");
  expect_cli_error(
      run(tessel("tune " + kModel + " -o " + path("x.json") + " --disabled-pass infer_type")), 1,
      "disabled pass 'infer_type' is required");
  EXPECT_FALSE(fs::exists(path("x.tar")));
}

TEST_F(CliTest, BadPackagesAreRejectedWithTheReason) {
  expect_cli_error(run(tessel("run " + path("nothere.tar"))), 1, "does not exist");
  {
    std::ofstream junk(path("junk.tar"), std::ios::binary);
    junk << std::string(3000, 'x');
  }
  expect_cli_error(run(tessel("run " + path("junk.tar"))), 1, "cannot open package");
  ASSERT_EQ(std::system(("tar -cf " + path("empty.tar") + " -C " + dir_.string() +
                         " in.npz 2>/dev/null || tar -cf " + path("empty.tar") +
                         " --files-from /dev/null")
                            .c_str()),
            0);
  expect_cli_error(run(tessel("run " + path("empty.tar"))), 1, "has no mod.so");
  expect_cli_error(
      run(tessel("run " + edited_package("v99.tar", "s/\"version\": 1/\"version\": 99/"))), 1,
      "package format version 99");
  expect_cli_error(
      run(tessel("run " +
                 edited_package("arm.tar", "s/\"arch\": \"x86_64\"/\"arch\": \"aarch64\"/"))),
      1, "was compiled for aarch64");
  expect_cli_error(run(tessel("run " + edited_package("broken.tar", "s/\"kernels\"/\"kernelz\"/"))),
                   1, "is corrupt");
}

TEST_F(CliTest, BadInputsAndOutputsAreRejected) {
  runtime::save_npz(path("small.npz"), {{"data", random_array({1, 3, 8, 8}, 1)}});
  expect_cli_error(
      run(tessel("run " + path("model.tar") + " --inputs " + path("small.npz"))), 1,
      "input 'data' is float32[1, 3, 8, 8] but the model expects float32[1, 3, 32, 32]");
  runtime::NDArray ints = runtime::NDArray::empty({1, 3, 32, 32}, DataType::i32());
  runtime::save_npz(path("ints.npz"), {{"data", ints}});
  expect_cli_error(run(tessel("run " + path("model.tar") + " --inputs " + path("ints.npz"))), 1,
                   "int32");
  runtime::save_npz(path("named.npz"), {{"image", random_array({1, 3, 32, 32}, 1)}});
  expect_cli_error(run(tessel("run " + path("model.tar") + " --inputs " + path("named.npz"))), 1,
                   "array 'image' but the model has no input of that name");
  expect_cli_error(run(tessel("run " + path("model.tar") + " --outputs /nonexistent-dir/out.npz")),
                   1, "/nonexistent-dir/out.npz");
  expect_cli_error(run(tessel("compile " + kModel + " -o /nonexistent-dir/model.tar")), 1,
                   "/nonexistent-dir does not exist");
}

size_t line_count(const std::string& file) {
  std::ifstream in(file);
  size_t n = 0;
  for (std::string line; std::getline(in, line);) n += !line.empty();
  return n;
}

// tune writes records (and resumes from them), compile applies them, and the tuned package still
// computes the model.
TEST_F(CliTest, TuneThenCompileWithTheRecords) {
  std::string records = path("records.json");
  // Without the model check, whose vetoes would make the counts below depend on timing.
  // An AVX2 target, whose convs' layouts (and so the tasks) do not depend on this machine's ISA.
  std::string fast =
      " --target \"llvm -mcpu=haswell\" --tuner random --number 1 --repeat 1"
      " --min-repeat-ms 0 --model-check-rounds 0";
  Result r = run(tessel("tune " + kModel + " -o " + records + " --trials 4" + fast));
  ASSERT_EQ(r.code, 0) << r.output;
  // 6 tasks, and each of the 5 convs in its other layout (packed)
  EXPECT_NE(r.output.find("[Task 11/11]"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("speed-up"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("task 10 is task 4 in the other layout"), std::string::npos) << r.output;
  size_t first = line_count(records);  // 4 trials per task, and re-measurements of the best
  EXPECT_GE(first, 11u * 4u);

  expect_cli_error(run(tessel("tune " + kModel + " -o " + records + " --trials 6" + fast)), 1,
                   "exists: pass --resume to continue that run");
  r = run(
      tessel("tune " + kModel + " -o " + records + " --resume --trials 6 --tasks 0,2-3" + fast));
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find(fmt::format("resuming: {} records", first)), std::string::npos)
      << r.output;
  EXPECT_GE(line_count(records), first + 3u * 2u);  // 2 more trials for each of the 3 tasks

  r = run(tessel("compile " + kModel + " -o " + path("tuned.tar") + " --tuning-records " + records +
                 " --target \"llvm -mcpu=haswell\""));
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("tuning records: 7 of 7 tunable kernels tuned ("), std::string::npos)
      << r.output;
  EXPECT_NE(
      r.output.find(
          "of them keep the fallback config, which no measured config beat), 0 without records use "
          "the fallback schedule; 6 convs laid out (direct or packed) by records of both forms"),
      std::string::npos)
      << r.output;
  expect_package_matches_reference(path("tuned.tar"), path("tuned-"));
}

// The auto-scheduler: every fused kernel is a task (pools and softmax too), sketches print, a
// search appends auto_schedule records and resumes from them, and compile applies them.
TEST_F(CliTest, AutoScheduleTunesEveryKernel) {
  std::string records = path("auto.json");
  Result r = run(tessel("tune " + kModel + " -o " + records + " --auto-schedule --tasks list"));
  ASSERT_EQ(r.code, 0) << r.output;
  // The pool reads the last conv's channel blocks (passes/alter_op_layout).
  EXPECT_NE(r.output.find("auto|GlobalAveragePool|float32[1, 2, 16, 16, 16]|input_block=16(in0)->"
                          "float32[1, 32, 1, 1]|out=n0.0"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("   9  Softmax"), std::string::npos) << r.output;
  r = run(
      tessel("tune " + kModel + " -o " + records + " --auto-schedule --tasks 1 --show-sketches"));
  ASSERT_EQ(r.code, 0) << r.output;
  // The conv's consumer reads it elementwise or unpacks its blocks, as the host's rule packs it.
  EXPECT_NE(r.output.find("data reuse, "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("sketch 1:\n"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("tiled SSRSRS, computed at tile level 2 of"), std::string::npos)
      << r.output;
  expect_cli_error(run(tessel("tune " + kModel + " -o " + records + " --show-sketches")), 1,
                   "--show-sketches: sketches are the auto-scheduler's; add --auto-schedule");
  expect_cli_error(run(tessel("tune " + kModel + " -o " + records + " --auto-schedule --tuner ga")),
                   1, "--tuner: a flag of the template tuner, which --auto-schedule does not use");
  EXPECT_FALSE(fs::exists(records));

  const std::string fast = " --number 1 --repeat 1 --min-repeat-ms 0 --model-check-rounds 0";
  r = run(tessel("tune " + kModel + " -o " + records + " --auto-schedule --trials 20" + fast));
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("20 trials in all"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("| trials 20/20 | est. model latency"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("kernels alone, weighted by occurrence"), std::string::npos) << r.output;
  std::string lines = testing::contents(records);
  size_t first = line_count(records);
  EXPECT_GE(first, 10u + 20u);  // a fallback per task, the trials, the finalists re-measured
  EXPECT_NE(lines.find(R"("v":3,"kind":"auto_schedule")"), std::string::npos);
  EXPECT_EQ(lines.find(R"("error":"wrong_answer")"), std::string::npos) << lines;

  r = run(tessel("tune " + kModel + " -o " + records + " --auto-schedule --resume --trials 6 " +
                 "--tasks 1" + fast));
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find(fmt::format("resuming: {} records", first)), std::string::npos)
      << r.output;
  // The resumed task's fallback is not measured again: only its trials and the re-measurements
  // of its 3 finalists, twice each (and of the fallback when it is not their baseline).
  EXPECT_GE(line_count(records), first + 6u);
  EXPECT_LE(line_count(records), first + 6u + (3u + 1u) * 2u);

  r = run(tessel("compile " + kModel + " -o " + path("auto.tar") + " --tuning-records " + records));
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(r.output.find("warning"), std::string::npos) << r.output;
  expect_package_matches_reference(path("auto.tar"), path("auto-"));
}

// After tuning, the build with the records runs against the untuned one; what loses in the model
// is vetoed in the records file, one line per veto, or given its untuned kernel back, one line
// per layout of the workload.
TEST_F(CliTest, TuneChecksTheTunedModel) {
  std::string records = path("checked.json");
  Result r =
      run(tessel("tune " + kModel + " -o " + records +
                 " --tasks 0,6 --trials 4 --tuner random --number 1 --repeat 1 --min-repeat-ms 0"
                 " --model-check-rounds 2"));
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("model check: the build with these records against the untuned one, 2 "
                          "alternating rounds"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("outputs agree"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("end to end: "), std::string::npos) << r.output;
  auto count = [](const std::string& text, const std::string& what) {
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
  };
  std::ifstream in(records);
  std::string lines((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(count(lines, R"("verdict":"veto")"), count(r.output, "  vetoed  ")) << r.output;
  size_t untuned = count(r.output, "  untuned  ");
  // A final build slower end to end than the untuned one gives every workload it tunes back.
  std::smatch undone;
  if (std::regex_search(r.output, undone,
                        std::regex("its ([0-9]+) workload\\(s\\) get the untuned")))
    untuned += std::stoul(undone[1]);
  EXPECT_GE(count(lines, R"("verdict":"pin")"), untuned) << r.output;
  EXPECT_LE(count(lines, R"("verdict":"pin")"), 2 * untuned) << r.output;
  expect_cli_error(
      run(tessel("tune " + kModel + " -o " + path("x.json") + " --model-check-rounds -1")), 1,
      "--model-check-rounds");
}

TEST_F(CliTest, TuneListsTasksAndRejectsBadFlags) {
  // An AVX2 target: the tasks follow its conv layouts, whatever this machine's ISA.
  const std::string avx2 = " --target \"llvm -mcpu=haswell\"";
  Result r = run(tessel("tune " + kModel + " -o " + path("unused.json") + " --tasks list" + avx2));
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("Conv|float32[1, 3, 32, 32]|float32[16, 3, 3, 3]"), std::string::npos)
      << r.output;
  // The stem's other layout is listed after the tasks (which of the two is the task follows
  // pack_conv_weights' rule for the target).
  EXPECT_NE(r.output.find("ConvNCHWc|float32[1, 3, 32, 32]|float32[1, 3, 3, 3, 16]"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("1       0.88  task 0     "), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(path("unused.json")));
  r = run(tessel("tune " + kModel + " -o " + path("unused.json") +
                 " --tasks list --conv-layouts rule" + avx2));
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 7)
      << r.output;  // a header and 6 tasks

  expect_cli_error(run(tessel("tune " + kModel + " -o " + path("x.json") + " --tuner annealing")),
                   1, "--tuner");
  expect_cli_error(run(tessel("tune " + kModel + " -o " + path("x.json") + " --tasks 3-19" + avx2)),
                   1, "--tasks: '3-19' is out of range: the model has tasks 0 to 10");
  expect_cli_error(
      run(tessel("tune " + kModel + " -o " + path("x.json") + " --conv-layouts packed")), 1,
      "--conv-layouts");
  expect_cli_error(run(tessel("tune " + kModel + " -o " + path("x.json") + " --tasks two")), 1,
                   "--tasks: 'two' is not a task number or range");
  // Each bound is a whole number: the first three read as 1-3, 0-2 and 1-3 before.
  for (const char* range : {"1x-3", "0-2-5", "1-3abc", "-3"}) {
    expect_cli_error(
        run(tessel("tune " + kModel + " -o " + path("x.json") + " --tasks=" + range + avx2)), 1,
        fmt::format("--tasks: '{}' is not a task number or range", range));
  }
  expect_cli_error(run(tessel("tune " + kModel + " -o " + path("x.json") + " --trials 0")), 1,
                   "--trials");
  expect_cli_error(run(tessel("tune " + kModel + " -o /nonexistent/x.json --trials 1")), 1,
                   "/nonexistent/x.json");
  expect_cli_error(run(tessel("compile " + kModel + " -o " + path("y.tar") +
                              " --tuning-records /nonexistent.json")),
                   1, "--tuning-records");
}

}  // namespace
}  // namespace tessel
