// A model's kernels are compiled once (issue 21): the in-process model and the package run the
// same machine code, kernels equal up to names share one compiled kernel, a recompile takes them
// from the cache, and the package's bytes do not depend on how many kernels LLVM compiled at once.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "../passes/graph_builder.h"
#include "driver/compile.h"
#include "runtime/model.h"
#include "tests/common/scoped_env.h"
#include "tests/runtime/temp_dir_fixture.h"

namespace tessel {
namespace {

const std::string kModel = std::string(TESSEL_MODELS_DIR) + "/resnet_mini.onnx";

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

runtime::NDArray run(runtime::Model& m) {
  runtime::NDArray x = runtime::NDArray::empty({1, 3, 32, 32}, DataType::f32());
  for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = float(i % 251) / 125.0f - 1.0f;
  m.set_input("data", x);
  m.run();
  return m.get_output(0).copy();
}

class CompileOnceTest : public testing::TempDirTest {};

TEST_F(CompileOnceTest, PackagesAreTheSameBytesForAnyNumberOfJobs) {
  CompileOptions opt;
  opt.compile_jobs = 1;
  CompiledModel serial = compile(kModel, opt);
  serial.export_package(path("serial.tar"));
  opt.compile_jobs = 3;
  CompiledModel parallel = compile(kModel, opt);
  parallel.export_package(path("parallel.tar"));
  EXPECT_EQ(read_bytes(path("serial.tar")), read_bytes(path("parallel.tar")));
  EXPECT_EQ(parallel.codegen().jobs, 3);
  // The package runs what the in-process model runs.
  runtime::Model loaded = runtime::load_package(path("serial.tar"));
  runtime::NDArray in_process = run(serial), from_package = run(loaded);
  EXPECT_EQ(std::memcmp(in_process.raw_data(), from_package.raw_data(), in_process.nbytes()), 0);
}

TEST_F(CompileOnceTest, EqualKernelsShareOneCompiledKernel) {
  // Both Tanh nodes become kernels of their own (the first one's output is a graph output, where
  // fusion stops), equal up to names.
  passes::testing::Builder b;
  auto once = b.op("Tanh", {b.input("x", {4, 33})}, {}, "once");
  graph::Graph g = b.finish({once, b.op("Tanh", {once}, {}, "twice")});
  CompiledModel m = compile_graph(g);
  EXPECT_EQ(m.codegen().kernels, 2);
  EXPECT_EQ(m.codegen().distinct, 1);
  graph::TensorData x = passes::testing::random_tensor({4, 33}, 3);
  m.set_input("x", to_ndarray(x));
  m.run();
  graph::TensorData y = to_tensor_data(m.get_output(1));
  for (int64_t i = 0; i < x.numel(); ++i)
    ASSERT_NEAR(y.get_double(i), std::tanh(std::tanh(x.get_double(i))), 1e-6) << i;
}

TEST_F(CompileOnceTest, ARecompileTakesEveryKernelFromTheCache) {
  testing::ScopedEnv cache_dir("TESSEL_CACHE_DIR", path("cache").c_str());
  CompiledModel cold = compile(kModel);
  CompiledModel warm = compile(kModel);
  EXPECT_EQ(cold.codegen().from_cache, 0);
  EXPECT_EQ(warm.codegen().from_cache, warm.codegen().distinct);
  runtime::NDArray a = run(cold), b = run(warm);
  EXPECT_EQ(std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()), 0);
}

}  // namespace
}  // namespace tessel
