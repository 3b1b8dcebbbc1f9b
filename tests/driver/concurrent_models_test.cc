// Compiled and loaded models used from several user threads: copies of one CompiledModel, models
// compiled in several threads at once, and one package loaded in several threads. Each thread's
// outputs must equal the single-threaded run's bit for bit.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "driver/compile.h"
#include "runtime/model.h"

namespace tessel {
namespace {

const std::string kModel = std::string(TESSEL_MODELS_DIR) + "/resnet_mini.onnx";
constexpr int kThreads = 3;

runtime::NDArray input_for(int seed) {
  runtime::NDArray x = runtime::NDArray::empty({1, 3, 32, 32}, DataType::f32());
  for (int64_t i = 0; i < x.numel(); ++i) {
    x.data<float>()[i] = static_cast<float>((i * 37 + seed * 1009) % 255) / 127.0f - 1.0f;
  }
  return x;
}

runtime::NDArray run_once(runtime::Model& m, int seed) {
  m.set_input("data", input_for(seed));
  m.run();
  return m.get_output(0).copy();
}

bool same_values(const runtime::NDArray& a, const runtime::NDArray& b) {
  return a.shape() == b.shape() && std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()) == 0;
}

// The single-threaded outputs for inputs 0 .. kThreads - 1.
std::vector<runtime::NDArray> serial_outputs(runtime::Model& m) {
  std::vector<runtime::NDArray> out;
  for (int t = 0; t < kThreads; ++t) out.push_back(run_once(m, t));
  EXPECT_FALSE(same_values(out[0], out[1])) << "the inputs should give different outputs";
  return out;
}

// Runs body(t) in kThreads threads at once; returns each thread's count of mismatching runs.
std::vector<int> in_threads(const std::function<int(int)>& body) {
  std::vector<int> mismatches(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) threads.emplace_back([&, t] { mismatches[t] = body(t); });
  for (auto& th : threads) th.join();
  return mismatches;
}

TEST(ConcurrentModelsTest, CopiesOfOneCompiledModelRunInThreads) {
  CompiledModel model = compile(kModel);
  std::vector<runtime::NDArray> expected = serial_outputs(model);
  std::vector<CompiledModel> copies(kThreads, model);
  std::vector<int> mismatches = in_threads([&](int t) {
    int wrong = 0;
    for (int r = 0; r < 10; ++r) wrong += !same_values(run_once(copies[t], t), expected[t]);
    return wrong;
  });
  EXPECT_EQ(mismatches, std::vector<int>(kThreads, 0));
  // The copies shared the original's weights and left its arrays alone.
  EXPECT_EQ(copies[0].params().begin()->second.raw_data(),
            model.params().begin()->second.raw_data());
  EXPECT_TRUE(same_values(model.get_output(0), expected[kThreads - 1]));
}

TEST(ConcurrentModelsTest, ModelsCompiledInSeveralThreadsAtOnce) {
  CompiledModel reference = compile(kModel);
  std::vector<runtime::NDArray> expected = serial_outputs(reference);
  std::vector<int> mismatches = in_threads([&](int t) {
    CompiledModel mine = compile(kModel);
    int wrong = 0;
    for (int r = 0; r < 5; ++r) wrong += !same_values(run_once(mine, t), expected[t]);
    return wrong;
  });
  EXPECT_EQ(mismatches, std::vector<int>(kThreads, 0));
}

TEST(ConcurrentModelsTest, APackageLoadedInSeveralThreadsAtOnce) {
  std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("tessel-threads-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::string package = (dir / "model.tar").string();
  compile(kModel).export_package(package);
  runtime::Model loaded = runtime::load_package(package);
  std::vector<runtime::NDArray> expected = serial_outputs(loaded);
  std::vector<int> mismatches = in_threads([&](int t) {
    runtime::Model mine = runtime::load_package(package);
    int wrong = 0;
    for (int r = 0; r < 10; ++r) wrong += !same_values(run_once(mine, t), expected[t]);
    return wrong;
  });
  EXPECT_EQ(mismatches, std::vector<int>(kThreads, 0));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tessel
