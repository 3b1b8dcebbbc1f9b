// Applying tuning records at compile time: each tunable kernel takes the lowest-cost successful
// record of its workload and target that its template takes; the others use the fallback.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>

#include "../passes/graph_builder.h"
#include "autotune/records.h"
#include "autotune/task.h"
#include "driver/compile.h"
#include "passes/lower_to_te.h"
#include "passes/pipeline.h"
#include "reference/reference.h"
#include "tests/common/expect_error.h"
#include "tests/driver/reference_check.h"

namespace tessel {
namespace {
using passes::testing::Builder;
using passes::testing::ints;
using passes::testing::random_tensor;
using tessel::testing::expect_error;

// Conv(3x3, 4 -> 8) + Relu, and a second, distinct Conv(1x1) that no record covers.
graph::Graph model() {
  Builder b;
  graph::ValueId x = b.input("x", {1, 4, 10, 12});
  graph::ValueId h =
      b.op("Conv", {x, b.constant("w", random_tensor({8, 4, 3, 3}, 1))},
           {{"kernel_shape", ints({3, 3})}, {"pads", ints({1, 1, 1, 1})}}, "conv3x3");
  h = b.op("Relu", {h});
  h = b.op("Conv", {h, b.constant("w1", random_tensor({6, 8, 1, 1}, 2))},
           {{"kernel_shape", ints({1, 1})}}, "conv1x1");
  return b.finish({h});
}

std::string conv3x3_workload() {
  graph::Graph g = model();
  passes::GraphPipelineResult plan = passes::run_graph_pipeline(g);
  return autotune::extract_tasks(g, plan.groups).at(0).workload;
}

autotune::TuningRecord record(const std::string& target, const std::string& config, double cost,
                              autotune::MeasureError error = autotune::MeasureError::kNone) {
  autotune::TuningRecord r;
  r.target = target;
  r.workload = conv3x3_workload();
  r.config = config;
  if (error == autotune::MeasureError::kNone) r.costs = {cost, cost};
  r.error = error;
  return r;
}

class RecordsFile {
 public:
  RecordsFile()
      : path_(
            (std::filesystem::temp_directory_path() / fmt::format("tessel-apply-{}.json", getpid()))
                .string()) {}
  ~RecordsFile() { std::filesystem::remove(path_); }
  void write(const std::vector<autotune::TuningRecord>& records,
             const std::string& extra_line = "") {
    std::ofstream out(path_);
    for (const auto& r : records) out << autotune::record_to_line(r) << "\n";
    out << extra_line;
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

void expect_matches_reference(const graph::Graph& g, CompiledModel& m) {
  testing::expect_matches_reference(g, m, "x", {1, 4, 10, 12}, 1e-4);
}

const char* kSlow =
    R"({"tile_row":[4,2],"tile_col":[3,4],"tile_y":[10,1],"reorder_k":[0,1,2],"unroll_k":0,"parallel":0})";
// Parallel, and a tile of 4 x 1 x 12 columns: within the template's accumulator budget with AVX2's
// 16 registers too (kSlow and kFailed are serial, which the template refuses for this conv).
const char* kBest =
    R"({"tile_row":[2,4],"tile_col":[1,12],"tile_y":[10,1],"reorder_k":[1,2,0],"unroll_k":1,"parallel":1})";
const char* kFailed =
    R"({"tile_row":[8,1],"tile_col":[3,4],"tile_y":[10,1],"reorder_k":[2,1,0],"unroll_k":0,"parallel":0})";

TEST(TuningRecordsTest, TheLowestCostSuccessfulRecordIsApplied) {
  graph::Graph g = model();
  CompileOptions opt;
  std::string target = Target::parse(opt.target).str();
  RecordsFile file;
  file.write({record(target, kSlow, 2e-4), record(target, kBest, 1e-4),
              record(target, kFailed, 0, autotune::MeasureError::kWrongAnswer),
              record("llvm -mcpu=other", kFailed, 1e-6)},  // another target: ignored
             "{not json\n");
  opt.tuning_records = file.path();
  CompiledModel m = compile_graph(g, opt);
  const TuningSummary& t = m.tuning();
  EXPECT_EQ(t.tuned, 1);
  EXPECT_EQ(t.kept_fallback, 0);
  EXPECT_EQ(t.untuned, 1);
  ASSERT_EQ(t.kernels.size(), 2u);
  EXPECT_TRUE(t.kernels[0].tuned);
  EXPECT_EQ(t.kernels[0].config, kBest);
  EXPECT_FALSE(t.kernels[1].tuned);
  ASSERT_EQ(t.warnings.size(), 1u);  // the corrupt line, named by its file and line number
  EXPECT_NE(t.warnings[0].find(file.path() + ":5"), std::string::npos) << t.warnings[0];
  expect_matches_reference(g, m);
}

TEST(TuningRecordsTest, ARecordThatDoesNotFitTheTemplateFallsBackWithAWarning) {
  graph::Graph g = model();
  CompileOptions opt;
  std::string target = Target::parse(opt.target).str();
  RecordsFile file;
  file.write({record(target, R"({"tile_row":[1,8],"tiles":[2]})", 1e-4)});
  opt.tuning_records = file.path();
  CompiledModel m = compile_graph(g, opt);
  EXPECT_EQ(m.tuning().tuned, 0);
  EXPECT_EQ(m.tuning().untuned, 2);
  ASSERT_EQ(m.tuning().warnings.size(), 1u);
  EXPECT_NE(m.tuning().warnings[0].find("conv3x3"), std::string::npos) << m.tuning().warnings[0];
  EXPECT_NE(m.tuning().warnings[0].find("fallback"), std::string::npos) << m.tuning().warnings[0];
  expect_matches_reference(g, m);
}

// kSlow is serial, which the conv template refuses since (its work pays for a parallel launch);
// records measured before hold such configs. Compile takes the fastest record that the template
// takes, and says why it passed over the faster one.
TEST(TuningRecordsTest, ARecordTheTemplateNowRefusesIsPassedOverWithAWarning) {
  graph::Graph g = model();
  CompileOptions opt;
  std::string target = Target::parse(opt.target).str();
  RecordsFile file;
  file.write({record(target, kSlow, 0.5e-4), record(target, kBest, 1e-4)});
  opt.tuning_records = file.path();
  CompiledModel m = compile_graph(g, opt);
  EXPECT_EQ(m.tuning().tuned, 1);
  EXPECT_EQ(m.tuning().kernels.at(0).config, kBest);
  ASSERT_EQ(m.tuning().warnings.size(), 1u);
  const std::string& w = m.tuning().warnings[0];
  for (const char* part : {"conv3x3", "refuses", "serial", "best record that the template takes"})
    EXPECT_NE(w.find(part), std::string::npos) << part << " in: " << w;
  expect_matches_reference(g, m);

  // With no other record: the fallback.
  file.write({record(target, kSlow, 0.5e-4)});
  CompiledModel alone = compile_graph(g, opt);
  EXPECT_EQ(alone.tuning().tuned, 0);
  ASSERT_EQ(alone.tuning().warnings.size(), 1u);
  EXPECT_NE(alone.tuning().warnings[0].find("using the fallback"), std::string::npos)
      << alone.tuning().warnings[0];
  expect_matches_reference(g, alone);

  // With only the fallback's record besides: the untuned kernel, kept.
  autotune::TuningRecord fallback =
      record(target, compile_graph(g).tuning().kernels.at(0).config, 2e-4);
  fallback.fallback = true;
  file.write({fallback, record(target, kSlow, 0.5e-4)});
  CompiledModel kept = compile_graph(g, opt);
  EXPECT_EQ(kept.tuning().kept_fallback, 1);
  ASSERT_EQ(kept.tuning().warnings.size(), 1u);
  EXPECT_NE(kept.tuning().warnings[0].find("keeping the untuned kernel"), std::string::npos)
      << kept.tuning().warnings[0];
}

TEST(TuningRecordsTest, WithoutRecordsEveryKernelUsesTheFallback) {
  graph::Graph g = model();
  CompiledModel m = compile_graph(g);
  EXPECT_EQ(m.tuning().tuned, 0);
  EXPECT_EQ(m.tuning().kept_fallback, 0);
  EXPECT_EQ(m.tuning().untuned, 2);
  EXPECT_TRUE(m.tuning().warnings.empty());
}

// Records whose best is the fallback's own config: the kernel counts as tuned, and as one that
// kept the fallback, so the summary does not pass the fallback off as a tuned config.
TEST(TuningRecordsTest, ARecordOfTheFallbackCountsAsKeptFallback) {
  graph::Graph g = model();
  std::string fallback_config = compile_graph(g).tuning().kernels.at(0).config;
  CompileOptions opt;
  std::string target = Target::parse(opt.target).str();
  autotune::TuningRecord fallback = record(target, fallback_config, 2e-4);
  fallback.fallback = true;
  RecordsFile file;
  file.write({fallback, record(target, kBest, 1.95e-4)});  // 2.5% faster: not enough
  opt.tuning_records = file.path();
  CompiledModel m = compile_graph(g, opt);
  EXPECT_EQ(m.tuning().tuned, 1);
  EXPECT_EQ(m.tuning().kept_fallback, 1);
  EXPECT_EQ(m.tuning().kernels.at(0).config, fallback_config);
  expect_matches_reference(g, m);
}

// A fallback record written when the fallback was another config (an older Tessel's hand
// policy): the kernel gets today's fallback, the untuned kernel the record stands for.
TEST(TuningRecordsTest, AFallbackRecordAppliesTodaysFallback) {
  graph::Graph g = model();
  std::string fallback_config = compile_graph(g).tuning().kernels.at(0).config;
  ASSERT_NE(fallback_config, kSlow);
  CompileOptions opt;
  autotune::TuningRecord old_fallback = record(Target::parse(opt.target).str(), kSlow, 2e-4);
  old_fallback.fallback = true;
  RecordsFile file;
  file.write({old_fallback});
  opt.tuning_records = file.path();
  CompiledModel m = compile_graph(g, opt);
  EXPECT_EQ(m.tuning().kept_fallback, 1);
  EXPECT_EQ(m.tuning().kernels.at(0).config, fallback_config);
  expect_matches_reference(g, m);
}

TEST(TuningRecordsTest, AMissingRecordsFileIsAnError) {
  CompileOptions opt;
  opt.tuning_records = "/nonexistent/records.json";
  expect_error([&] { compile_graph(model(), opt); }, {"/nonexistent/records.json"});
}

// Conv(3x3, 2 -> 32) over rows 32 wide + Relu: every target's rule keeps it direct (a reduction of
// 18), but it can be packed.
graph::Graph packable_model() {
  Builder b;
  graph::ValueId x = b.input("x", {1, 2, 4, 32});
  graph::ValueId w = b.constant("w", random_tensor({32, 2, 3, 3}, 1));
  return b.finish({b.op("Relu", {b.op("Conv", {x, w}, {{"pads", ints({1, 1, 1, 1})}}, "conv")})});
}

// A record of the conv in one layout: its workload, and its template's fallback config.
autotune::TuningRecord layout_record(const std::string& target, bool packed, double cost) {
  graph::Graph g = packable_model();
  passes::GraphPipelineOptions opt;
  opt.conv_layout = [packed](const graph::Graph&, const graph::Node&, bool) { return packed; };
  std::vector<passes::FusedGroup> groups = passes::run_graph_pipeline(g, opt).groups;
  const graph::Node& conv = g.nodes[groups[0].master];
  EXPECT_EQ(conv.op, packed ? graph::OpKind::ConvNCHWc : graph::OpKind::Conv);
  CpuModel cpu = CpuModel::of(Target::parse(target));
  autotune::TuningRecord r;
  r.target = target;
  r.workload = autotune::workload_key(g, conv);
  r.config = passes::lower_to_te(g, groups[0], 0, cpu).space->fallback().to_json();
  r.costs = {cost, cost};
  return r;
}

// With records of both layouts, the conv takes the one measured faster; with one, the rule decides,
// and so it does when the model check pinned either form to its fallback.
TEST(TuningRecordsTest, RecordsOfBothLayoutsChooseTheFasterOne) {
  struct Case {
    std::vector<std::pair<bool, double>> records;  // packed?, cost
    std::string op;
    int decided, tuned;
    std::optional<bool> pin = std::nullopt;  // pin the packed (true) or direct (false) form
  };
  const std::vector<Case> cases = {
      {{{false, 2e-4}, {true, 1e-4}}, "ConvNCHWc", 1, 1},
      {{{false, 1e-4}, {true, 2e-4}}, "Conv", 1, 1},
      {{{false, 2e-4}, {true, 1.95e-4}},
       "Conv",
       1,
       1},                             // 2.5% faster: not enough to overrule the rule
      {{{true, 1e-6}}, "Conv", 0, 0},  // only the packed form was measured: no comparison
      {{{false, 2e-4}, {true, 1e-4}}, "Conv", 0, 1, true},
      {{{false, 2e-4}, {true, 1e-4}}, "Conv", 0, 1, false},
  };
  for (const Case& c : cases) {
    graph::Graph g = packable_model();
    CompileOptions opt;
    std::string target = Target::parse(opt.target).str();
    std::vector<autotune::TuningRecord> records;
    for (auto [packed, cost] : c.records) records.push_back(layout_record(target, packed, cost));
    if (c.pin) {
      autotune::TuningRecord& form = records[*c.pin ? 1 : 0];
      form.fallback = true;
      records.push_back(autotune::verdict_record(form, {.kind = autotune::VerdictKind::kPin}));
    }
    RecordsFile file;
    file.write(records);
    opt.tuning_records = file.path();
    CompiledModel m = compile_graph(g, opt);
    EXPECT_NE(m.fusion_summary().find("[" + c.op + "+Relu]"), std::string::npos)
        << m.fusion_summary();
    EXPECT_EQ(m.tuning().layouts_from_records, c.decided);
    EXPECT_EQ(m.tuning().tuned, c.tuned);  // the chosen form's record applies
    EXPECT_TRUE(m.tuning().warnings.empty());
    graph::TensorData x = random_tensor({1, 2, 4, 32}, 3);
    m.set_input("x", to_ndarray(x));
    m.run();
    graph::TensorData want = reference::run(g, {{"x", x}})[0];
    graph::TensorData got = to_tensor_data(m.get_output(0));
    for (int64_t i = 0; i < got.numel(); ++i)
      ASSERT_NEAR(got.get_double(i), want.get_double(i), 1e-3) << i;
  }
}

}  // namespace
}  // namespace tessel
