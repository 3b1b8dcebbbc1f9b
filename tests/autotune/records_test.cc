// Tuning records: the JSON line format, appending across runs, tolerant loading, and the database.
#include "autotune/records.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdio>
#include <fstream>
#include <limits>
#include <sstream>

#include "tests/common/expect_error.h"
#include "topi/config_space.h"

namespace tessel::autotune {
namespace {

using tessel::testing::expect_error;
using topi::ConfigEntity;
using topi::ConfigSpace;

const char* kTarget = "llvm -mcpu=skylake";
const char* kDense = "dense|float32[128,256]|float32[512,256]";

TuningRecord make_record(uint64_t index, std::vector<double> costs,
                         MeasureError error = MeasureError::kNone,
                         const std::string& workload = kDense,
                         const std::string& target = kTarget) {
  TuningRecord r;
  r.target = target;
  r.workload = workload;
  r.config = R"({"tile":[4,32],"unroll":1})";
  r.config_index = index;
  r.costs = std::move(costs);
  r.error = error;
  r.error_msg = error == MeasureError::kNone ? "" : "it failed";
  r.timestamp = 1700000000 + static_cast<int64_t>(index);
  return r;
}

// A record whose config differs for each index (the database tells configs apart by their JSON).
TuningRecord config_record(uint64_t index, std::vector<double> costs,
                           MeasureError error = MeasureError::kNone,
                           const std::string& workload = kDense,
                           const std::string& target = kTarget) {
  TuningRecord r = make_record(index, std::move(costs), error, workload, target);
  r.config = fmt::format(R"({{"tile":[4,{}],"unroll":1}})", index);
  return r;
}

// The untuned kernel's measurement: config 0, flagged as the fallback.
TuningRecord fallback_record(std::vector<double> costs) {
  TuningRecord r = config_record(0, std::move(costs));
  r.fallback = true;
  return r;
}

void expect_same(const TuningRecord& a, const TuningRecord& b) {
  EXPECT_EQ(a.target, b.target);
  EXPECT_EQ(a.workload, b.workload);
  EXPECT_EQ(a.config, b.config);
  EXPECT_EQ(a.config_index, b.config_index);
  EXPECT_EQ(a.costs, b.costs);
  EXPECT_EQ(a.error, b.error);
  EXPECT_EQ(a.error_msg, b.error_msg);
  EXPECT_EQ(a.timestamp, b.timestamp);
  EXPECT_EQ(a.auto_schedule, b.auto_schedule);
  EXPECT_EQ(a.steps, b.steps);
  EXPECT_EQ(a.fallback_costs, b.fallback_costs);
}

// A fresh path in the test temp dir (any old file removed).
std::string temp_path(const std::string& name) {
  std::string path = ::testing::TempDir() + "tessel_records_" + name + ".json";
  std::remove(path.c_str());
  return path;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

TEST(Records, LineFormat) {
  TuningRecord r = make_record(37, {1.25e-4, 1.5e-4});
  EXPECT_EQ(
      record_to_line(r),
      R"({"v":1,"target":"llvm -mcpu=skylake","workload":"dense|float32[128,256]|float32[512,256]",)"
      R"("config":{"tile":[4,32],"unroll":1},"config_index":37,"costs":[0.000125,0.00015],)"
      R"("error":"none","error_msg":"","timestamp":1700000037})");
}

TEST(Records, LineRoundTripForEveryErrorKind) {
  for (MeasureError e :
       {MeasureError::kNone, MeasureError::kBuildError, MeasureError::kRuntimeError,
        MeasureError::kTimeout, MeasureError::kWrongAnswer}) {
    // Costs that need every digit to round-trip.
    TuningRecord r = make_record(
        5, e == MeasureError::kNone ? std::vector<double>{1.0 / 3, 2e-7} : std::vector<double>{},
        e);
    r.error_msg = "line 1\n\"quoted\"";
    SCOPED_TRACE(measure_error_name(e));
    expect_same(record_from_line(record_to_line(r)), r);
  }
}

TEST(Records, ConfigRoundTripsThroughAConfigSpace) {
  ConfigSpace space;
  space.define_split("tile", 64, {.policy = "power2"});
  space.define_annotate("ann", 2, "try_unroll_vec");
  ConfigEntity e = space.get(space.size() - 1);
  TuningRecord r = make_record(e.index(), {1e-3});
  r.config = e.to_json();
  TuningRecord back = record_from_line(record_to_line(r));
  EXPECT_EQ(ConfigEntity::from_json(space, back.config).index(), back.config_index);
}

TEST(Records, RejectedLines) {
  std::string good = record_to_line(make_record(1, {1e-3}));
  auto with = [&](const std::string& from, const std::string& to) {
    std::string line = good;
    line.replace(line.find(from), from.size(), to);
    return line;
  };
  expect_error([&] { record_from_line(with(R"("costs":[0.001])", R"("costs":[])")); },
               {"without costs"});
  expect_error([&] { record_from_line(with(R"("costs":[0.001])", R"("costs":[-1])")); },
               {"-1", "seconds"});
  expect_error([&] { record_from_line(with(R"("costs":[0.001])", R"("costs":[0.001,0])")); },
               {"cost 0", "positive"});
  expect_error([&] { record_from_line(with(R"("costs":[0.001])", R"("costs":[1e999])")); },
               {"invalid JSON", "1e999"});
  expect_error([&] { record_from_line(with(R"("costs":[0.001])", R"("costs":["1"])")); },
               {"\"1\"", "positive"});
  expect_error([&] { record_from_line(with(R"("timestamp":1700000001)", R"("timestamp":-5)")); },
               {"timestamp -5"});
  expect_error([&] { record_from_line(with(R"("timestamp":1700000001)", R"("timestamp":1.5)")); },
               {"timestamp"});
  expect_error([&] { record_from_line(with(R"("error":"none")", R"("error":"oops")")); }, {"oops"});
  expect_error([&] { record_from_line(with(R"("config_index":1)", R"("config_index":-1)")); },
               {"config_index"});
  expect_error([&] { record_from_line(with(R"("target":"llvm -mcpu=skylake",)", "")); },
               {"\"target\""});
  expect_error(
      [&] { record_from_line(with(R"("config":{"tile":[4,32],"unroll":1})", R"("config":[4])")); },
      {"\"config\"", "object"});
  expect_error([&] { record_from_line(with(R"("v":1)", R"("v":4)")); }, {"version 4"});
  // Version 2 lines say their kind, and know the verdicts of version 1 as no measurement error.
  expect_error([&] { record_from_line(with(R"("v":1)", R"("v":2)")); }, {"\"kind\""});
  expect_error([&] { record_from_line(with(R"("v":1)", R"("v":2,"kind":"verdict")")); },
               {"unknown record kind \"verdict\""});
  std::string v2 = with(R"("v":1)", R"("v":2,"kind":"measurement")");
  expect_same(record_from_line(v2), make_record(1, {1e-3}));
  expect_error(
      [&] { record_from_line(v2.replace(v2.find(R"("none")"), 6, R"("slower_in_model")")); },
      {"unknown error kind \"slower_in_model\""});
  expect_error([&] { record_from_line(good.substr(0, 40)); }, {"invalid JSON"});
}

TEST(Records, WriterAppendsAcrossRuns) {
  std::string path = temp_path("append");
  {
    RecordWriter w(path);
    w.write(make_record(0, {2e-3}));
    w.write(make_record(1, {}, MeasureError::kTimeout));
    // Flushed as it goes: a run killed now has lost nothing.
    std::vector<std::string> warnings;
    EXPECT_EQ(load_records(path, &warnings).size(), 2u);
    EXPECT_TRUE(warnings.empty());
  }
  {
    // A resumed run opens the same file: old lines stay, new ones follow.
    RecordWriter w(path);
    w.write(make_record(2, {1e-3}));
  }
  std::vector<std::string> warnings;
  std::vector<TuningRecord> records = load_records(path, &warnings);
  EXPECT_TRUE(warnings.empty());
  ASSERT_EQ(records.size(), 3u);
  for (uint64_t i = 0; i < 3; ++i) EXPECT_EQ(records[i].config_index, i);
  expect_same(records[1], make_record(1, {}, MeasureError::kTimeout));
  Database db(records);
  EXPECT_EQ(db.configs_measured(kTarget, kDense), (std::set<uint64_t>{0, 1, 2}));
  EXPECT_EQ(db.count(kTarget, kDense), 3u);
}

TEST(Records, SkipsCorruptForeignAndTruncatedLinesWithWarnings) {
  std::string path = temp_path("corrupt");
  std::string good = record_to_line(make_record(7, {1e-3}));
  std::string wrong_field = good;
  wrong_field.replace(wrong_field.find(R"("error":"none")"), 14, R"("error":"boom")");
  write_file(path, good + "\n" +                           // 1
                       "not json at all\n" +               // 2
                       "\n" +                              // 3: blank, no warning
                       R"({"v":4,"target":"x"})" + "\n" +  // 4: a newer format
                       R"({"input":["llvm","dense",[],{}],"version":0.2})" +
                       "\n" +                             // 5: TVM's format
                       wrong_field + "\n" +               // 6
                       "[1, 2]\n" +                       // 7
                       good + "\n" +                      // 8
                       good.substr(0, good.size() / 2));  // 9: cut off by a kill
  std::vector<std::string> warnings;
  std::vector<TuningRecord> records = load_records(path, &warnings);
  ASSERT_EQ(records.size(), 2u);
  expect_same(records[0], make_record(7, {1e-3}));
  ASSERT_EQ(warnings.size(), 6u);
  auto expect_warning = [&](size_t i, int line, const std::string& what) {
    std::string prefix = path + ":" + std::to_string(line) + ": skipped ";
    EXPECT_EQ(warnings[i].rfind(prefix, 0), 0u) << warnings[i];
    EXPECT_NE(warnings[i].find(what), std::string::npos) << warnings[i];
  };
  expect_warning(0, 2, "corrupt record: invalid JSON");
  expect_warning(1, 4, "foreign record: format version 4");
  expect_warning(2, 5, "foreign record: no \"v\" field");
  expect_warning(3, 6, "corrupt record: unknown error kind \"boom\"");
  expect_warning(4, 7, "corrupt record: not a JSON object");
  expect_warning(5, 9, "truncated last line");

  // Warnings are optional.
  EXPECT_EQ(load_records(path, nullptr).size(), 2u);
}

TEST(Records, WriterEndsATruncatedLineBeforeAppending) {
  std::string path = temp_path("truncated");
  std::string good = record_to_line(make_record(0, {1e-3}));
  write_file(path, good + "\n" + good.substr(0, 30));
  {
    RecordWriter w(path);
    w.write(make_record(1, {2e-3}));
  }
  EXPECT_EQ(read_file(path), good + "\n" + good.substr(0, 30) + "\n" +
                                 record_to_line(make_record(1, {2e-3})) + "\n");
  std::vector<std::string> warnings;
  std::vector<TuningRecord> records = load_records(path, &warnings);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[1].config_index, 1u);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find(":2: skipped a corrupt record"), std::string::npos) << warnings[0];
}

// A zero cost is an infinite speed, which made a resumed XGBoost run fail ("Label contains NaN"):
// the line is skipped as corrupt, with the file and line, like any other corrupt record.
TEST(Records, AZeroCostIsACorruptRecord) {
  std::string path = temp_path("zero_cost");
  std::string good = record_to_line(make_record(1, {1e-3}));
  std::string zero = good;
  zero.replace(zero.find(R"("costs":[0.001])"), 15, R"("costs":[0])");
  write_file(path, good + "\n" + zero + "\n");
  std::vector<std::string> warnings;
  ASSERT_EQ(load_records(path, &warnings).size(), 1u);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0],
            path + ":2: skipped a corrupt record: cost 0 is not a positive number of seconds");
}

// A line past 1 MiB is not a record Tessel wrote: skipped without holding it, and reading goes on.
TEST(Records, AnOverlongLineIsSkipped) {
  std::string path = temp_path("overlong");
  std::string good = record_to_line(make_record(1, {1e-3}));
  write_file(path, std::string(size_t{3} << 20, '[') + "\n" + good + "\n");
  std::vector<std::string> warnings;
  std::vector<TuningRecord> records = load_records(path, &warnings);
  ASSERT_EQ(records.size(), 1u);
  expect_same(records[0], make_record(1, {1e-3}));
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0],
            path + ":1: skipped a line of more than 1048576 bytes (not a tuning record)");
}

// /dev/zero would be read forever, a FIFO would block the open: only regular files are records.
TEST(Records, OnlyRegularFilesAreRead) {
  expect_error([] { load_records("/dev/zero", nullptr); }, {"'/dev/zero' is not a regular file"});
  expect_error([] { load_records(::testing::TempDir(), nullptr); }, {"is not a regular file"});
  std::string fifo = temp_path("fifo");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  expect_error([&] { load_records(fifo, nullptr); }, {fifo, "not a regular file"});
  expect_error([&] { RecordWriter w(fifo); }, {fifo, "not a regular file"});
  std::remove(fifo.c_str());
}

TEST(Records, MissingFileIsAnError) {
  std::string path = temp_path("missing");
  expect_error([&] { load_records(path, nullptr); }, {path});
  expect_error([&] { RecordWriter w(::testing::TempDir() + "no_such_dir/records.json"); },
               {"no_such_dir/records.json"});
}

TEST(Database, BestIsTheLowestMedianCostIgnoringErrors) {
  Database db;
  db.add(config_record(0, {3e-3, 3e-3}));
  db.add(config_record(1, {1e-3, 5e-3}));  // the lowest single cost, but a median of 3e-3
  db.add(config_record(2, {2.5e-3, 2.5e-3}));
  db.add(config_record(3, {1e-4}, MeasureError::kWrongAnswer));  // fast and wrong
  db.add(config_record(4, {}, MeasureError::kTimeout));
  db.add(config_record(5, {2.5e-3}));  // ties with 2: the first one stays
  std::optional<TuningRecord> best = db.best(kTarget, kDense);
  ASSERT_TRUE(best);
  EXPECT_EQ(best->config_index, 2u);
  EXPECT_DOUBLE_EQ(best->cost(), 2.5e-3);
  EXPECT_EQ(db.count(kTarget, kDense), 6u);
}

TEST(Database, AConfigMeasuredAgainIsJudgedByAllItsMeasurements) {
  Database db;
  db.add(config_record(1, {1e-3}));  // lucky once...
  db.add(config_record(2, {2.5e-3, 2.5e-3}));
  db.add(config_record(1, {4e-3, 4e-3}));  // ...and re-measured: a median of 4e-3 over all three
  std::optional<TuningRecord> best = db.best(kTarget, kDense);
  ASSERT_TRUE(best);
  EXPECT_EQ(best->config_index, 2u);
  db.add(config_record(2, {5e-3, 5e-3, 5e-3}));  // now 5e-3: config 1 wins with every cost pooled
  best = db.best(kTarget, kDense);
  ASSERT_TRUE(best);
  EXPECT_EQ(best->config_index, 1u);
  EXPECT_EQ(best->costs.size(), 3u);
  EXPECT_DOUBLE_EQ(best->cost(), 4e-3);
}

TEST(Database, AConfigThatFailedOnceIsOut) {
  Database db;
  db.add(config_record(1, {1e-3}));
  db.add(config_record(2, {2e-3}));
  db.add(config_record(1, {}, MeasureError::kWrongAnswer));  // re-measured, and wrong this time
  std::optional<TuningRecord> best = db.best(kTarget, kDense);
  ASSERT_TRUE(best);
  EXPECT_EQ(best->config_index, 2u);
}

TEST(ChooseConfig, LowestCostUnlessTheFallbackHoldsOrIsVetoed) {
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(choose_config({}), std::nullopt);
  EXPECT_EQ(choose_config({{inf}, {1.0, false, true}}), std::nullopt);  // failed, vetoed
  EXPECT_EQ(choose_config({{2.0}, {1.0}, {1.0}}), 1u);                  // the first of equals
  EXPECT_EQ(choose_config({{1.0, true}, {0.97}}), 0u);  // not 5% better: the fallback
  EXPECT_EQ(choose_config({{1.0, true}, {0.9}}), 1u);
  EXPECT_EQ(choose_config({{1.0, true, true}, {0.97}}), 1u);  // a vetoed fallback holds nothing
  EXPECT_EQ(choose_config({{inf, true}, {0.97}}), 1u);        // nor does a failed one
  EXPECT_EQ(choose_config({{1.0, true}, {0.5, false, true}}), 0u);  // a vetoed config never wins
}

TEST(Records, TheFallbackFlagRoundTripsAndIsOptional) {
  TuningRecord r = make_record(3, {1e-3});
  r.fallback = true;
  std::string line = record_to_line(r);
  EXPECT_NE(line.find(R"("fallback":true)"), std::string::npos) << line;
  EXPECT_TRUE(record_from_line(line).fallback);
  EXPECT_FALSE(record_from_line(record_to_line(make_record(3, {1e-3}))).fallback);  // absent: false
  line.replace(line.find("true"), 4, "1");
  expect_error([&] { record_from_line(line); }, {"fallback", "true or false"});
}

// A config replaces the fallback only when it is at least kMinGainOverDefault faster.
TEST(Database, TheFallbackStaysUnlessAConfigClearlyBeatsIt) {
  TuningRecord fallback = fallback_record({1e-3, 1e-3});
  Database db;
  db.add(fallback);
  db.add(config_record(1, {0.97e-3, 0.97e-3}));  // 3% faster: within the noise
  std::optional<TuningRecord> best = db.best(kTarget, kDense);
  ASSERT_TRUE(best);
  EXPECT_EQ(best->config_index, 0u);
  EXPECT_TRUE(best->fallback);
  db.add(config_record(2, {0.9e-3, 0.9e-3}));  // 10% faster
  EXPECT_EQ(db.best(kTarget, kDense)->config_index, 2u);
  EXPECT_TRUE(beats_default(0.9, 1.0));
  EXPECT_FALSE(beats_default(0.97, 1.0));
  EXPECT_FALSE(beats_default(1.1, 1.0));
}

// The model check's verdict: a config slower inside the model is never the best again, however
// fast it measured alone; the fallback itself can be vetoed too (a conv's other layout).
TEST(Database, AConfigVetoedInTheModelIsPassedOver) {
  TuningRecord fallback = fallback_record({1e-3, 1e-3});
  Database db;
  db.add(fallback);
  db.add(config_record(1, {0.5e-3, 0.5e-3}));
  db.add(config_record(2, {0.8e-3, 0.8e-3}));
  EXPECT_EQ(db.best(kTarget, kDense)->config_index, 1u);
  TuningRecord veto = verdict_record(config_record(1, {}), {.kind = VerdictKind::kVeto});
  veto.config =
      R"({"unroll": 1, "tile": [4, 1]})";  // written by another tool: configs match by index
  db.add(veto);
  EXPECT_EQ(db.best(kTarget, kDense)->config_index, 2u);
  db.add(verdict_record(config_record(2, {}), {.kind = VerdictKind::kVeto}));
  EXPECT_TRUE(db.best(kTarget, kDense)->fallback);
  db.add(verdict_record(fallback, {.kind = VerdictKind::kVeto}));
  EXPECT_FALSE(db.best(kTarget, kDense));
  EXPECT_EQ(db.configs_measured(kTarget, kDense), (std::set<uint64_t>{0, 1, 2}));
}

// A config that is not usable (compile's filter: one the template refuses now) is out, as a vetoed
// one is; the others are chosen as without a filter.
TEST(Database, AConfigThatIsNotUsableIsPassedOver) {
  Database db({fallback_record({1e-3, 1e-3}), config_record(1, {0.5e-3, 0.5e-3}),
               config_record(2, {0.6e-3, 0.8e-3}), config_record(2, {0.7e-3})});
  auto without = [](uint64_t index) {
    return [index](const TuningRecord& r) { return r.config_index != index; };
  };
  EXPECT_EQ(db.best(kTarget, kDense)->config_index, 1u);
  std::optional<TuningRecord> second = db.best(kTarget, kDense, without(1));
  ASSERT_TRUE(second);
  EXPECT_EQ(second->config_index, 2u);
  EXPECT_EQ(second->costs.size(), 3u);  // its records pooled, as without a filter
  EXPECT_TRUE(db.best(kTarget, kDense, [](const TuningRecord& r) { return r.fallback; })->fallback);
  EXPECT_FALSE(db.best(kTarget, kDense, [](const TuningRecord&) { return false; }));
}

TEST(Database, APinRulesOutTheConfigsMeasuredBeforeIt) {
  Database db;
  TuningRecord fallback = fallback_record({2e-3});
  db.add(fallback);
  db.add(config_record(1, {1e-3}));
  EXPECT_EQ(db.best(kTarget, kDense)->config_index, 1u);
  EXPECT_FALSE(db.pinned(kTarget, kDense));
  TuningRecord pin = verdict_record(fallback, {.kind = VerdictKind::kPin});
  db.add(pin);
  EXPECT_EQ(db.best(kTarget, kDense)->config_index, 0u);
  EXPECT_TRUE(db.pinned(kTarget, kDense));
  db.add(config_record(1, {0.5e-3}));  // measured again: still ruled out
  EXPECT_EQ(db.best(kTarget, kDense)->config_index, 0u);
  db.add(config_record(2, {1e-3}));  // first measured after the pin: it competes
  EXPECT_EQ(db.best(kTarget, kDense)->config_index, 2u);
  EXPECT_FALSE(db.pinned(kTarget, kDense));
  EXPECT_EQ(vetoed_configs({fallback, config_record(1, {1e-3}), pin, config_record(2, {1e-3})}),
            (std::set<uint64_t>{1}));
}

TEST(Records, MedianCost) {
  EXPECT_EQ(median_cost({}), std::numeric_limits<double>::infinity());
  EXPECT_DOUBLE_EQ(median_cost({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(median_cost({4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(median_cost({1, 1, 100}), 1);  // one slow phase does not move it
}

TEST(Database, KeysAreTargetAndWorkload) {
  const std::string conv = "conv2d|float32[1,64,56,56]|float32[64,64,3,3]";
  Database db({config_record(0, {1e-3}), config_record(1, {5e-4}, MeasureError::kNone, conv),
               config_record(2, {1e-4}, MeasureError::kNone, kDense, "llvm -mcpu=znver3"),
               config_record(3, {}, MeasureError::kBuildError, "softmax|float32[8,8]"),
               config_record(4, {}, MeasureError::kRuntimeError, "softmax|float32[8,8]")});
  EXPECT_EQ(db.best(kTarget, kDense)->config_index, 0u);
  EXPECT_EQ(db.best(kTarget, conv)->config_index, 1u);
  EXPECT_EQ(db.best("llvm -mcpu=znver3", kDense)->config_index, 2u);
  // Every record of softmax errored: no best, but both are measured (a resume skips them).
  EXPECT_FALSE(db.best(kTarget, "softmax|float32[8,8]"));
  EXPECT_EQ(db.count(kTarget, "softmax|float32[8,8]"), 2u);
  EXPECT_EQ(db.configs_measured(kTarget, "softmax|float32[8,8]"), (std::set<uint64_t>{3, 4}));
  EXPECT_FALSE(db.best(kTarget, "unknown"));
  EXPECT_EQ(db.count(kTarget, "unknown"), 0u);
  EXPECT_TRUE(db.configs_measured(kTarget, "unknown").empty());
}

// A verdict of the model check is a record kind of its own (format version 2), holding the check
// behind it; a measurement is still written as version 1, which earlier Tessel builds read.
TEST(Records, AVerdictLineIsAModelCheckRecord) {
  TuningRecord measured = make_record(37, {1.25e-4});
  measured.fallback = true;
  TuningRecord pin = verdict_record(
      measured, {VerdictKind::kPin, 0.25, 0.125, 0.5, 20, {"fused_conv_0", "fused_conv_3"}});
  EXPECT_EQ(pin.target, measured.target);
  EXPECT_EQ(pin.config_index, 37u);
  EXPECT_TRUE(pin.fallback);
  EXPECT_TRUE(pin.costs.empty());
  EXPECT_GE(pin.timestamp, 1700000000);
  pin.timestamp = 1700000099;
  std::string line = record_to_line(pin);
  EXPECT_EQ(
      line,
      R"({"v":2,"kind":"model_check","target":"llvm -mcpu=skylake",)"
      R"("workload":"dense|float32[128,256]|float32[512,256]","config":{"tile":[4,32],"unroll":1},)"
      R"("config_index":37,"verdict":"pin","tuned_ms":0.25,"untuned_ms":0.125,"speedup":0.5,)"
      R"("rounds":20,"kernels":["fused_conv_0","fused_conv_3"],"timestamp":1700000099,)"
      R"("fallback":true})");
  TuningRecord back = record_from_line(line);
  expect_same(back, pin);
  ASSERT_TRUE(back.is_verdict(VerdictKind::kPin));
  EXPECT_FALSE(back.is_verdict(VerdictKind::kVeto));
  EXPECT_EQ(back.verdict->tuned_ms, 0.25);
  EXPECT_EQ(back.verdict->untuned_ms, 0.125);
  EXPECT_EQ(back.verdict->speedup, 0.5);
  EXPECT_EQ(back.verdict->rounds, 20);
  EXPECT_EQ(back.verdict->kernels, (std::vector<std::string>{"fused_conv_0", "fused_conv_3"}));
  EXPECT_TRUE(
      record_from_line(record_to_line(verdict_record(measured, {.kind = VerdictKind::kVeto})))
          .is_verdict(VerdictKind::kVeto));
  EXPECT_EQ(record_to_line(make_record(1, {1e-3})).rfind(R"({"v":1,"target")", 0), 0u);

  auto with = [&](const std::string& from, const std::string& to) {
    std::string bad = line;
    bad.replace(bad.find(from), from.size(), to);
    return bad;
  };
  expect_error([&] { record_from_line(with(R"("pin")", R"("keep")")); },
               {"unknown verdict \"keep\"", "veto or pin"});
  expect_error([&] { record_from_line(with(R"("tuned_ms":0.25)", R"("tuned_ms":-1)")); },
               {"\"tuned_ms\"", ">= 0"});
  expect_error([&] { record_from_line(with(R"("speedup":0.5)", R"("speedup":"fast")")); },
               {"\"speedup\""});
  expect_error([&] { record_from_line(with(R"("rounds":20)", R"("rounds":-2)")); }, {"rounds -2"});
  expect_error([&] { record_from_line(with(R"("fused_conv_0")", "7")); }, {"kernel 7"});
  expect_error([&] { record_from_line(with(R"("kernels":)", R"("kernel_list":)")); },
               {"missing field \"kernels\""});
}

// Version 1 stored a verdict as a measurement whose error named it and whose one cost was the
// in-model time (a veto's tuned, a pin's untuned): such lines read as verdicts, and judge as the
// new form does.
TEST(Records, AVersion1VerdictReadsAsAModelCheckRecord) {
  std::string path = temp_path("v1_verdicts");
  TuningRecord fallback = fallback_record({2e-3});
  auto v1_line = [](TuningRecord r, const std::string& error, double cost_s) {
    r.costs = {cost_s};
    std::string line = record_to_line(r);
    line.replace(line.find(R"("error":"none")"), 14, R"("error":")" + error + "\"");
    return line;
  };
  write_file(path, record_to_line(fallback) + "\n" + record_to_line(config_record(1, {1e-3})) +
                       "\n" + record_to_line(config_record(2, {1.5e-3})) + "\n" +
                       v1_line(config_record(1, {}), "slower_in_model", 1.2e-3) + "\n");
  std::vector<std::string> warnings;
  std::vector<TuningRecord> records = load_records(path, &warnings);
  EXPECT_TRUE(warnings.empty());
  ASSERT_EQ(records.size(), 4u);
  const TuningRecord& veto = records[3];
  ASSERT_TRUE(veto.is_verdict(VerdictKind::kVeto));
  EXPECT_EQ(veto.config_index, 1u);
  EXPECT_TRUE(veto.costs.empty());
  EXPECT_EQ(veto.error, MeasureError::kNone);
  EXPECT_DOUBLE_EQ(veto.verdict->tuned_ms, 1.2);
  EXPECT_EQ(veto.verdict->untuned_ms, 0);
  // Written again, it takes the new form.
  EXPECT_NE(record_to_line(veto).find(R"("kind":"model_check")"), std::string::npos);
  Database db(records);
  EXPECT_EQ(db.best(kTarget, kDense)->config_index, 2u);  // config 1 is vetoed

  std::ofstream(path, std::ios::app) << v1_line(fallback, "fallback_in_model", 2e-3) << "\n";
  records = load_records(path, &warnings);
  EXPECT_TRUE(warnings.empty());
  ASSERT_EQ(records.size(), 5u);
  ASSERT_TRUE(records[4].is_verdict(VerdictKind::kPin));
  EXPECT_DOUBLE_EQ(records[4].verdict->untuned_ms, 2.0);
  EXPECT_TRUE(records[4].fallback);
  EXPECT_TRUE(Database(records).pinned(kTarget, kDense));
  EXPECT_EQ(Database(records).best(kTarget, kDense)->config_index, 0u);
}

}  // namespace
}  // namespace tessel::autotune

namespace tessel::autotune {
namespace {

// An auto-scheduler record carries its program's te trace; its fallback (the compiler's own
// schedule) has none. Both round-trip, and the kind needs version 3.
TEST(Records, AutoScheduleRecordsKeepTheirSteps) {
  TuningRecord r = make_record(42, {2e-3});
  r.config = "{}";
  r.auto_schedule = true;
  r.steps = "split C [0:i] [8] []\nparallel C [3:i.outer] [] []\n";
  std::string line = record_to_line(r);
  EXPECT_NE(line.find(R"("v":3,"kind":"auto_schedule")"), std::string::npos) << line;
  expect_same(record_from_line(line), r);
  // The fallback's costs timed in turns with the program round-trip too, and are costs.
  TuningRecord paired = r;
  paired.fallback_costs = {1e-3, 1.5e-3};
  std::string paired_line = record_to_line(paired);
  expect_same(record_from_line(paired_line), paired);
  paired_line.replace(paired_line.find("0.0015"), 6, "-1");
  EXPECT_THROW(record_from_line(paired_line), Error);
  TuningRecord fallback = r;
  fallback.steps.clear();
  fallback.fallback = true;
  TuningRecord back = record_from_line(record_to_line(fallback));
  expect_same(back, fallback);
  EXPECT_TRUE(back.fallback);
  // Steps are there exactly when the record is not the fallback.
  std::string bad = record_to_line(fallback);
  bad.replace(bad.find(R"("steps":"")"), 10, R"("steps":"x")");
  EXPECT_THROW(record_from_line(bad), Error);
  std::string v2 = line;
  v2.replace(v2.find(R"("v":3)"), 5, R"("v":2)");
  EXPECT_THROW(record_from_line(v2), Error);
  // Measurements and verdicts keep their old versions, which older readers take.
  EXPECT_NE(record_to_line(make_record(1, {1e-3})).find(R"("v":1)"), std::string::npos);
}

// A template config timed in turns with the fallback keeps the fallback's times too, in the
// measurement kind (version 1).
TEST(Records, MeasurementsKeepTheFallbackTimesTheyWereTimedWith) {
  TuningRecord r = make_record(7, {2e-3, 2.1e-3});
  r.fallback_costs = {1e-3, 1.2e-3};
  std::string line = record_to_line(r);
  EXPECT_NE(line.find(R"("v":1)"), std::string::npos) << line;
  expect_same(record_from_line(line), r);
  line.replace(line.find("0.0012"), 6, "0");
  EXPECT_THROW(record_from_line(line), Error);
}

}  // namespace
}  // namespace tessel::autotune
