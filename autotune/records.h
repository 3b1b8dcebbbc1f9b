// Tuning records: one JSON object per line, one line per measured candidate, appended as tuning
// goes so that a killed run loses nothing and a later run resumes from the file. Format (v 1):
//   {"v": 1, "target": "llvm -mcpu=skylake", "workload": "dense|float32[128,256]|float32[512,256]",
//    "config": {"tile_y": [16, 8], "tile_x": [64, 8]}, "config_index": 37, "costs": [1.2e-4, ...],
//    "error": "none", "error_msg": "", "timestamp": 1700000000}
// and "fallback": true on the measurements of the template's fallback config (the untuned
// schedule).
#pragma once

#include <cstdint>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace tessel::autotune {

constexpr int kRecordVersion = 1;

// How a candidate's measurement ended (autotune/measure.h), as records store it.
// The last two are not a measurement's end but the model check's verdicts
// (driver/check_tuned_model.h): kSlowerInModel: the config, applied at compile time, was not
// clearly faster inside the model than the untuned kernel (kMinGainInModel,
// driver/check_tuned_model.h); its cost is the in-model time of the workload's kernels per model
// run, summed. It marks the config by index. kFallbackInModel (a pin), on a record of the fallback
// config where there is one: no config measured before this record is to be applied, but the
// fallback (the model check gave the workload its untuned kernel back); configs first measured
// after it still compete.
enum class MeasureError {
  kNone,
  kBuildError,
  kRuntimeError,
  kTimeout,
  kWrongAnswer,
  kSlowerInModel,
  kFallbackInModel
};
// "none", "build_error", "runtime_error", "timeout", "wrong_answer", "slower_in_model" or
// "fallback_in_model".
const char* measure_error_name(MeasureError e);

struct TuningRecord {
  std::string target;
  std::string workload;  // a stable key of op, shapes, dtypes and attributes
  std::string config;    // a JSON object, knob -> value (ConfigEntity::to_json)
  uint64_t config_index = 0;
  std::vector<double> costs;  // seconds per timed repeat; non-empty when error is kNone
  MeasureError error = MeasureError::kNone;
  std::string error_msg;
  int64_t timestamp = 0;  // unix seconds
  bool fallback = false;  // the template's fallback config

  // median_cost of costs.
  double cost() const;
};

// A measured config replaces the default (the fallback config, or the rule's conv layout) only
// when its median cost is at least this much lower. The best of hundreds of noisy measurements
// is biased low (the winner's curse): on resnet_mini, configs measured 2-4% faster than the
// fallback in isolation ran 4-7% slower in the model (docs/autotune.md).
constexpr double kMinGainOverDefault = 0.05;
// Whether a config costing `cost` should replace the default costing `default_cost`.
bool beats_default(double cost, double default_cost);

// Where one config stands when the config to apply is chosen (Database::best, and tuning's own
// bookkeeping): its pooled median cost, infinity when any of its measurements failed.
struct ConfigStanding {
  double cost;
  bool fallback = false;
  bool vetoed =
      false;  // it has a kSlowerInModel record, or a kFallbackInModel record follows its first
};
// The position in `configs` of the config to apply: the lowest finite cost of those not vetoed,
// the first of equals; the fallback instead when that one does not beat it (beats_default) and the
// fallback is not vetoed. None when no config has a finite cost and no veto.
std::optional<size_t> choose_config(const std::vector<ConfigStanding>& configs);

// What a config costs by its measurements (each the mean of `number` runs): their median, which
// one slow phase of a shared machine, or one lucky run, does not move. Infinity for none.
double median_cost(std::vector<double> costs);

// Seconds since the unix epoch, for TuningRecord::timestamp.
int64_t unix_time_now();

// One record as a single JSON line (no trailing newline).
std::string record_to_line(const TuningRecord& r);
// Parses one line; throws tessel::Error saying what is wrong (invalid JSON, another format
// version, a missing or mistyped field, a successful record without costs, a cost that is not a
// positive finite number of seconds, a negative config_index or timestamp).
TuningRecord record_from_line(const std::string& line);

// Appends records to a file, creating it if needed; each write is flushed before it returns.
class RecordWriter {
 public:
  // Opens `path` for appending (old records are kept); an Error naming it if that fails or if it
  // is something other than a regular file. A last line cut off by a killed run is ended first,
  // so that it does not swallow the next record.
  explicit RecordWriter(const std::string& path);
  void write(const TuningRecord& r);
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::ofstream out_;
};

// Every valid record of `path`, in file order. Corrupt (record_from_line's errors), foreign
// (another "v"), truncated and overlong (over 1 MiB) lines are skipped with a warning
// "PATH:LINE: ..." appended to `warnings` (when not null); blank lines are ignored. A file that
// cannot be opened, is not a regular file or is over 1 GiB is an Error naming it.
std::vector<TuningRecord> load_records(const std::string& path, std::vector<std::string>* warnings);

// Whether a record kind is a verdict of the model check rather than a measurement.
bool is_verdict(MeasureError e);
// The indices of the configs that verdicts among `records` (one workload's, in file order) rule
// out: those with a kSlowerInModel record, and those measured before a kFallbackInModel record,
// but for the fallback (any config with a record flagged `fallback`).
std::set<uint64_t> vetoed_configs(const std::vector<TuningRecord>& records);

// Records grouped by (target, workload): the best config to apply and what is measured already.
class Database {
 public:
  Database() = default;
  explicit Database(const std::vector<TuningRecord>& records);
  void add(const TuningRecord& r);

  // The config to apply (choose_config), judged by the median of all its records' costs (tuning
  // re-measures its best candidates, so one lucky measurement does not decide), as its first
  // record with every cost pooled. A config with a failed record, or vetoed (ConfigStanding), is
  // out. None when no config is left or there is no record.
  std::optional<TuningRecord> best(const std::string& target, const std::string& workload) const;
  // Whether the model check pinned the pair to its fallback: a kFallbackInModel record, and best()
  // is the fallback or none. Compile then keeps the conv layout of the rule, too.
  bool pinned(const std::string& target, const std::string& workload) const;
  // The number of records of the pair, errors included.
  size_t count(const std::string& target, const std::string& workload) const;
  // The config indices measured for the pair, errors included (a resumed run skips them).
  std::set<uint64_t> configs_measured(const std::string& target, const std::string& workload) const;

 private:
  std::map<std::pair<std::string, std::string>, std::vector<TuningRecord>> records_;
};

}  // namespace tessel::autotune
