#include "autotune/records.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>

#include "ir/error.h"

namespace tessel::autotune {

namespace {

// ordered_json keeps the writer's field and knob order, so records stay readable by eye.
using Json = nlohmann::ordered_json;

constexpr MeasureError kMeasureErrors[] = {MeasureError::kNone, MeasureError::kBuildError,
                                           MeasureError::kRuntimeError, MeasureError::kTimeout,
                                           MeasureError::kWrongAnswer};
constexpr VerdictKind kVerdictKinds[] = {VerdictKind::kVeto, VerdictKind::kPin};

// The "kind" of a version-2 line.
constexpr const char* kMeasurementKind = "measurement";
constexpr const char* kModelCheckKind = "model_check";
constexpr const char* kAutoScheduleKind = "auto_schedule";
// Verdicts are version 2; auto-scheduler records, which version 3 added, kRecordVersion.
constexpr int kVerdictVersion = 2;
// Measurements are still written as version 1, which holds them.
constexpr int kMeasurementVersion = 1;

// How version 1 stored verdicts: a measurement with one of these errors, whose single cost was a
// veto's tuned time or a pin's untuned time in the model, in seconds.
std::optional<VerdictKind> version1_verdict(const std::string& error) {
  if (error == "slower_in_model") return VerdictKind::kVeto;
  if (error == "fallback_in_model") return VerdictKind::kPin;
  return std::nullopt;
}

// A line written by something else, or by another version of Tessel: skipped, not corrupt.
class ForeignRecord : public Error {
 public:
  using Error::Error;
};

const Json& field(const Json& j, const char* name) {
  auto it = j.find(name);
  if (it == j.end()) throw Error(fmt::format("missing field \"{}\"", name));
  return *it;
}

std::string string_field(const Json& j, const char* name) {
  const Json& f = field(j, name);
  if (!f.is_string())
    throw Error(fmt::format("field \"{}\" must be a string, got {}", name, f.dump()));
  return f.get<std::string>();
}

const Json& integer_field(const Json& j, const char* name) {
  const Json& f = field(j, name);
  if (!f.is_number_integer())
    throw Error(fmt::format("field \"{}\" must be an integer, got {}", name, f.dump()));
  return f;
}

// Bounds on what load_records reads, far above what tuning writes (a record is a few hundred bytes,
// a long tune a few MB), so that a hostile file cannot make it hold gigabytes.
constexpr uintmax_t kMaxRecordsFileBytes = uintmax_t{1} << 30;
constexpr size_t kMaxRecordLineBytes = size_t{1} << 20;

// Reads the next line of `in` into `line`, without its newline; false at the end of the input.
// `complete`: the line ended with a newline. `too_long`: it had more than kMaxRecordLineBytes,
// which were consumed but not kept.
bool read_line(std::streambuf& in, std::string& line, bool& complete, bool& too_long) {
  line.clear();
  complete = too_long = false;
  using Traits = std::streambuf::traits_type;
  if (Traits::eq_int_type(in.sgetc(), Traits::eof())) return false;
  for (Traits::int_type c = in.sbumpc(); !Traits::eq_int_type(c, Traits::eof()); c = in.sbumpc()) {
    if (Traits::to_char_type(c) == '\n') {
      complete = true;
      break;
    }
    if (line.size() < kMaxRecordLineBytes) {
      line.push_back(Traits::to_char_type(c));
    } else {
      too_long = true;
    }
  }
  return true;
}

MeasureError parse_measure_error(const std::string& s) {
  for (MeasureError e : kMeasureErrors) {
    if (s == measure_error_name(e)) return e;
  }
  throw Error(fmt::format("unknown error kind \"{}\"", s));
}

VerdictKind parse_verdict_kind(const std::string& s) {
  for (VerdictKind k : kVerdictKinds) {
    if (s == verdict_kind_name(k)) return k;
  }
  throw Error(fmt::format("unknown verdict \"{}\" (expected veto or pin)", s));
}

// A finite number >= 0 (a time in milliseconds, a speed-up).
double non_negative_field(const Json& j, const char* name) {
  const Json& f = field(j, name);
  if (!f.is_number() || !std::isfinite(f.get<double>()) || f.get<double>() < 0)
    throw Error(fmt::format("field \"{}\" must be a finite number >= 0, got {}", name, f.dump()));
  return f.get<double>();
}

// The fields every line has: target, workload, config, config_index, timestamp, fallback.
void read_identity(const Json& j, TuningRecord& r) {
  r.target = string_field(j, "target");
  r.workload = string_field(j, "workload");
  const Json& config = field(j, "config");
  if (!config.is_object())
    throw Error(fmt::format("field \"config\" must be an object, got {}", config.dump()));
  r.config = config.dump();
  const Json& index = integer_field(j, "config_index");
  if (!index.is_number_unsigned())
    throw Error(fmt::format("negative config_index {}", index.dump()));
  r.config_index = index.get<uint64_t>();
  const Json& timestamp = integer_field(j, "timestamp");
  if (!timestamp.is_number_unsigned() ||
      timestamp.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    throw Error(fmt::format("timestamp {} is not a number of unix seconds", timestamp.dump()));
  }
  r.timestamp = timestamp.get<int64_t>();
  if (auto f = j.find("fallback"); f != j.end()) {
    if (!f->is_boolean())
      throw Error(fmt::format("field \"fallback\" must be true or false, got {}", f->dump()));
    r.fallback = f->get<bool>();
  }
}

// An array of costs: seconds, each finite and positive (a zero cost would be an infinite speed:
// XGBoost's labels, best cost / cost, would turn NaN).
std::vector<double> positive_costs(const Json& costs) {
  if (!costs.is_array())
    throw Error(fmt::format("a costs field must be an array, got {}", costs.dump()));
  std::vector<double> out;
  for (const Json& c : costs) {
    if (!c.is_number() || !std::isfinite(c.get<double>()) || c.get<double>() <= 0) {
      throw Error(fmt::format("cost {} is not a positive number of seconds", c.dump()));
    }
    out.push_back(c.get<double>());
  }
  return out;
}

// A measurement's fields, or a version-1 line's verdict.
void read_measurement(const Json& j, int version, TuningRecord& r) {
  r.costs = positive_costs(field(j, "costs"));
  std::string error = string_field(j, "error");
  r.error_msg = string_field(j, "error_msg");
  std::optional<VerdictKind> kind = version == 1 ? version1_verdict(error) : std::nullopt;
  if (kind) {
    ModelVerdict v{.kind = *kind};
    double in_model_ms = r.costs.empty() ? 0 : r.costs[0] * 1e3;
    (*kind == VerdictKind::kVeto ? v.tuned_ms : v.untuned_ms) = in_model_ms;
    r.verdict = std::move(v);
    r.costs.clear();
    r.error_msg.clear();
    return;
  }
  r.error = parse_measure_error(error);
  if (r.error == MeasureError::kNone && r.costs.empty())
    throw Error("a successful record without costs");
  if (auto f = j.find("fallback_costs"); f != j.end()) r.fallback_costs = positive_costs(*f);
}

void read_verdict(const Json& j, TuningRecord& r) {
  ModelVerdict v;
  v.kind = parse_verdict_kind(string_field(j, "verdict"));
  v.tuned_ms = non_negative_field(j, "tuned_ms");
  v.untuned_ms = non_negative_field(j, "untuned_ms");
  v.speedup = non_negative_field(j, "speedup");
  const Json& rounds = integer_field(j, "rounds");
  if (!rounds.is_number_unsigned() ||
      rounds.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int>::max())) {
    throw Error(fmt::format("rounds {} is not a number of rounds", rounds.dump()));
  }
  v.rounds = rounds.get<int>();
  const Json& kernels = field(j, "kernels");
  if (!kernels.is_array())
    throw Error(fmt::format("field \"kernels\" must be an array, got {}", kernels.dump()));
  for (const Json& k : kernels) {
    if (!k.is_string()) throw Error(fmt::format("kernel {} is not a name", k.dump()));
    v.kernels.push_back(k.get<std::string>());
  }
  r.verdict = std::move(v);
}

}  // namespace

const char* measure_error_name(MeasureError e) {
  switch (e) {
    case MeasureError::kNone:
      return "none";
    case MeasureError::kBuildError:
      return "build_error";
    case MeasureError::kRuntimeError:
      return "runtime_error";
    case MeasureError::kTimeout:
      return "timeout";
    case MeasureError::kWrongAnswer:
      return "wrong_answer";
  }
  TESSEL_UNREACHABLE("record error kind");
}

const char* verdict_kind_name(VerdictKind k) {
  switch (k) {
    case VerdictKind::kVeto:
      return "veto";
    case VerdictKind::kPin:
      return "pin";
  }
  TESSEL_UNREACHABLE("verdict kind");
}

double median_cost(std::vector<double> costs) {
  if (costs.empty()) return std::numeric_limits<double>::infinity();
  size_t mid = costs.size() / 2;
  std::nth_element(costs.begin(), costs.begin() + static_cast<std::ptrdiff_t>(mid), costs.end());
  double upper = costs[mid];
  if (costs.size() % 2 == 1) return upper;
  return (*std::max_element(costs.begin(), costs.begin() + static_cast<std::ptrdiff_t>(mid)) +
          upper) /
         2;
}

double TuningRecord::cost() const { return median_cost(costs); }

TuningRecord verdict_record(const TuningRecord& on, ModelVerdict verdict) {
  TuningRecord r;
  r.target = on.target;
  r.workload = on.workload;
  r.config = on.config;
  r.config_index = on.config_index;
  r.fallback = on.fallback;
  r.verdict = std::move(verdict);
  r.timestamp = unix_time_now();
  return r;
}

bool beats_default(double cost, double default_cost) {
  return cost < default_cost * (1 - kMinGainOverDefault);
}

std::optional<size_t> choose_config(const std::vector<ConfigStanding>& configs) {
  std::optional<size_t> best, fallback;
  for (size_t i = 0; i < configs.size(); ++i) {
    const ConfigStanding& c = configs[i];
    if (c.ruled_out || !std::isfinite(c.cost)) continue;
    if (!best || c.cost < configs[*best].cost) best = i;
    if (c.fallback) fallback = i;
  }
  if (best && fallback && !beats_default(configs[*best].cost, configs[*fallback].cost))
    return fallback;
  return best;
}

int64_t unix_time_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string record_to_line(const TuningRecord& r) {
  Json config =
      Json::parse(r.config.empty() ? "{}" : r.config, nullptr, /*allow_exceptions=*/false);
  TESSEL_ICHECK(config.is_object()) << "record config is not a JSON object: " << r.config;
  Json j;
  if (r.verdict) {
    j = {{"v", kVerdictVersion}, {"kind", kModelCheckKind}};
  } else if (r.auto_schedule) {
    j = {{"v", kRecordVersion}, {"kind", kAutoScheduleKind}};
  } else {
    j = {{"v", kMeasurementVersion}};
  }
  j["target"] = r.target;
  j["workload"] = r.workload;
  j["config"] = std::move(config);
  j["config_index"] = r.config_index;
  if (r.auto_schedule) j["steps"] = r.steps;
  if (!r.fallback_costs.empty()) j["fallback_costs"] = r.fallback_costs;
  if (r.verdict) {
    j["verdict"] = verdict_kind_name(r.verdict->kind);
    j["tuned_ms"] = r.verdict->tuned_ms;
    j["untuned_ms"] = r.verdict->untuned_ms;
    j["speedup"] = r.verdict->speedup;
    j["rounds"] = r.verdict->rounds;
    j["kernels"] = r.verdict->kernels;
  } else {
    j["costs"] = r.costs;
    j["error"] = measure_error_name(r.error);
    j["error_msg"] = r.error_msg;
  }
  j["timestamp"] = r.timestamp;
  if (r.fallback) j["fallback"] = true;
  // Error messages can hold invalid UTF-8 (compiler output); replace rather than throw.
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

TuningRecord record_from_line(const std::string& line) {
  Json j;
  try {
    j = Json::parse(line);
  } catch (const nlohmann::json::exception&
               e) {  // parse_error, and out_of_range for a number like 1e999
    throw Error(fmt::format("invalid JSON ({})", e.what()));
  }
  if (!j.is_object()) throw Error("not a JSON object");
  auto v = j.find("v");
  if (v == j.end()) throw ForeignRecord("no \"v\" field (not a Tessel tuning record)");
  if (!v->is_number_integer() || *v < kMeasurementVersion || *v > kRecordVersion) {
    throw ForeignRecord(fmt::format("format version {} (this Tessel reads versions 1 to {})",
                                    v->dump(), kRecordVersion));
  }
  int version = v->get<int>();
  std::string kind = version == kMeasurementVersion ? kMeasurementKind : string_field(j, "kind");
  TuningRecord r;
  read_identity(j, r);
  if (kind == kMeasurementKind) {
    read_measurement(j, version, r);
  } else if (kind == kModelCheckKind) {
    read_verdict(j, r);
  } else if (kind == kAutoScheduleKind && version >= 3) {
    read_measurement(j, version, r);
    r.auto_schedule = true;
    r.steps = string_field(j, "steps");
    if (r.steps.empty() != r.fallback)
      throw Error("an auto_schedule record has steps exactly when it is not the fallback");
  } else {
    throw Error(fmt::format("unknown record kind \"{}\" (expected {}, {} or {})", kind,
                            kMeasurementKind, kModelCheckKind, kAutoScheduleKind));
  }
  return r;
}

RecordWriter::RecordWriter(const std::string& path) : path_(path) {
  std::error_code ec;
  if (std::filesystem::exists(path, ec) && !std::filesystem::is_regular_file(path, ec)) {
    // A FIFO would block the open; a device is no records file.
    throw Error(fmt::format("cannot append tuning records to '{}': not a regular file", path));
  }
  bool needs_newline = false;
  {
    std::ifstream in(path, std::ios::binary | std::ios::ate);
    if (in && in.tellg() > 0) {
      in.seekg(-1, std::ios::end);
      needs_newline = in.get() != '\n';
    }
  }
  out_.open(path, std::ios::app | std::ios::binary);
  if (!out_) throw Error(fmt::format("cannot open tuning records '{}' for appending", path));
  if (needs_newline) out_ << '\n' << std::flush;
}

void RecordWriter::write(const TuningRecord& r) {
  out_ << record_to_line(r) << '\n' << std::flush;
  if (!out_) throw Error(fmt::format("writing tuning records to '{}' failed", path_));
}

std::vector<TuningRecord> load_records(const std::string& path,
                                       std::vector<std::string>* warnings) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    throw Error(fmt::format("cannot open tuning records '{}'", path));
  if (!std::filesystem::is_regular_file(path, ec)) {
    throw Error(fmt::format("tuning records '{}' is not a regular file", path));
  }
  if (uintmax_t size = std::filesystem::file_size(path, ec); !ec && size > kMaxRecordsFileBytes) {
    throw Error(fmt::format("tuning records '{}' is {} bytes, more than the {} bytes Tessel reads",
                            path, size, kMaxRecordsFileBytes));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(fmt::format("cannot open tuning records '{}'", path));
  auto warn = [&](size_t line_no, const std::string& msg) {
    if (warnings) warnings->push_back(fmt::format("{}:{}: skipped {}", path, line_no, msg));
  };
  std::vector<TuningRecord> records;
  std::string line;
  bool complete = false, too_long = false;
  for (size_t line_no = 1; read_line(*in.rdbuf(), line, complete, too_long); ++line_no) {
    if (too_long) {
      warn(line_no,
           fmt::format("a line of more than {} bytes (not a tuning record)", kMaxRecordLineBytes));
      continue;
    }
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    try {
      records.push_back(record_from_line(line));
    } catch (const ForeignRecord& e) {
      warn(line_no, fmt::format("a foreign record: {}", e.what()));
    } catch (const Error& e) {
      // A last line without its newline: the writer was stopped mid-line.
      warn(line_no, complete ? fmt::format("a corrupt record: {}", e.what())
                             : std::string("a truncated last line (was the tuning run killed?)"));
    }
  }
  return records;
}

std::set<uint64_t> vetoed_configs(const std::vector<TuningRecord>& records) {
  std::set<uint64_t> fallbacks;
  for (const TuningRecord& r : records) {
    if (r.fallback) fallbacks.insert(r.config_index);
  }
  std::set<uint64_t> seen, vetoed;
  for (const TuningRecord& r : records) {
    if (r.is_verdict(VerdictKind::kVeto)) vetoed.insert(r.config_index);
    if (r.is_verdict(VerdictKind::kPin)) {
      for (uint64_t i : seen) {
        if (!fallbacks.count(i)) vetoed.insert(i);
      }
    }
    if (!r.verdict) seen.insert(r.config_index);
  }
  return vetoed;
}

Database::Database(const std::vector<TuningRecord>& records) {
  for (const TuningRecord& r : records) add(r);
}

void Database::add(const TuningRecord& r) { records_[{r.target, r.workload}].push_back(r); }

std::optional<TuningRecord> Database::best(const std::string& target, const std::string& workload,
                                           const Usable& usable) const {
  auto it = records_.find({target, workload});
  if (it == records_.end()) return std::nullopt;
  // By index, as tuning's own bookkeeping (tune.cc) knows them.
  std::set<uint64_t> vetoed = vetoed_configs(it->second);
  // Pool the records of each config, in order of first appearance; a failed one fails the config.
  std::vector<TuningRecord> pooled;
  std::vector<bool> failed;
  std::map<std::string, size_t> index;
  for (const TuningRecord& r : it->second) {
    if (r.verdict) continue;
    auto [at, fresh] = index.emplace(r.config, pooled.size());
    if (fresh) {
      pooled.push_back(r);
      failed.push_back(false);
    } else {
      TuningRecord& first = pooled[at->second];
      first.costs.insert(first.costs.end(), r.costs.begin(), r.costs.end());
      first.fallback |= r.fallback;
    }
    if (r.error != MeasureError::kNone || r.costs.empty()) failed[at->second] = true;
  }
  std::vector<ConfigStanding> standings;
  for (size_t i = 0; i < pooled.size(); ++i) {
    standings.push_back({failed[i] ? std::numeric_limits<double>::infinity() : pooled[i].cost(),
                         pooled[i].fallback, vetoed.count(pooled[i].config_index) != 0});
  }
  // Only the winners are asked whether they are usable (compile's filter parses each config):
  // ruling out an unusable winner and choosing again picks what filtering every config would.
  std::optional<size_t> chosen;
  while ((chosen = choose_config(standings)) && usable && !usable(pooled[*chosen]))
    standings[*chosen].ruled_out = true;
  if (!chosen) return std::nullopt;
  return pooled[*chosen];
}

bool Database::pinned(const std::string& target, const std::string& workload) const {
  auto it = records_.find({target, workload});
  if (it == records_.end()) return false;
  bool pin = std::any_of(it->second.begin(), it->second.end(),
                         [](const TuningRecord& r) { return r.is_verdict(VerdictKind::kPin); });
  std::optional<TuningRecord> chosen = best(target, workload);
  return pin && (!chosen || chosen->fallback);
}

std::optional<double> Database::fallback_cost(const std::string& target,
                                              const std::string& workload) const {
  auto it = records_.find({target, workload});
  if (it == records_.end()) return std::nullopt;
  std::vector<double> costs;
  for (const TuningRecord& r : it->second) {
    if (r.verdict || !r.fallback) continue;
    if (r.error != MeasureError::kNone || r.costs.empty()) return std::nullopt;
    costs.insert(costs.end(), r.costs.begin(), r.costs.end());
  }
  if (costs.empty()) return std::nullopt;
  return median_cost(costs);
}

size_t Database::count(const std::string& target, const std::string& workload) const {
  auto it = records_.find({target, workload});
  return it == records_.end() ? 0 : it->second.size();
}

std::set<uint64_t> Database::configs_measured(const std::string& target,
                                              const std::string& workload) const {
  std::set<uint64_t> out;
  auto it = records_.find({target, workload});
  if (it == records_.end()) return out;
  for (const TuningRecord& r : it->second) out.insert(r.config_index);
  return out;
}

}  // namespace tessel::autotune
