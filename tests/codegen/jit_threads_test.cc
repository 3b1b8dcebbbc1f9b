// JIT sessions created and destroyed over and over, from one thread and from two at once, and
// JIT-compiled models run from several threads (one Model per thread, copied from one compile).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "runtime/model.h"
#include "runtime/thread_pool.h"
#include "tests/codegen/codegen_test_util.h"

namespace tessel {
namespace {

using namespace tessel::testing;

// The model's arrays; a JIT cycle uses a small kernel, whose module dies right after its short run.
constexpr int64_t kSize = 4096;
constexpr int64_t kCycleSize = 64;

// T[i] = exp(X[i] * W[i]) in a parallel loop: exp is libm's expf, which the JIT resolves from the
// process while it links, and the loop runs on the thread pool.
PrimFunc exp_scale(const std::string& name, int64_t n = kSize) {
  Buffer x = Buffer::make("X", DataType::f32(), {PrimExpr(n)});
  Buffer w = Buffer::make("W", DataType::f32(), {PrimExpr(n)});
  Buffer t = Buffer::make("T", DataType::f32(), {PrimExpr(n)});
  Var i("i");
  PrimExpr value = CallNode::make(DataType::f32(), Intrinsic::exp, {load(x, i) * load(w, i)});
  return make_func(name, {x, w, t}, loop(i, PrimExpr(n), store(t, value, i), ForKind::kParallel));
}

// Y[i] = T[i] * 0.5 + W[i], also parallel.
PrimFunc half_plus_weight(const std::string& name) {
  Buffer t = Buffer::make("T", DataType::f32(), {PrimExpr(kSize)});
  Buffer w = Buffer::make("W", DataType::f32(), {PrimExpr(kSize)});
  Buffer y = Buffer::make("Y", DataType::f32(), {PrimExpr(kSize)});
  Var i("i");
  Stmt body =
      loop(i, PrimExpr(kSize), store(y, load(t, i) * 0.5f + load(w, i), i), ForKind::kParallel);
  return make_func(name, {t, w, y}, body);
}

runtime::NDArray input_array(int seed, int64_t n = kSize) {
  return float_array(
      {n}, [seed](int64_t i) { return 0.001f * static_cast<float>((i * 7 + seed * 13) % 1000); });
}

runtime::NDArray weight_array(int64_t n = kSize) {
  return float_array({n}, [](int64_t i) { return 0.5f + 0.0005f * static_cast<float>(i % 997); });
}

bool same_values(const runtime::NDArray& a, const runtime::NDArray& b) {
  return a.nbytes() == b.nbytes() && std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()) == 0;
}

// Builds exp_scale, runs it and checks it against std::exp; returns the number of wrong elements.
// The shared JIT session lives only as long as some module holds it, so a cycle alone creates the
// LLJIT and destroys it with the module.
int build_run_destroy(const std::string& name, const runtime::NDArray& x,
                      const runtime::NDArray& w) {
  runtime::Module mod = build(exp_scale(name, x.numel()), host_target());
  runtime::NDArray t = runtime::NDArray::empty(x.shape(), DataType::f32());
  mod.get_function(name)(x, w, t);
  int wrong = 0;
  for (int64_t i = 0; i < x.numel(); ++i) {
    float expected = std::exp(x.data<float>()[i] * w.data<float>()[i]);
    if (std::fabs(t.data<float>()[i] - expected) > 1e-6f * expected) ++wrong;
  }
  return wrong;
}

// ORC reports errors it has no caller for (work still in flight when a JITDylib or the session is
// removed) as "JIT session error: ..." on stderr; the cycles must produce none.
class JitCyclesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    runtime::set_num_threads(4);
    ::testing::internal::CaptureStderr();
  }
  void TearDown() override {
    std::string errors = ::testing::internal::GetCapturedStderr();
    EXPECT_EQ(errors.find("JIT session error"), std::string::npos) << errors;
    runtime::set_num_threads(0);
  }
};

TEST_F(JitCyclesTest, FiftyBuildRunDestroyCycles) {
  runtime::NDArray x = input_array(1, kCycleSize), w = weight_array(kCycleSize);
  for (int cycle = 0; cycle < 50; ++cycle) {
    ASSERT_EQ(build_run_destroy("exp_scale", x, w), 0) << "cycle " << cycle;
  }
}

TEST_F(JitCyclesTest, TwoThreadsCycleAtOnce) {
  runtime::NDArray w = weight_array(kCycleSize);
  std::vector<int> wrong(2, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&, t] {
      runtime::NDArray x = input_array(t, kCycleSize);
      for (int cycle = 0; cycle < 25; ++cycle)
        wrong[t] += build_run_destroy("exp_scale_" + std::to_string(t), x, w);
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong, std::vector<int>(2, 0));
}

// A two-kernel model over the executor: X (input) -> exp_scale -> T (a planned buffer) ->
// half_plus_weight -> Y (output); W is a weight both kernels read.
runtime::Model jit_model(const std::string& suffix = "") {
  runtime::Module mod =
      build({exp_scale("exp_scale" + suffix), half_plus_weight("half_plus_weight" + suffix)},
            host_target());
  runtime::ExecutorPlan plan;
  plan.buffer_bytes = {kSize * 4};
  auto entry = [](int buffer, const std::string& param) {
    return runtime::StorageEntry{{kSize}, DataType::f32(), buffer, param};
  };
  plan.storage = {entry(-1, ""), entry(-1, "w"), entry(0, ""), entry(-1, "")};
  plan.kernels = {{"exp_scale" + suffix, {0, 1, 2}, "", 0},
                  {"half_plus_weight" + suffix, {2, 1, 3}, "", 0}};
  plan.inputs = {{"x", 0}};
  plan.outputs = {{"y", 3}};
  return runtime::Model(mod, plan, {{"w", weight_array()}});
}

runtime::NDArray run_once(runtime::Model& m, const runtime::NDArray& x) {
  m.set_input("x", x);
  m.run();
  return m.get_output("y").copy();
}

// The single-threaded outputs for inputs 0 .. n-1, checked against std::exp.
std::vector<runtime::NDArray> serial_outputs(runtime::Model& m, int n) {
  std::vector<runtime::NDArray> out;
  runtime::NDArray w = weight_array();
  for (int s = 0; s < n; ++s) {
    runtime::NDArray x = input_array(s);
    out.push_back(run_once(m, x));
    for (int64_t i = 0; i < kSize; i += 511) {
      float expected =
          std::exp(x.data<float>()[i] * w.data<float>()[i]) * 0.5f + w.data<float>()[i];
      EXPECT_NEAR(out.back().data<float>()[i], expected, 1e-5f * expected)
          << "input " << s << " element " << i;
    }
  }
  return out;
}

TEST(JitModelThreadsTest, ThreadsRunTheirOwnCopiesAndMatchTheSerialRunExactly) {
  runtime::set_num_threads(4);
  runtime::Model model = jit_model();
  const int kThreads = 4, kRuns = 30;
  std::vector<runtime::NDArray> expected = serial_outputs(model, kThreads);
  std::vector<int> mismatches(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    // Copied here, before any thread runs: the copy shares the code and the weight.
    threads.emplace_back([&, t, mine = runtime::Model(model)]() mutable {
      runtime::NDArray x = input_array(t);
      for (int r = 0; r < kRuns; ++r) {
        if (!same_values(run_once(mine, x), expected[t])) ++mismatches[t];
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(mismatches, std::vector<int>(kThreads, 0));
  runtime::set_num_threads(0);
}

TEST(JitModelThreadsTest, ModelsBuiltInSeveralThreadsRunConcurrently) {
  runtime::set_num_threads(3);
  std::vector<runtime::NDArray> expected;
  {
    runtime::Model reference = jit_model();
    expected = serial_outputs(reference, 3);
  }
  std::vector<int> mismatches(3, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 4; ++round) {
        runtime::Model m = jit_model("_" + std::to_string(t));
        runtime::NDArray x = input_array(t);
        for (int r = 0; r < 5; ++r) {
          if (!same_values(run_once(m, x), expected[t])) ++mismatches[t];
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(mismatches, std::vector<int>(3, 0));
  runtime::set_num_threads(0);
}

// 16 pool threads on a machine with fewer cores: the same results, and no hang.
TEST(JitModelThreadsTest, OversubscribedPoolGivesTheSameResults) {
  runtime::set_num_threads(1);
  runtime::Model model = jit_model();
  std::vector<runtime::NDArray> expected = serial_outputs(model, 2);
  runtime::set_num_threads(16);
  std::vector<std::thread> threads;
  std::vector<int> mismatches(2, 0);
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&, t, mine = runtime::Model(model)]() mutable {
      for (int r = 0; r < 20; ++r) {
        if (!same_values(run_once(mine, input_array(t)), expected[t])) ++mismatches[t];
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(mismatches, std::vector<int>(2, 0));
  runtime::set_num_threads(0);
}

}  // namespace
}  // namespace tessel
