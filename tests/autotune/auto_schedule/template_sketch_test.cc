// The template sketch: a group whose op has a schedule template gets one more sketch, whose
// programs are configs of the template; a program's schedule is the template's for its config,
// exactly (replayed from the template's trace onto the task's computes), valid under the space's
// constraint, and its mutations change one knob. A group without a template has none.
#include <gtest/gtest.h>

#include <random>
#include <set>

#include "autotune/auto_schedule/program.h"
#include "autotune/auto_schedule/search_task.h"
#include "autotune/kernel_data.h"
#include "autotune/measure.h"
#include "codegen/build.h"
#include "ir/printer.h"
#include "passes/pipeline.h"
#include "te/lower.h"
#include "tests/autotune/auto_schedule/check_steps.h"
#include "tests/passes/graph_builder.h"

namespace tessel::autotune {
namespace {

using passes::testing::Builder;
using passes::testing::ints;
using passes::testing::random_tensor;

// A 3x3 conv over 24 channels (a packed template with several knobs), then a Softmax (no
// template).
graph::Graph model() {
  Builder b;
  graph::ValueId x = b.input("x", {1, 24, 10, 10});
  graph::ValueId h = b.op("Conv", {x, b.constant("w", random_tensor({32, 24, 3, 3}, 1))},
                          {{"kernel_shape", ints({3, 3})}, {"pads", ints({1, 1, 1, 1})}}, "conv");
  h = b.op("Relu", {h});
  h = b.op("Flatten", {h}, {{"axis", int64_t{1}}});
  h = b.op("Softmax", {h}, {{"axis", int64_t{-1}}});
  return b.finish({h});
}

struct Fixture {
  graph::Graph g = model();
  std::vector<passes::FusedGroup> groups = passes::run_graph_pipeline(g).groups;
  std::vector<Task> tasks = extract_auto_tasks(g, groups);
  Target target = Target::parse("llvm -mcpu=native");
  CpuModel cpu = CpuModel::of(target);

  TaskComputation computation(const std::string& op) const {
    for (const Task& t : tasks) {
      if (t.op == op)
        return task_computation(g, groups.at(static_cast<size_t>(t.group)), t.group, cpu);
    }
    ADD_FAILURE() << "no " << op << " task";
    return task_computation(g, groups.at(0), 0, cpu);
  }
  // The conv group's loops under the template with `config` (stages named by position).
  std::string template_tir(const topi::ConfigEntity& config) const {
    const Task& t = tasks.front();
    passes::LoweredGroup lg = passes::lower_to_te(
        g, groups.at(static_cast<size_t>(t.group)), t.group, cpu,
        [&](const topi::ConfigSpace&) { return config; }, passes::StageNames::kByPosition);
    return to_string(te::lower(lg.schedule, lg.args, "f"));
  }
};

TEST(TemplateSketchTest, ATemplatedGroupHasTheTemplateAsItsLastSketch) {
  Fixture f;
  ASSERT_EQ(f.tasks.front().op, "ConvNCHWc");  // packed by the graph's layout pass
  TaskComputation conv = f.computation("ConvNCHWc");
  ASSERT_NE(conv.schedule_template, nullptr);
  std::vector<Sketch> sketches = task_sketches(conv);
  EXPECT_EQ(sketches.size(), generate_sketches(conv.dag).size() + 1);
  EXPECT_EQ(sketches.back().schedule_template, conv.schedule_template);
  EXPECT_NE(sketches.back().str(conv.dag).find("schedule template"), std::string::npos);
  for (size_t k = 0; k + 1 < sketches.size(); ++k)
    EXPECT_EQ(sketches[k].schedule_template, nullptr);

  TaskComputation softmax = f.computation("Softmax");
  EXPECT_EQ(softmax.schedule_template, nullptr);
  for (const Sketch& s : task_sketches(softmax)) EXPECT_EQ(s.schedule_template, nullptr);
}

TEST(TemplateSketchTest, AProgramIsTheTemplatesScheduleForItsConfig) {
  Fixture f;
  TaskComputation c = f.computation("ConvNCHWc");
  std::vector<Sketch> sketches = task_sketches(c);
  const size_t k = sketches.size() - 1;
  const topi::ConfigSpace& space = c.schedule_template->space();
  ASSERT_GT(space.size(), 16u);
  std::mt19937_64 rng(5);
  std::set<uint64_t> configs;
  for (int i = 0; i < 12; ++i) {
    Program p = sample_program(c.dag, sketches, k, rng);
    ASSERT_LT(p.config, space.size());
    EXPECT_EQ(space.invalid_reason(space.get(p.config)), "") << p.config;
    EXPECT_NE(p.config, space.fallback().index());  // measured as the baseline already
    configs.insert(p.config);
    te::Schedule s = apply(c.dag, sketches[k], p);
    EXPECT_EQ(to_string(te::lower(s, c.dag.args(), "f")), f.template_tir(space.get(p.config)))
        << p.str(c.dag);
  }
  EXPECT_GT(configs.size(), 4u);  // random configs, not the fallback again and again
}

TEST(TemplateSketchTest, AMutationRedrawsOneKnob) {
  Fixture f;
  TaskComputation c = f.computation("ConvNCHWc");
  std::vector<Sketch> sketches = task_sketches(c);
  const topi::ConfigSpace& space = c.schedule_template->space();
  std::mt19937_64 rng(7);
  Program p = sample_program(c.dag, sketches, sketches.size() - 1, rng);
  int changed = 0;
  for (int i = 0; i < 20; ++i) {
    Mutation kind;
    Program q = mutate(c.dag, sketches, p, {0, 0, 0.5, 0, 0.5}, rng, &kind);
    EXPECT_EQ(kind, Mutation::kTileSize);
    EXPECT_EQ(q.sketch, p.sketch);
    EXPECT_EQ(space.invalid_reason(space.get(q.config)), "");
    EXPECT_NE(q.config, space.fallback().index());
    std::vector<uint64_t> a = space.get(p.config).choices(), b = space.get(q.config).choices();
    int knobs = 0;
    for (size_t j = 0; j < a.size(); ++j) knobs += a[j] != b[j] ? 1 : 0;
    EXPECT_LE(knobs, 1) << p.config << " -> " << q.config;
    changed += knobs;
    p = q;
  }
  EXPECT_GT(changed, 10);
}

TEST(TemplateSketchTest, AProgramComputesTheRightNumbers) {
  Fixture f;
  const Task& t = f.tasks.front();
  const passes::FusedGroup& group = f.groups.at(static_cast<size_t>(t.group));
  TaskComputation c = task_computation(f.g, group, t.group, f.cpu);
  std::vector<Sketch> sketches = task_sketches(c);
  KernelData data = kernel_data(f.g, group, c.group, 1);
  std::mt19937_64 rng(11);
  for (int i = 0; i < 3; ++i) {
    Program p = sample_program(c.dag, sketches, sketches.size() - 1, rng);
    MeasureResult m =
        testing::check_steps(c, apply(c.dag, sketches.back(), p).trace().str(), data, f.target);
    EXPECT_EQ(m.error, MeasureError::kNone) << p.str(c.dag) << "\n" << m.message;
  }
}

}  // namespace
}  // namespace tessel::autotune
