// A Model's copies and threads: each copy has its own inputs, buffers and outputs and shares the
// code and the weights; one Model used from two threads at once is refused.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <future>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "runtime/model.h"
#include "tests/common/expect_error.h"

namespace tessel::runtime {
namespace {

using tessel::testing::expect_error;

constexpr int64_t kSize = 1024;

float* floats(const TesselValue& v) {
  return static_cast<float*>(static_cast<DLTensor*>(v.v_handle)->data);
}

// C++ kernels over three float arrays of kSize: "scale" C = A * B, "add" C = A + B, and
// "hooked_scale", which calls the test's hook first.
class TestModule : public ModuleNode {
 public:
  std::function<void()> hook;

  Function get_function(const std::string& name) override {
    auto elementwise = [this, name](float (*op)(float, float), bool hooked) {
      return Function(name, [this, op, hooked](const TesselValue* args, const int32_t*, int32_t) {
        if (hooked) hook();
        for (int64_t i = 0; i < kSize; ++i)
          floats(args[2])[i] = op(floats(args[0])[i], floats(args[1])[i]);
      });
    };
    auto mul = [](float a, float b) { return a * b; };
    if (name == "scale") return elementwise(mul, false);
    if (name == "hooked_scale") return elementwise(mul, true);
    if (name == "add") return elementwise([](float a, float b) { return a + b; }, false);
    return {};
  }
  std::vector<std::string> function_names() const override {
    return {"scale", "hooked_scale", "add"};
  }
  std::string source(const std::string&) const override { return ""; }
};

NDArray filled(const std::function<float(int64_t)>& value) {
  NDArray a = NDArray::empty({kSize}, DataType::f32());
  for (int64_t i = 0; i < kSize; ++i) a.data<float>()[i] = value(i);
  return a;
}

NDArray input_values(int seed) {
  return filled(
      [seed](int64_t i) { return static_cast<float>((i * 3 + seed * 101) % 977) * 0.25f; });
}

NDArray weight_values() {
  return filled([](int64_t i) { return 1.0f + static_cast<float>(i % 13); });
}

// x (input) -scale by w-> t (a planned buffer) -add w-> y (output); `first_kernel` replaces scale.
Model test_model(std::shared_ptr<TestModule> module, const std::string& first_kernel = "scale") {
  ExecutorPlan plan;
  plan.buffer_bytes = {kSize * 4};
  auto entry = [](int buffer, const std::string& param) {
    return StorageEntry{{kSize}, DataType::f32(), buffer, param};
  };
  plan.storage = {entry(-1, ""), entry(-1, "w"), entry(0, ""), entry(-1, "")};
  plan.kernels = {{first_kernel, {0, 1, 2}, "", 0}, {"add", {2, 1, 3}, "", 0}};
  plan.inputs = {{"x", 0}};
  plan.outputs = {{"y", 3}};
  return Model(Module(std::move(module)), plan, {{"w", weight_values()}});
}

// What the model computes for input x: x * w + w.
NDArray expected_output(const NDArray& x) {
  NDArray w = weight_values();
  return filled(
      [&](int64_t i) { return x.data<float>()[i] * w.data<float>()[i] + w.data<float>()[i]; });
}

bool same_values(const NDArray& a, const NDArray& b) {
  return a.nbytes() == b.nbytes() && std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()) == 0;
}

NDArray run_once(Model& m, const NDArray& x) {
  m.set_input("x", x);
  m.run();
  return m.get_output("y").copy();
}

// A copy of an executor would share its arrays, so only a Model (which knows its weights) copies.
static_assert(!std::is_copy_constructible_v<GraphExecutor> &&
              std::is_move_constructible_v<GraphExecutor>);

TEST(ModelCopyTest, CopyHasItsOwnArraysAndSharesTheWeights) {
  Model original = test_model(std::make_shared<TestModule>());
  NDArray x1 = input_values(1), x2 = input_values(2);
  original.set_input("x", x1);
  Model copy = original;
  // Copied with the original's input: running the copy alone gives x1's output.
  copy.run();
  EXPECT_TRUE(same_values(copy.get_output("y"), expected_output(x1)));
  copy.set_input("x", x2);
  copy.run();
  original.run();
  EXPECT_TRUE(same_values(original.get_output("y"), expected_output(x1)));
  EXPECT_TRUE(same_values(copy.get_output("y"), expected_output(x2)));
  for (int s = 0; s < 4; ++s) {
    bool is_weight = s == 1;
    EXPECT_EQ(copy.executor().storage(s).raw_data() == original.executor().storage(s).raw_data(),
              is_weight)
        << "storage entry " << s;
  }
  EXPECT_EQ(copy.params().at("w").raw_data(), original.params().at("w").raw_data());
  EXPECT_EQ(copy.module().node(), original.module().node());
}

TEST(ModelCopyTest, CopyAssignmentAndMoveKeepTheArraysApart) {
  Model a = test_model(std::make_shared<TestModule>());
  Model b = test_model(std::make_shared<TestModule>());
  a.set_input("x", input_values(3));
  b = a;
  b.set_input("x", input_values(4));
  a.run();
  b.run();
  EXPECT_TRUE(same_values(a.get_output("y"), expected_output(input_values(3))));
  EXPECT_TRUE(same_values(b.get_output("y"), expected_output(input_values(4))));
  Model moved = std::move(b);
  moved.run();
  EXPECT_TRUE(same_values(moved.get_output("y"), expected_output(input_values(4))));
}

TEST(ModelCopyTest, ThreadsRunTheirOwnCopiesAndMatchTheSerialRunExactly) {
  Model model = test_model(std::make_shared<TestModule>());
  const int kThreads = 4, kRuns = 200;
  std::vector<NDArray> expected;
  for (int t = 0; t < kThreads; ++t) expected.push_back(run_once(model, input_values(t)));
  std::vector<int> mismatches(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t, mine = Model(model)]() mutable {
      for (int r = 0; r < kRuns; ++r) {
        if (!same_values(run_once(mine, input_values(t)), expected[t])) ++mismatches[t];
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(mismatches, std::vector<int>(kThreads, 0));
}

// While one thread is inside run(), set_input and run from another are refused, not raced.
TEST(ModelThreadsTest, SecondThreadOnOneModelIsRefused) {
  auto module = std::make_shared<TestModule>();
  std::promise<void> entered, release;
  std::shared_future<void> released = release.get_future().share();
  module->hook = [&] {
    entered.set_value();
    released.wait();
  };
  Model model = test_model(module, "hooked_scale");
  model.set_input("x", input_values(5));
  std::thread runner([&] { model.run(); });
  entered.get_future().wait();
  expect_error([&] { model.run(); }, {"model run", "another thread", "its own copy"});
  expect_error([&] { model.set_input("x", input_values(6)); },
               {"model set_input", "another thread"});
  expect_error([&] { model.run_profiled(); }, {"model run", "another thread"});
  release.set_value();
  runner.join();
  // The first run was not disturbed, and the model is free again.
  EXPECT_TRUE(same_values(model.get_output("y"), expected_output(input_values(5))));
  module->hook = [] {};
  EXPECT_TRUE(same_values(run_once(model, input_values(7)), expected_output(input_values(7))));
}

TEST(ModelThreadsTest, AFailedRunFreesTheModel) {
  auto module = std::make_shared<TestModule>();
  module->hook = [] { throw Error("hook failed"); };
  Model model = test_model(module, "hooked_scale");
  expect_error([&] { model.run(); }, {"hook failed"});
  module->hook = [] {};
  EXPECT_TRUE(same_values(run_once(model, input_values(8)), expected_output(input_values(8))));
}

}  // namespace
}  // namespace tessel::runtime
