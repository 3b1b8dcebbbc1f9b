// The tuned model against the untuned one, inside the model: tuning measures each kernel alone,
// and a config that wins there can lose a few percent between its neighbours (other cache and
// thread-pool states). tessel tune runs this check after tuning and vetoes the configs that lose.
#pragma once

#include <string>
#include <vector>

#include "driver/compile.h"

namespace tessel {

struct ModelCheckOptions {
  int rounds = 20;           // alternating rounds of runs of each build
  double min_batch_ms = 10;  // each build runs at least this long per round
};

// A workload whose config or conv layout the records changed, timed in both builds over all its
// kernels (one config applies to each kernel of the workload, so it is judged on their sum).
struct WorkloadCheck {
  std::vector<std::string> untuned_kernels, tuned_kernels;  // the kernel functions
  std::string workload;                  // the tuned kernels' (the conv's other layout, when records chose it)
  std::string config;                    // the tuned kernels' (JSON)
  double untuned_ms = 0, tuned_ms = 0;   // per run: the median over rounds of each round's mean
  // untuned / tuned time, the median over rounds of each round's ratio: a slow phase of the
  // machine that spans a round slows both builds alike, and cancels out.
  double speedup = 0;
  bool tuned_faster() const { return speedup > 1; }
};

struct ModelCheck {
  std::string target;                   // Target::str(), as records name it
  double untuned_ms = 0, tuned_ms = 0;  // end to end per run: the median over rounds
  double speedup = 0;                   // end to end, as WorkloadCheck::speedup
  int rounds = 0, runs_per_round = 0;
  double max_output_diff = 0;           // between the builds' outputs on the same random inputs
  std::vector<WorkloadCheck> workloads;  // in order of first kernel
};

// Compiles `onnx_path` with opt.tuning_records and without, runs both builds on the same random
// inputs, and times them, end to end and per kernel, in alternating rounds in this process. Error
// when opt.tuning_records is empty, or when the builds' outputs disagree (a bug: every config was
// checked against a reference while tuning), naming the output.
ModelCheck check_tuned_model(const std::string& onnx_path, const CompileOptions& opt,
                             const ModelCheckOptions& check = {});

// Appends a "slower_in_model" record (autotune::MeasureError::kSlowerInModel) to `records_path`
// for each workload of `check` that was not faster tuned, so that compile passes over its config
// from now on; returns how many.
int veto_slower_workloads(const ModelCheck& check, const std::string& records_path);

}  // namespace tessel
