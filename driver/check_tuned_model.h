// The tuned model against the untuned one, inside the model: tuning measures each kernel alone,
// and a config that wins there can lose a few percent between its neighbours (other cache and
// thread-pool states). tessel tune runs this check after tuning, vetoes the configs that do not
// clearly win, and gives a workload its untuned kernel back when its next best does not either.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "autotune/records.h"
#include "driver/compile.h"

namespace tessel {

struct ModelCheckOptions {
  int rounds = 20;           // alternating rounds of runs of each build
  double min_batch_ms = 10;  // each build runs at least this long per round
};

// A config is kept only when the model runs its workload at least this much faster. Without a
// margin, configs of 1.00-1.01x in one pass were kept and ran 6% slower in the next: the model
// came out 12% slower than untuned after a 20-minute tune of resnet_mini (docs/autotune.md).
constexpr double kMinGainInModel = 0.02;

// A workload whose config or conv layout the records changed, timed in both builds over all its
// kernels (one config applies to each kernel of the workload, so it is judged on their sum).
struct WorkloadCheck {
  std::vector<std::string> untuned_kernels, tuned_kernels;  // the kernel functions
  std::string workload;  // the tuned kernels' (the conv's other layout, when records chose it)
  std::string untuned_workload;  // the untuned kernels' (the layout of the rule)
  std::string config;            // the tuned kernels' (JSON)
  std::string untuned_config;    // the untuned kernels': the fallback (JSON)
  uint64_t untuned_config_index = 0;
  double untuned_ms = 0, tuned_ms = 0;  // per run: the median over rounds of each round's mean
  // Each round's untuned / tuned time: a slow phase of the machine that spans a round slows both
  // builds alike, and cancels out.
  std::vector<double> round_speedups;
  double speedup = 0;  // the median of round_speedups (of several checks' rounds, when pooled)
  bool tuned_faster() const { return speedup >= 1 + kMinGainInModel; }
  // What vetoes and pins are kept by: the untuned workload (a conv's two layouts are judged
  // together), but an auto-scheduled kernel's own workload, as its untuned one is the template's
  // workload that other groups share.
  const std::string& judged_as() const {
    return workload.starts_with(autotune::kAutoWorkloadPrefix) ? workload : untuned_workload;
  }
};

struct ModelCheck {
  std::string target;                   // Target::str(), as records name it
  double untuned_ms = 0, tuned_ms = 0;  // end to end per run: the median over rounds
  double speedup = 0;                   // end to end, as WorkloadCheck::speedup
  int rounds = 0, runs_per_round = 0;
  double max_output_diff = 0;            // between the builds' outputs on the same random inputs
  std::vector<WorkloadCheck> workloads;  // in order of first kernel
};

// Compiles `onnx_path` with opt.tuning_records and without, runs both builds on the same random
// inputs, and times them, end to end and per kernel, in alternating rounds in this process. Error
// when opt.tuning_records is empty, or when the builds' outputs disagree (a bug: every config was
// checked against a reference while tuning), naming the output.
ModelCheck check_tuned_model(const std::string& onnx_path, const CompileOptions& opt,
                             const ModelCheckOptions& check = {});

// The verdicts over tessel tune's passes of the model check. A workload is judged on the rounds
// of every pass that checked the same config; a workload (by its untuned workload, the same in
// either layout) vetoed in an earlier pass, or any on the last pass, is to be pinned.
class ModelCheckPasses {
 public:
  explicit ModelCheckPasses(int max_passes) : max_passes_(max_passes) {}
  // Replaces each workload's round_speedups and speedup in `check` with those pooled over the
  // passes so far, and returns the workloads to pin, by WorkloadCheck::judged_as
  // (veto_slower_workloads's `pin`).
  // Call once per pass.
  std::set<std::string> judge(ModelCheck& check);
  int pass() const { return pass_; }
  bool last_pass() const { return pass_ >= max_passes_; }

 private:
  int max_passes_, pass_ = 0;
  std::map<std::string, std::vector<double>> rounds_;  // workload + config -> its rounds' speed-ups
  std::set<std::string> vetoed_;  // untuned workloads vetoed in an earlier pass
};

// For each workload of `check` that was not faster tuned (tuned_faster), appends to `records_path`
// either a veto of its config (a model-check record, autotune::VerdictKind::kVeto), so that
// compile takes the workload's next best config; or, when its untuned workload is in `pin`, pins
// (kPin) for both its tuned and untuned workloads, so that compile gives it the untuned kernel
// back: its fallback config in the rule's layout. Each verdict holds the workload's times, speed-up
// and rounds. Returns how many workloads. Error, before anything is written, when the file changed
// since the check. `every`: judges every workload of `check` so, the faster ones too (the build
// ran slower end to end than the untuned one).
int veto_slower_workloads(const ModelCheck& check, const std::string& records_path,
                          const std::set<std::string>& pin = {}, bool every = false);

}  // namespace tessel
