// Every fused kernel of the bundled models is an auto-scheduler task whose random programs (of
// every sketch, the template sketch included) and their mutations make valid schedules that lower
// to loops (a ScheduleError from a rule is a bug); a sample of each task's programs is built and
// checked against the reference executor.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "autotune/auto_schedule/program.h"
#include "autotune/auto_schedule/search_task.h"
#include "autotune/kernel_data.h"
#include "autotune/measure.h"
#include "codegen/build.h"
#include "driver/compile.h"
#include "te/lower.h"
#include "te/schedule_to_tir.h"
#include "tests/autotune/auto_schedule/check_steps.h"

namespace tessel::autotune {
namespace {

class ModelTasksTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ModelTasksTest, EveryKernelIsATaskWithValidPrograms) {
  std::string path = std::string(TESSEL_MODELS_DIR) + "/" + GetParam() + ".onnx";
  GraphPlan plan = plan_graph(path);
  std::vector<Task> tasks = extract_auto_tasks(plan.graph, plan.groups);
  ASSERT_FALSE(tasks.empty());
  int groups_with_kernels = 0;
  for (const passes::FusedGroup& group : plan.groups)
    groups_with_kernels += passes::computes_nothing(plan.graph, group) ? 0 : 1;
  int weights = 0;
  for (const Task& t : tasks) weights += t.weight;
  EXPECT_EQ(weights, groups_with_kernels);

  Target target = Target::parse("llvm -mcpu=native");
  std::mt19937_64 rng(3);
  for (const Task& t : tasks) {
    const passes::FusedGroup& group = plan.groups.at(static_cast<size_t>(t.group));
    TaskComputation c = task_computation(plan.graph, group, t.group, CpuModel::of(target));
    std::vector<Sketch> sketches = task_sketches(c);
    ASSERT_FALSE(sketches.empty()) << t.workload;
    KernelData data = kernel_data(plan.graph, group, c.group, 1);
    for (size_t k = 0; k < sketches.size(); ++k) {
      Program p = sample_program(c.dag, sketches, k, rng);
      for (int n = 0; n < 6; ++n) {
        std::string what = t.workload + "\n" + p.str(c.dag);
        te::Schedule s;
        ASSERT_NO_THROW(s = apply(c.dag, sketches[k], p)) << what;
        ASSERT_NO_THROW(te::schedule_to_tir(s, c.dag.args(), "f")) << what;
        p = mutate(c.dag, sketches, p, {0.5, 0.1, 0.1, 0.1, 0.2}, rng);
      }
      // The last mutant of each sketch, built and checked in a child like a search candidate.
      MeasureResult m =
          testing::check_steps(c, apply(c.dag, sketches[k], p).trace().str(), data, target);
      EXPECT_EQ(m.error, MeasureError::kNone) << t.workload << "\n"
                                              << p.str(c.dag) << "\n"
                                              << m.message;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(BundledModels, ModelTasksTest,
                         ::testing::Values("resnet_mini", "mobilenet_mini", "transformer_block",
                                           "lstm_classifier"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace tessel::autotune
