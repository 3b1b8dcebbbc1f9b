// Tuning records: one JSON object per line, appended as tuning goes so that a killed run loses
// nothing and a later run resumes from the file. Two kinds of line:
// - a candidate's measurement (format version 1):
//     {"v": 1, "target": "llvm -mcpu=skylake", "workload":
//     "dense|float32[128,256]|float32[512,256]",
//      "config": {"tile_y": [16, 8], "tile_x": [64, 8]}, "config_index": 37,
//      "costs": [1.2e-4, ...], "error": "none", "error_msg": "", "timestamp": 1700000000}
// - a verdict of the model check on a config (version 2, which added "kind"):
//     {"v": 2, "kind": "model_check", "target": ..., "workload": ..., "config": {...},
//      "config_index": 37, "verdict": "veto", "tuned_ms": 0.051, "untuned_ms": 0.050,
//      "speedup": 0.98, "rounds": 20, "kernels": ["fused_conv2d_3"], "timestamp": 1700000000}
// - an auto-scheduler program's measurement (version 3, which added it): the te trace of the
//   program's schedule (te/schedule.h) instead of a config, keyed by a hash of it:
//     {"v": 3, "kind": "auto_schedule", "target": ..., "workload": "auto|...",
//      "config": {"program": "0cab..."}, "config_index": 912...,
//      "steps": "split C [0:i] [8] []\n...", "costs": [...], ...}
//   (config: the program's key in hex, {} for the fallback).
// Any has "fallback": true when its config is the template's fallback (the untuned schedule; for
// an auto-scheduler record, steps are then empty: the compiler's own schedule).
// Each line is written in the oldest version that holds it, so Tessel builds that read version 1
// only still read the measurements, and skip the verdicts as foreign lines. Version 1 stored
// verdicts as measurements whose "error" was "slower_in_model" or "fallback_in_model"; such lines
// are read as verdicts.
#pragma once

#include <cstdint>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tessel::autotune {

// How an auto-scheduler task's workload key starts (autotune/auto_schedule/search_task.h).
inline constexpr std::string_view kAutoWorkloadPrefix = "auto|";

// The newest format version this Tessel reads and writes.
constexpr int kRecordVersion = 3;

// How a candidate's measurement ended (autotune/measure.h), as records store it.
enum class MeasureError { kNone, kBuildError, kRuntimeError, kTimeout, kWrongAnswer };
// "none", "build_error", "runtime_error", "timeout" or "wrong_answer".
const char* measure_error_name(MeasureError e);

// What the model check (driver/check_tuned_model.h) decided about a config it found not clearly
// faster inside the model than the untuned kernel (kMinGainInModel).
enum class VerdictKind {
  // "veto": the config is never applied again (it is marked by config_index); compile takes the
  // workload's next best.
  kVeto,
  // "pin": the workload gets its untuned kernel back: no config measured before this record is
  // applied but the fallback; configs first measured after it still compete. It is on the
  // fallback's config where the workload has a record of it.
  kPin
};
// "veto" or "pin".
const char* verdict_kind_name(VerdictKind k);

// A verdict and the check behind it.
struct ModelVerdict {
  VerdictKind kind = VerdictKind::kVeto;
  // The workload's kernels per model run, summed, in milliseconds, with the records and without;
  // and the median over `rounds` rounds of each round's untuned / tuned. A version-1 verdict kept
  // only one time (a veto's tuned_ms, a pin's untuned_ms): the others read as 0.
  double tuned_ms = 0, untuned_ms = 0, speedup = 0;
  int rounds = 0;
  std::vector<std::string> kernels = {};  // the workload's kernel functions in the tuned build
};

// One line of a records file: a measurement of a config, or, when `verdict` is set, the model
// check's verdict on it (then costs is empty and error kNone).
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
  std::optional<ModelVerdict> verdict;
  // An auto-scheduler record: `steps` is its schedule's te trace (empty for the fallback).
  bool auto_schedule = false;
  std::string steps;
  // A config or auto-scheduler program timed in turns with the fallback (measure's baseline): the
  // fallback's seconds per run, each measured just before one of the candidate's. `costs` are
  // then the candidate's times in the fallback record's time: each raw time times the fallback's
  // median cost in its records over the fastest of the fallback's times here
  // (MeasureResult::costs_against_baseline).
  std::vector<double> fallback_costs;

  // median_cost of costs (infinity for a verdict).
  double cost() const;
  bool is_verdict(VerdictKind kind) const { return verdict && verdict->kind == kind; }
};

// A verdict on the config of `on` (a measurement or a verdict): its target, workload, config,
// index and fallback flag, stamped now.
TuningRecord verdict_record(const TuningRecord& on, ModelVerdict verdict);

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
  bool ruled_out = false;  // it has a veto, a pin follows its first measurement, or is unusable
};
// The position in `configs` of the config to apply: the lowest finite cost of those not ruled
// out, the first of equals; the fallback instead when that one does not beat it (beats_default)
// and the fallback is not ruled out. None when no config is left with a finite cost.
std::optional<size_t> choose_config(const std::vector<ConfigStanding>& configs);

// What a config costs by its measurements (each the mean of `number` runs): their median, which
// one slow phase of a shared machine, or one lucky run, does not move. Infinity for none.
double median_cost(std::vector<double> costs);

// Seconds since the unix epoch, for TuningRecord::timestamp.
int64_t unix_time_now();

// One record as a single JSON line (no trailing newline).
std::string record_to_line(const TuningRecord& r);
// Parses one line of either version; throws tessel::Error saying what is wrong (invalid JSON,
// another format version, a missing or mistyped field, an unknown kind, a successful record
// without costs, a cost that is not a positive finite number of seconds, a time that is not a
// finite number of milliseconds >= 0, a negative config_index, rounds or timestamp).
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

// The indices of the configs that verdicts among `records` (one workload's, in file order) rule
// out: those with a veto, and those measured before a pin, but for the fallback (any config with a
// record flagged `fallback`).
std::set<uint64_t> vetoed_configs(const std::vector<TuningRecord>& records);

// Records grouped by (target, workload): the best config to apply and what is measured already.
class Database {
 public:
  Database() = default;
  explicit Database(const std::vector<TuningRecord>& records);
  void add(const TuningRecord& r);

  // Whether a config may be applied, by its first record: false for one the template refuses now
  // (compile knows the template's space, the records do not).
  using Usable = std::function<bool(const TuningRecord&)>;
  // The config to apply (choose_config), judged by the median of all its records' costs (tuning
  // re-measures its best candidates, so one lucky measurement does not decide), as its first
  // record with every cost pooled. A config with a failed record, vetoed (ConfigStanding), or not
  // `usable` (when given) is out; a filter that leaves the fallback out leaves out its margin
  // (kMinGainOverDefault) too. None when no config is left or there is no record.
  std::optional<TuningRecord> best(const std::string& target, const std::string& workload,
                                   const Usable& usable = {}) const;
  // Whether the model check pinned the pair to its fallback: a pin, and best() is the fallback or
  // none. Compile then keeps the conv layout of the rule, too.
  bool pinned(const std::string& target, const std::string& workload) const;
  // The median of the pair's untuned-kernel (fallback) measurements pooled: the time base of its
  // configs' costs. None without one, or when one failed.
  std::optional<double> fallback_cost(const std::string& target, const std::string& workload) const;
  // The number of records of the pair, errors and verdicts included.
  size_t count(const std::string& target, const std::string& workload) const;
  // The config indices with a record for the pair, errors and verdicts included (a resumed run
  // skips them).
  std::set<uint64_t> configs_measured(const std::string& target, const std::string& workload) const;

 private:
  std::map<std::pair<std::string, std::string>, std::vector<TuningRecord>> records_;
};

}  // namespace tessel::autotune
