#include "driver/check_tuned_model.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "autotune/measure.h"
#include "autotune/records.h"
#include "ir/error.h"
#include "runtime/fill.h"

namespace tessel {

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// Per-round means of one build: end to end, and per kernel (by plan position).
struct RoundTimes {
  std::vector<double> e2e;
  std::vector<std::vector<double>> kernel;
};

void time_round(CompiledModel& m, int runs, RoundTimes& t) {
  auto t0 = Clock::now();
  for (int r = 0; r < runs; ++r) m.run();
  t.e2e.push_back(ms_since(t0) / runs);
  t.kernel.resize(m.plan().kernels.size());
  std::vector<double> sum(t.kernel.size(), 0);
  for (int r = 0; r < runs; ++r) {
    std::vector<runtime::KernelTime> times = m.run_profiled();
    for (size_t k = 0; k < times.size(); ++k) sum[k] += times[k].ms;
  }
  for (size_t k = 0; k < sum.size(); ++k) t.kernel[k].push_back(sum[k] / runs);
}

// Each round's untuned / tuned.
std::vector<double> round_ratios(const std::vector<double>& untuned,
                                 const std::vector<double>& tuned) {
  std::vector<double> ratios;
  for (size_t r = 0; r < untuned.size(); ++r) ratios.push_back(untuned[r] / tuned[r]);
  return ratios;
}

size_t kernel_position(const CompiledModel& m, const std::string& name) {
  const auto& kernels = m.plan().kernels;
  auto it = std::find_if(kernels.begin(), kernels.end(),
                         [&](const runtime::KernelEntry& k) { return k.name == name; });
  TESSEL_ICHECK(it != kernels.end()) << "no kernel " << name << " in the executor plan";
  return static_cast<size_t>(it - kernels.begin());
}

// The largest difference between the builds' outputs; Error naming the output where they disagree.
double compare_outputs(const CompiledModel& untuned, const CompiledModel& tuned) {
  double worst = 0;
  for (int i = 0; i < untuned.num_outputs(); ++i) {
    const std::string& name = untuned.output_name(i);
    std::string mismatch =
        autotune::compare_output(fmt::format("output '{}'", name), tuned.get_output(name),
                                 untuned.get_output(i), 1e-3, &worst);
    if (!mismatch.empty()) {
      throw Error(fmt::format(
          "the tuned build differs from the untuned build: {}; a record's config computes wrong "
          "results here",
          mismatch));
    }
  }
  return worst;
}

}  // namespace

ModelCheck check_tuned_model(const std::string& onnx_path, const CompileOptions& opt,
                             const ModelCheckOptions& check) {
  if (opt.tuning_records.empty())
    throw Error("check_tuned_model: no tuning records to check (opt.tuning_records)");
  if (check.rounds < 1)
    throw Error(fmt::format("check_tuned_model: rounds must be at least 1, got {}", check.rounds));
  CompileOptions untuned_opt = opt;
  untuned_opt.tuning_records.clear();
  CompiledModel untuned = compile(onnx_path, untuned_opt);
  CompiledModel tuned = compile(onnx_path, opt);

  for (int i = 0; i < untuned.num_inputs(); ++i) {
    runtime::NDArray x = untuned.executor().get_input(i).copy();
    try {
      runtime::fill(x, "random", 42u + static_cast<unsigned>(i));
    } catch (const Error& e) {
      throw Error(fmt::format("input '{}': {}", untuned.input_name(i), e.what()));
    }
    untuned.set_input(i, x);
    tuned.set_input(untuned.input_name(i), x);
  }
  untuned.run();
  tuned.run();
  ModelCheck out;
  out.target = tuned.target().str();
  out.max_output_diff = compare_outputs(untuned, tuned);

  auto t0 = Clock::now();
  for (int r = 0; r < 3; ++r) untuned.run();
  double per_run_ms = std::max(1e-6, ms_since(t0) / 3);
  out.rounds = check.rounds;
  out.runs_per_round = std::max(1, static_cast<int>(std::ceil(check.min_batch_ms / per_run_ms)));
  RoundTimes u, t;
  for (int r = 0; r < check.rounds; ++r) {
    // Alternate which build goes first, so that neither always follows the other.
    time_round(r % 2 ? tuned : untuned, out.runs_per_round, r % 2 ? t : u);
    time_round(r % 2 ? untuned : tuned, out.runs_per_round, r % 2 ? u : t);
  }
  out.untuned_ms = autotune::median_cost(u.e2e);
  out.tuned_ms = autotune::median_cost(t.e2e);
  out.speedup = autotune::median_cost(round_ratios(u.e2e, t.e2e));

  // Both builds have the same fused groups; records change a kernel's config, and a conv's layout.
  const std::vector<TuningSummary::Kernel>& uk = untuned.tuning().kernels;
  const std::vector<TuningSummary::Kernel>& tk = tuned.tuning().kernels;
  TESSEL_ICHECK(uk.size() == tk.size())
      << "the tuned build has " << tk.size() << " templated kernels, the untuned " << uk.size();
  std::map<std::string, size_t> position;                   // workload -> index into out.workloads
  std::vector<std::vector<double>> untuned_sum, tuned_sum;  // per workload, per round
  for (size_t i = 0; i < tk.size(); ++i) {
    if (!tk[i].tuned || (tk[i].workload == uk[i].workload && tk[i].config == uk[i].config))
      continue;
    auto [at, fresh] = position.emplace(tk[i].workload, out.workloads.size());
    if (fresh) {
      WorkloadCheck& w = out.workloads.emplace_back();
      w.workload = tk[i].workload, w.untuned_workload = uk[i].workload;
      w.config = tk[i].config, w.untuned_config = uk[i].config;
      w.untuned_config_index = uk[i].config_index;
      untuned_sum.emplace_back(check.rounds, 0.0);
      tuned_sum.emplace_back(check.rounds, 0.0);
    }
    WorkloadCheck& w = out.workloads[at->second];
    w.untuned_kernels.push_back(uk[i].name);
    w.tuned_kernels.push_back(tk[i].name);
    const std::vector<double>& ut = u.kernel[kernel_position(untuned, uk[i].name)];
    const std::vector<double>& tt = t.kernel[kernel_position(tuned, tk[i].name)];
    for (int r = 0; r < check.rounds; ++r) {
      untuned_sum[at->second][r] += ut[r];
      tuned_sum[at->second][r] += tt[r];
    }
  }
  for (size_t w = 0; w < out.workloads.size(); ++w) {
    out.workloads[w].untuned_ms = autotune::median_cost(untuned_sum[w]);
    out.workloads[w].tuned_ms = autotune::median_cost(tuned_sum[w]);
    out.workloads[w].round_speedups = round_ratios(untuned_sum[w], tuned_sum[w]);
    out.workloads[w].speedup = autotune::median_cost(out.workloads[w].round_speedups);
  }
  return out;
}

std::set<std::string> ModelCheckPasses::judge(ModelCheck& check) {
  ++pass_;
  std::set<std::string> pin;
  for (WorkloadCheck& w : check.workloads) {
    std::vector<double>& all = rounds_[w.workload + w.config];
    all.insert(all.end(), w.round_speedups.begin(), w.round_speedups.end());
    w.round_speedups = all;
    w.speedup = autotune::median_cost(all);
    if (last_pass() || vetoed_.count(w.judged_as())) pin.insert(w.judged_as());
  }
  for (const WorkloadCheck& w : check.workloads) {
    if (!w.tuned_faster()) vetoed_.insert(w.judged_as());
  }
  return pin;
}

int veto_slower_workloads(const ModelCheck& check, const std::string& records_path,
                          const std::set<std::string>& pin, bool every) {
  std::vector<autotune::TuningRecord> records = autotune::load_records(records_path, nullptr);
  autotune::Database db(records);
  // Every verdict first, then the writes: an error leaves the file as it was.
  std::vector<autotune::TuningRecord> verdicts;
  int judged = 0;
  for (const WorkloadCheck& k : check.workloads) {
    if (k.tuned_faster() && !every) continue;
    ++judged;
    // The checked config's records, pooled: compile applied them, and the file may not have
    // vetoed them or recorded a failure since. Not Database::best's own pick: compile passed over
    // the records that the template refuses now, which the records alone do not tell.
    nlohmann::json checked = nlohmann::json::parse(k.config);
    std::optional<autotune::TuningRecord> applied =
        db.best(check.target, k.workload, [&](const autotune::TuningRecord& r) {
          return nlohmann::json::parse(r.config) == checked;
        });
    if (!applied) {
      throw Error(fmt::format(
          "{} changed during the model check: the config checked for workload {} has no usable "
          "record any more (vetoed, or a failed measurement)",
          records_path, k.workload));
    }
    auto verdict = [&](const autotune::TuningRecord& on, autotune::VerdictKind kind) {
      verdicts.push_back(autotune::verdict_record(
          on, {kind, k.tuned_ms, k.untuned_ms, k.speedup, static_cast<int>(k.round_speedups.size()),
               k.tuned_kernels}));
    };
    if (!pin.count(k.judged_as())) {
      verdict(*applied, autotune::VerdictKind::kVeto);
      continue;
    }
    // A pin rules out what was measured before it whatever config it names; it names the fallback
    // where it can: the fallback's measurement, or the untuned kernel's config (the rule's form).
    std::set<std::string> pinned = {k.workload, k.judged_as()};
    for (const std::string& workload : pinned) {
      auto fallback =
          std::find_if(records.begin(), records.end(), [&](const autotune::TuningRecord& r) {
            return r.target == check.target && r.workload == workload && r.fallback;
          });
      autotune::TuningRecord on = fallback != records.end() ? *fallback : *applied;
      if (fallback == records.end() && workload == k.untuned_workload) {
        on.workload = workload;
        on.config = k.untuned_config;
        on.config_index = k.untuned_config_index;
        on.fallback = true;
      }
      verdict(on, autotune::VerdictKind::kPin);
    }
  }
  autotune::RecordWriter writer(records_path);
  for (const autotune::TuningRecord& r : verdicts) writer.write(r);
  return judged;
}

}  // namespace tessel
