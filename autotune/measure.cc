#include "autotune/measure.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <numeric>
#include <optional>

#include "ir/error.h"
#include "ir/graph.h"
#include "runtime/tensor_data.h"

namespace tessel::autotune {

double MeasureResult::mean_cost_s() const {
  if (error != MeasureError::kNone || costs_s.empty())
    return std::numeric_limits<double>::infinity();
  return std::accumulate(costs_s.begin(), costs_s.end(), 0.0) / static_cast<double>(costs_s.size());
}

std::vector<double> MeasureResult::costs_against_baseline(double baseline_cost_s,
                                                          double reference_s) const {
  if (baseline_costs_s.empty()) return costs_s;
  if (reference_s <= 0)
    reference_s = *std::min_element(baseline_costs_s.begin(), baseline_costs_s.end());
  std::vector<double> costs = costs_s;
  for (double& c : costs) c *= baseline_cost_s / reference_s;
  return costs;
}

std::vector<double> BaselineHistory::costs(const MeasureResult& m, double baseline_cost_s) {
  if (m.baseline_costs_s.empty()) return m.costs_s;
  double fastest = *std::min_element(m.baseline_costs_s.begin(), m.baseline_costs_s.end());
  double reference = 0;
  if (fastest_.size() >= kMinHistory) {
    std::vector<double> sorted = fastest_;
    std::nth_element(sorted.begin(), sorted.begin() + static_cast<ptrdiff_t>(sorted.size() / 2),
                     sorted.end());
    double median = sorted[sorted.size() / 2];
    if (fastest > kSlowPhase * median) reference = median, ++slow_phases_;
  }
  fastest_.push_back(fastest);
  return m.costs_against_baseline(baseline_cost_s, reference);
}

const runtime::Function* BaselineKernel::build(const CandidateBuilder& build,
                                               const std::string& function_name) {
  if (!function_ && !failed_) {
    try {
      module_ = build();
      function_ = module_.get_function(function_name);
    } catch (const std::exception&) {
      failed_ = true;
    }
  }
  return get();
}

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Outputs are compared through graph::TensorData's element readers, which cover these dtypes.
bool comparable(DataType d) {
  return d.is_scalar() && ((d.is_float() && (d.bits() == 32 || d.bits() == 64)) || d.is_integer());
}

void validate(const std::vector<runtime::NDArray>& refs, const MeasureOptions& opt) {
  if (opt.number < 1 || opt.repeat < 1) {
    throw Error(fmt::format("measure: number ({}) and repeat ({}) must be at least 1", opt.number,
                            opt.repeat));
  }
  // The deadline is a nanosecond clock's time point: a timeout past ~292 years would overflow it.
  if (!(opt.timeout_s > 0 && opt.timeout_s <= kMaxTimeoutS)) {
    throw Error(fmt::format("measure: timeout_s must be positive and at most {} s, got {}",
                            kMaxTimeoutS, opt.timeout_s));
  }
  if (!(opt.min_repeat_ms >= 0) || !(opt.rtol >= 0) || !std::isfinite(opt.min_repeat_ms) ||
      !std::isfinite(opt.rtol)) {
    throw Error(
        fmt::format("measure: min_repeat_ms ({}) and rtol ({}) must be finite and not negative",
                    opt.min_repeat_ms, opt.rtol));
  }
  for (size_t o = 0; o < refs.size(); ++o) {
    if (!refs[o].defined())
      throw Error(fmt::format("measure: reference output {} is undefined", o));
    if (!comparable(refs[o].dtype())) {
      throw Error(
          fmt::format("measure: cannot compare output {} of type {}", o, refs[o].dtype().str()));
    }
  }
}

// ---------------- child: check ----------------
std::string index_str(int64_t flat, const std::vector<int64_t>& shape) {
  std::vector<int64_t> index(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = flat % shape[d];
    flat /= shape[d];
  }
  return fmt::format("[{}]", fmt::join(index, ", "));
}

std::string element_str(const graph::TensorData& t, int64_t i) {
  return t.dtype().is_float() ? fmt::format("{}", t.get_double(i))
                              : fmt::format("{}", t.get_int(i));
}

// ---------------- child: timing ----------------
// Evicts the caches by writing a buffer larger than any last-level cache.
class CacheFlusher {
 public:
  static constexpr size_t kBytes = size_t{64} << 20;
  CacheFlusher() : buffer_(std::make_unique<char[]>(kBytes)) {}
  void flush() {
    std::memset(buffer_.get(), ++fill_, kBytes);
    // Keeps the compiler from dropping the writes as dead stores.
    asm volatile("" : : "r"(buffer_.get()) : "memory");
  }

 private:
  std::unique_ptr<char[]> buffer_;
  char fill_ = 0;
};

// Seconds taken by `number` calls, cache flushes excluded.
double time_calls(const runtime::Function& f, const std::vector<runtime::Arg>& args, int number,
                  CacheFlusher* flusher) {
  if (!flusher) {
    auto t0 = Clock::now();
    for (int n = 0; n < number; ++n) f.call(args);
    return seconds_since(t0);
  }
  double total = 0;
  for (int n = 0; n < number; ++n) {
    flusher->flush();
    auto t0 = Clock::now();
    f.call(args);
    total += seconds_since(t0);
  }
  return total;
}

struct Timing {
  std::vector<double> costs_s, baseline_costs_s;
  int number = 0;
};

// Seconds per call of one measurement of `f`: `number` calls, raised until they take
// min_repeat_ms as TVM's time_evaluator does (the count the last measurement suggests, but at least
// 1.618 times the previous one). With cache flushes every call is timed alone, and reaching
// min_repeat_ms of kernel time could take thousands of flushes: `number` stays as given.
double measure_once(const runtime::Function& f, const std::vector<runtime::Arg>& args, int& number,
                    const MeasureOptions& opt, CacheFlusher* flusher) {
  constexpr int kMaxNumber = 1 << 30;
  double t = time_calls(f, args, number, flusher);
  while (!flusher && t * 1e3 < opt.min_repeat_ms && number < kMaxNumber) {
    double per_call_s = std::max(t / number, 1e-9);
    double wanted =
        std::max(std::ceil(opt.min_repeat_ms * 1e-3 / per_call_s), std::ceil(number * 1.618));
    number = static_cast<int>(std::min<double>(wanted, kMaxNumber));
    t = time_calls(f, args, number, flusher);
  }
  // Calls faster than the clock can tell still cost something: records hold positive costs.
  return std::max(t / number, 1e-9);
}

// A warm-up call of each, then `repeat` measurements of `f`, each after one of `baseline`.
Timing time_function(const runtime::Function& f, const runtime::Function* baseline,
                     const std::vector<runtime::Arg>& args, const MeasureOptions& opt) {
  std::optional<CacheFlusher> flusher;
  if (opt.flush_cache) flusher.emplace();
  CacheFlusher* flush = flusher ? &*flusher : nullptr;
  if (baseline) baseline->call(args);
  f.call(args);
  Timing timing{{}, {}, opt.number};
  int baseline_number = opt.number;
  for (int r = 0; r < opt.repeat; ++r) {
    if (baseline)
      timing.baseline_costs_s.push_back(measure_once(*baseline, args, baseline_number, opt, flush));
    timing.costs_s.push_back(measure_once(f, args, timing.number, opt, flush));
  }
  return timing;
}

// ---------------- the pipe protocol ----------------
// The child writes kBuiltMark once the build succeeds, then one result frame:
// kResultMark, error (1 byte), number (int32), cost count (uint32), costs (doubles), baseline
// cost count (uint32), baseline costs (doubles), message length (uint32), message. The mark tells
// the parent which phase a crash or a hang was in.
constexpr char kBuiltMark = 'B';
constexpr char kResultMark = 'R';
constexpr size_t kMaxMessage = 4000;

template <class T>
void put(std::string& out, T v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof v);
}

std::string encode_result(MeasureError error, const std::string& message, const Timing& timing) {
  std::string out(1, kResultMark);
  put(out, static_cast<uint8_t>(error));
  put(out, static_cast<int32_t>(timing.number));
  put(out, static_cast<uint32_t>(timing.costs_s.size()));
  for (double c : timing.costs_s) put(out, c);
  put(out, static_cast<uint32_t>(timing.baseline_costs_s.size()));
  for (double c : timing.baseline_costs_s) put(out, c);
  std::string msg = message.substr(0, kMaxMessage);
  put(out, static_cast<uint32_t>(msg.size()));
  return out + msg;
}

// Reads fixed-size fields from a received frame; ok() turns false once it runs past the end.
class Reader {
 public:
  Reader(const std::string& data, size_t pos) : data_(data), pos_(pos) {}
  template <class T>
  T get() {
    T v{};
    if (pos_ + sizeof v <= data_.size()) std::memcpy(&v, data_.data() + pos_, sizeof v);
    pos_ += sizeof v;
    return v;
  }
  std::string get_string(size_t n) {
    std::string s = pos_ + n <= data_.size() ? data_.substr(pos_, n) : "";
    pos_ += n;
    return s;
  }
  bool ok() const { return pos_ <= data_.size(); }

 private:
  const std::string& data_;
  size_t pos_;
};

struct Received {
  bool built = false;
  std::optional<MeasureResult> result;  // set once a whole frame has arrived
};

Received decode(const std::string& data) {
  Received r;
  size_t pos = 0;
  if (pos < data.size() && data[pos] == kBuiltMark) {
    r.built = true;
    ++pos;
  }
  if (pos >= data.size() || data[pos] != kResultMark) return r;
  Reader in(data, pos + 1);
  MeasureResult m;
  m.error = static_cast<MeasureError>(in.get<uint8_t>());
  m.number = in.get<int32_t>();
  uint32_t count = in.get<uint32_t>();
  if (!in.ok() || count > (1u << 20)) return r;
  for (uint32_t i = 0; i < count; ++i) m.costs_s.push_back(in.get<double>());
  uint32_t baseline_count = in.get<uint32_t>();
  if (!in.ok() || baseline_count > (1u << 20)) return r;
  for (uint32_t i = 0; i < baseline_count; ++i) m.baseline_costs_s.push_back(in.get<double>());
  uint32_t length = in.get<uint32_t>();
  if (!in.ok() || length > kMaxMessage) return r;
  m.message = in.get_string(length);
  if (in.ok()) r.result = std::move(m);
  return r;
}

void write_all(int fd, const std::string& data) {
  for (size_t done = 0; done < data.size();) {
    ssize_t n = write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the parent is gone or killed us
    done += static_cast<size_t>(n);
  }
}

std::string exception_message(std::exception_ptr e) {
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& ex) {
    return ex.what();
  } catch (...) {
    return "an exception that is not a std::exception";
  }
}

// ---------------- child ----------------
// Everything the child does; returns the result frame. Never throws.
std::string run_child(int fd, const CandidateBuilder& build, const std::string& function_name,
                      const std::vector<runtime::NDArray>& inputs,
                      const std::vector<runtime::NDArray>& refs, const MeasureOptions& opt,
                      const runtime::Function* baseline) {
  runtime::Module module;
  runtime::Function f;
  try {
    module = build();
    if (!module.defined()) throw Error("the candidate builder returned no module");
    f = module.get_function(function_name);
  } catch (...) {
    return encode_result(MeasureError::kBuildError, exception_message(std::current_exception()),
                         {});
  }
  write_all(fd, std::string(1, kBuiltMark));
  try {
    std::vector<runtime::Arg> args(inputs.begin(), inputs.end());
    std::vector<runtime::NDArray> outputs;
    for (const runtime::NDArray& ref : refs) {
      outputs.push_back(runtime::NDArray::empty(ref.shape(), ref.dtype()));
      std::memset(outputs.back().raw_data(), 0xFF, outputs.back().nbytes());
      args.emplace_back(outputs.back());
    }
    f.call(args);
    for (size_t o = 0; o < refs.size(); ++o) {
      std::string mismatch =
          compare_output(fmt::format("output {}", o), outputs[o], refs[o], opt.rtol);
      if (!mismatch.empty()) return encode_result(MeasureError::kWrongAnswer, mismatch, {});
    }
    return encode_result(MeasureError::kNone, "", time_function(f, baseline, args, opt));
  } catch (...) {
    return encode_result(MeasureError::kRuntimeError, exception_message(std::current_exception()),
                         {});
  }
}

// ---------------- parent ----------------
// Appends what the child sends until a whole result has arrived, the pipe closes (true) or the
// deadline passes (false).
bool receive(int fd, Clock::time_point deadline, std::string& data) {
  char buf[4096];
  for (;;) {
    if (decode(data).result) return true;
    auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return false;
    pollfd pfd{fd, POLLIN, 0};
    int ready = poll(
        &pfd, 1, static_cast<int>(std::min<int64_t>(left + 1, std::numeric_limits<int>::max())));
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) return true;  // reported as a child without a result
    if (ready == 0) continue;    // the deadline check above decides
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return true;
    data.append(buf, static_cast<size_t>(n));
  }
}

int wait_for(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

MeasureResult error_result(MeasureError error, std::string message) {
  MeasureResult r;
  r.error = error;
  r.message = std::move(message);
  return r;
}

}  // namespace

std::string compare_output(const std::string& what, const runtime::NDArray& got_array,
                           const runtime::NDArray& want_array, double rtol, double* max_diff) {
  graph::TensorData got = runtime::to_tensor_data(got_array),
                    want = runtime::to_tensor_data(want_array);
  int64_t bad = 0, first_bad = -1;
  for (int64_t i = 0; i < got.numel(); ++i) {
    bool ok;
    if (got.dtype().is_float()) {
      double x = got.get_double(i), y = want.get_double(i);
      ok = x == y || (std::isnan(x) && std::isnan(y)) ||
           std::abs(x - y) <= rtol * std::max(1.0, std::abs(y));
      if (ok && x != y && max_diff) *max_diff = std::max(*max_diff, std::abs(x - y));
    } else {
      ok = got.get_int(i) == want.get_int(i);
    }
    if (ok) continue;
    if (bad++ == 0) first_bad = i;
  }
  if (bad == 0) return "";
  return fmt::format(
      "{} ({} [{}]): {} of {} elements differ (rtol {}); the first at {}: got {}, expected {}",
      what, got.dtype().str(), fmt::join(got.shape(), ", "), bad, got.numel(), rtol,
      index_str(first_bad, got.shape()), element_str(got, first_bad), element_str(want, first_bad));
}

MeasureResult measure(const CandidateBuilder& build, const std::string& function_name,
                      const std::vector<runtime::NDArray>& inputs,
                      const std::vector<runtime::NDArray>& reference_outputs,
                      const MeasureOptions& opt, const runtime::Function* baseline) {
  validate(reference_outputs, opt);
  auto start = Clock::now();
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    return error_result(MeasureError::kRuntimeError,
                        fmt::format("pipe() failed: {}", std::strerror(errno)));
  }
  pid_t pid = fork();
  if (pid < 0) {
    int err = errno;
    close(fds[0]);
    close(fds[1]);
    return error_result(MeasureError::kRuntimeError,
                        fmt::format("fork() failed: {}", std::strerror(err)));
  }
  if (pid == 0) {
    close(fds[0]);
    write_all(fds[1],
              run_child(fds[1], build, function_name, inputs, reference_outputs, opt, baseline));
    _exit(0);  // no atexit handlers or static destructors: they belong to the parent
  }
  close(fds[1]);
  std::string data;
  auto deadline = start + std::chrono::duration_cast<Clock::duration>(
                              std::chrono::duration<double>(opt.timeout_s));
  bool finished = receive(fds[0], deadline, data);
  close(fds[0]);
  if (!finished) kill(pid, SIGKILL);
  int status = wait_for(pid);
  Received got = decode(data);
  const char* phase = got.built ? "while running" : "while building";

  MeasureResult result;
  if (!finished) {
    result = error_result(MeasureError::kTimeout,
                          fmt::format("timed out after {} s {} (the candidate process was killed)",
                                      opt.timeout_s, phase));
  } else if (got.result) {
    result = std::move(*got.result);
  } else if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    result = error_result(
        MeasureError::kRuntimeError,
        fmt::format("the candidate process died of signal {} ({}) {}", sig, strsignal(sig), phase));
  } else {
    result =
        error_result(MeasureError::kRuntimeError,
                     fmt::format("the candidate process exited with status {} without a result {}",
                                 WIFEXITED(status) ? WEXITSTATUS(status) : -1, phase));
  }
  result.elapsed_s = seconds_since(start);
  return result;
}

}  // namespace tessel::autotune
