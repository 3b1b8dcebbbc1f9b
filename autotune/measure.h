// Isolated, checked measurement of one tuning candidate (AutoTVM's LocalBuilder + LocalRunner in
// one step). The candidate is built, checked and timed in a forked child process, so a build that
// hangs or crashes LLVM, a kernel that segfaults or loops forever, costs one result and never the
// tuner. The timeout bounds the whole child: build, check run and timing.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "autotune/records.h"
#include "runtime/module.h"
#include "runtime/ndarray.h"

namespace tessel::autotune {

// The longest timeout a measurement takes (11.6 days), far from overflowing its clock's deadline.
constexpr double kMaxTimeoutS = 1e6;

// Defaults are AutoTVM's LocalRunner (timeout=10, number=4, repeat=3, min_repeat_ms=0).
struct MeasureOptions {
  int number = 4;            // runs per measurement (raised to reach min_repeat_ms)
  int repeat = 3;            // measurements, one cost each
  double min_repeat_ms = 0;  // a measurement shorter than this is redone with a larger number
  double timeout_s = 10;     // for the whole child process; at most kMaxTimeoutS
  // Write a 64 MiB buffer before each timed run (each run is timed alone; min_repeat_ms is then
  // not applied).
  bool flush_cache = false;
  // An output element matches when |got - want| <= rtol * max(1, |want|): relative, but absolute
  // below 1, so that results near zero after cancellation are not rejected. Integers and bools
  // must be equal; NaN matches NaN.
  double rtol = 1e-4;
};

struct MeasureResult {
  MeasureError error = MeasureError::kNone;
  std::string message;          // empty for kNone
  std::vector<double> costs_s;  // kNone: `repeat` mean seconds per run; empty on error
  int number = 0;               // runs per measurement actually used (kNone only)
  // kNone with a baseline: its mean seconds per run, one per measurement, each timed just before
  // the candidate's measurement of the same position.
  std::vector<double> baseline_costs_s;
  double elapsed_s = 0;  // wall time of the whole measurement, build included (AutoTVM's all_cost)
  // The mean of costs_s; +infinity on error, so that errors sort last.
  double mean_cost_s() const;
  // costs_s in the time of a baseline whose cost is `baseline_cost_s` (a tuner's fallback, timed
  // in turns with the candidate): each cost over the fastest of baseline_costs_s, times
  // baseline_cost_s. The fastest, because a hiccup during one of the baseline's measurements (up to
  // 3x its time on a shared VM) would otherwise pass for a candidate that much faster. costs_s
  // as they are without baseline times.
  // With `reference_s` > 0, over that time instead of the fastest of baseline_costs_s
  // (BaselineHistory).
  std::vector<double> costs_against_baseline(double baseline_cost_s, double reference_s = 0) const;
};

// The baseline's fastest time in each of one task's measurements, to tell a slow phase of the
// machine that slowed the baseline more than the candidate. On the 2-core VM such phases last a
// batch or more: a 3 us parallel fallback ran at 9-10 us in 9 consecutive children of 49 while
// the candidates beside it slowed 1.3x, so those candidates passed for 2-3x faster than it and one
// was chosen, which ran 2.7x slower than the fallback in the model's build (docs/autotune.md).
class BaselineHistory {
 public:
  // A measurement's costs in the time of the baseline's cost `baseline_cost_s`
  // (MeasureResult::costs_against_baseline): over the baseline's fastest time in its child, unless
  // that is over kSlowPhase times the median of the earlier measurements' (once there are
  // kMinHistory): then over that median, as the child's time no longer tells the candidate's
  // speed relative to the baseline. Adds the measurement's baseline time to the history.
  std::vector<double> costs(const MeasureResult& m, double baseline_cost_s);
  int slow_phases() const { return slow_phases_; }  // measurements costed over the median

  static constexpr double kSlowPhase = 1.5;
  static constexpr size_t kMinHistory = 4;

 private:
  std::vector<double> fastest_;
  int slow_phases_ = 0;
};

// Builds the candidate's kernel, e.g. by lowering and JIT-compiling a te schedule with
// tessel::build (codegen/build.h). It runs in the child only. A tessel::Error (or any other
// exception) it throws is a kBuildError carrying its message.
using CandidateBuilder = std::function<runtime::Module()>;

// A kernel built once in the tuning process (a task's fallback) to be timed in turns with its
// candidates: measure's `baseline`, which each measuring child inherits.
class BaselineKernel {
 public:
  // `function_name` of the module `build` returns, built on the first call; null, then and after,
  // when that threw (the fallback built in a child to be measured at all, but not here).
  const runtime::Function* build(const CandidateBuilder& build, const std::string& function_name);
  // The kernel once built; null before, or when it did not build.
  const runtime::Function* get() const { return function_ ? &*function_ : nullptr; }

 private:
  runtime::Module module_;
  std::optional<runtime::Function> function_;
  bool failed_ = false;
};

// Measures `function_name` of the module that `build` returns. The function is called with the
// inputs followed by one output array per reference output, in that order: `inputs` are the
// leading arguments in the function's argument order and the outputs the trailing ones (as
// tessel::build's args list {A, B, C} puts C last). Output arrays are allocated in the child with
// the references' shapes and dtypes, poisoned (all bytes 0xFF) so that unwritten elements show,
// and compared after one check run; the kernel may write to its inputs without harm, as it only
// touches the child's copy.
//
// Outcomes: kBuildError (`build` threw), kRuntimeError (the function threw, or the child died by
// a signal or exited without a result; the message names the signal and the phase), kWrongAnswer
// (the message names the output, the first bad element's index and both values, and how many
// differ), kTimeout (the child was killed with SIGKILL after opt.timeout_s), kNone with the costs.
// Throws tessel::Error before forking for invalid options (number, repeat < 1; timeout_s not in
// (0, kMaxTimeoutS]; negative or non-finite min_repeat_ms or rtol) or a reference of a dtype it
// cannot compare; when fork() or pipe() fail, returns kRuntimeError. Call it from one thread at a
// time, outside parallel tasks: other threads holding locks at fork() time (e.g. inside the JIT)
// could hang the child, which then times out.
// "" when `got` matches `want`: each element within rtol * max(1, |want|) (NaN matches NaN;
// integers exactly); else what differs, naming `what` ("output 0"), how many elements differ, the
// first one's index and both values. `max_diff`, when given, gets the largest |got - want|.
std::string compare_output(const std::string& what, const runtime::NDArray& got,
                           const runtime::NDArray& want, double rtol, double* max_diff = nullptr);

// `baseline`, when given (a kernel of the same signature built before the call, such as the
// compiler's own schedule of the candidate's group: the child inherits it), is timed in turns with
// the candidate, one of its measurements before each of the candidate's, with the same options and
// arguments. On a machine whose speed drifts (a shared VM's slow phases last seconds), the ratio of
// the two is steadier than either cost.
MeasureResult measure(const CandidateBuilder& build, const std::string& function_name,
                      const std::vector<runtime::NDArray>& inputs,
                      const std::vector<runtime::NDArray>& reference_outputs,
                      const MeasureOptions& opt, const runtime::Function* baseline = nullptr);

}  // namespace tessel::autotune
