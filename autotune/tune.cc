#include "autotune/tune.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include "autotune/kernel_data.h"
#include "autotune/tuner.h"
#include "codegen/build.h"
#include "ir/error.h"
#include "passes/lower_to_te.h"
#include "te/lower.h"

namespace tessel::autotune {

namespace {

using Clock = std::chrono::steady_clock;
constexpr double kInf = std::numeric_limits<double>::infinity();

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

void validate(const TuneOptions& opt) {
  if (opt.trials < 1)
    throw Error(fmt::format("tune: trials must be at least 1, got {}", opt.trials));
  if (opt.batch_size < 1)
    throw Error(fmt::format("tune: batch_size must be at least 1, got {}", opt.batch_size));
  if (opt.early_stopping < 0)
    throw Error(
        fmt::format("tune: early_stopping must not be negative, got {}", opt.early_stopping));
  if (!(opt.time_budget_s >= 0) || !std::isfinite(opt.time_budget_s)) {
    throw Error(fmt::format("tune: the time budget must be a finite number of seconds >= 0, got {}",
                            opt.time_budget_s));
  }
  if (opt.control_every < 0)
    throw Error(fmt::format("tune: control_every must not be negative, got {}", opt.control_every));
  if (opt.remeasure_top < 0 || opt.remeasure_rounds < 0) {
    throw Error(
        fmt::format("tune: remeasure_top ({}) and remeasure_rounds ({}) must not be negative",
                    opt.remeasure_top, opt.remeasure_rounds));
  }
  if (opt.records_path.empty())
    throw Error("tune: a records file is needed (records_path, --output)");
  check_tuner_name(opt.tuner);
}

// One task's kernel, ready to measure under any config of its space.
class TaskBench {
 public:
  TaskBench(const graph::Graph& g, const passes::FusedGroup& group, int group_index,
            const Target& target, uint64_t seed)
      : g_(g), group_(group), index_(group_index), target_(target), cpu_(CpuModel::of(target)) {
    passes::LoweredGroup fallback = passes::lower_to_te(g, group, index_, cpu_);
    if (!fallback.space) {
      throw InternalError(fmt::format("{}: a tunable kernel without a schedule template",
                                      g.nodes[group.master].describe()));
    }
    space_ = *fallback.space;
    name_ = fallback.name;
    data_ = kernel_data(g, group, fallback, seed);
  }

  const topi::ConfigSpace& space() const { return space_; }

  MeasureResult measure(const topi::ConfigEntity& config, const topi::ConfigEntity* baseline,
                        const MeasureOptions& opt) {
    CandidateBuilder build = [this, &config] { return build_config(config); };
    // The baseline is the task's fallback, the same config on every call: built here once.
    const runtime::Function* fallback =
        baseline ? baseline_.build([&] { return build_config(*baseline); }, name_) : nullptr;
    return autotune::measure(build, name_, data_.inputs, data_.references, opt, fallback);
  }

 private:
  runtime::Module build_config(const topi::ConfigEntity& config) const {
    passes::LoweredGroup lg = passes::lower_to_te(g_, group_, index_, cpu_,
                                                  [&](const topi::ConfigSpace&) { return config; });
    // Through the kernel cache: a config measured again (the model check, a resumed run) is not
    // compiled again.
    return tessel::build_cached(
        {te::lower(lg.schedule, lg.args, lg.name, tessel::pipeline_options(cpu_))}, target_);
  }

  const graph::Graph& g_;
  const passes::FusedGroup& group_;
  int index_;
  const Target& target_;
  CpuModel cpu_;
  topi::ConfigSpace space_;
  std::string name_;
  KernelData data_;
  BaselineKernel baseline_;
};

// Prior successful records of other workloads of the same op whose configs fit `space` (the same
// knobs, and tiles this shape also has), scored against their workload's best.
void transfer(const std::vector<TuningRecord>& prior, const std::string& target, const Task& task,
              const topi::ConfigSpace& space, Tuner& tuner) {
  std::map<std::string, double> best;
  std::vector<std::pair<const TuningRecord*, topi::ConfigEntity>> usable;
  for (const TuningRecord& r : prior) {
    if (r.target != target || r.workload == task.workload ||
        r.workload.rfind(task.op + "|", 0) != 0)
      continue;
    if (r.verdict || r.error != MeasureError::kNone) continue;
    try {
      usable.emplace_back(
          &r, topi::ConfigEntity::from_json(space, r.config, /*match_split_inners=*/true));
      auto [it, fresh] = best.emplace(r.workload, r.cost());
      if (!fresh) it->second = std::min(it->second, r.cost());
    } catch (const Error&) {  // another template shape (values outside this space): not comparable
    }
  }
  if (usable.empty()) return;
  std::vector<std::vector<double>> features;
  std::vector<double> scores;
  for (const auto& [r, e] : usable) {
    features.push_back(config_features(e));
    scores.push_back(best.at(r->workload) / r->cost());
  }
  tuner.add_transfer(features, scores);
}

TuningRecord record_of(const std::string& target, const Task& task,
                       const topi::ConfigEntity& config, const MeasureResult& m, bool fallback) {
  TuningRecord r;
  r.fallback = fallback;
  r.target = target;
  r.workload = task.workload;
  r.config = config.to_json();
  r.config_index = config.index();
  r.costs = m.costs_s;
  r.error = m.error;
  r.error_msg = m.message;
  r.timestamp = unix_time_now();
  return r;
}

// The records of `task`'s workload for `target` whose config is a point of `space`, each with it.
// The others are of another space: the template changed since, or (a corrupt record) the
// config_index is not its config's index, which would veto or skip the wrong config.
std::vector<std::pair<TuningRecord, topi::ConfigEntity>> records_in_space(
    const std::vector<TuningRecord>& records, const std::string& target, const Task& task,
    const topi::ConfigSpace& space) {
  std::vector<std::pair<TuningRecord, topi::ConfigEntity>> out;
  for (const TuningRecord& r : records) {
    if (r.target != target || r.workload != task.workload) continue;
    try {
      topi::ConfigEntity config = topi::ConfigEntity::from_json(space, r.config);
      if (config.index() == r.config_index) out.emplace_back(r, std::move(config));
    } catch (const Error&) {  // values outside this space
    }
  }
  return out;
}

double gflops(double flops, double cost_s) {
  return std::isfinite(cost_s) && cost_s > 0 ? flops / cost_s / 1e9 : 0;
}

// Every measurement of a task's configs so far, pooled per config (resumed records, trials and
// re-measurements); a config that failed once counts as failed.
class Measured {
 public:
  // Adds a measurement; returns the config's pooled median cost (infinity once it failed).
  double add(const topi::ConfigEntity& config, const std::vector<double>& costs, bool failed) {
    auto [it, fresh] = configs_.try_emplace(config.index(), Pooled{config, {}, false, false});
    it->second.failed |= failed;
    it->second.costs.insert(it->second.costs.end(), costs.begin(), costs.end());
    if (fresh) order_.push_back(config.index());
    return cost(config.index());
  }
  double cost(uint64_t index) const {
    auto it = configs_.find(index);
    if (it == configs_.end() || it->second.failed) return kInf;
    return median_cost(it->second.costs);
  }
  bool has(uint64_t index) const { return configs_.count(index) != 0; }
  // A config the model check ruled out (not clearly faster in the model than the untuned kernel,
  // or measured before a pin): measured, but never the best.
  void veto(const topi::ConfigEntity& config) {
    auto [it, fresh] = configs_.try_emplace(config.index(), Pooled{config, {}, false, true});
    it->second.vetoed = true;
    if (fresh) order_.push_back(config.index());
  }
  bool vetoed(uint64_t index) const {
    auto it = configs_.find(index);
    return it != configs_.end() && it->second.vetoed;
  }
  // The measured configs, in order of first measurement.
  std::vector<topi::ConfigEntity> configs() const {
    std::vector<topi::ConfigEntity> out;
    for (uint64_t i : order_) out.push_back(configs_.at(i).config);
    return out;
  }
  // The `k` configs with the lowest pooled cost (successful ones only), best first.
  std::vector<topi::ConfigEntity> best(size_t k) const {
    std::vector<topi::ConfigEntity> ok;
    for (const topi::ConfigEntity& c : configs()) {
      if (std::isfinite(cost(c.index())) && !vetoed(c.index())) ok.push_back(c);
    }
    std::stable_sort(ok.begin(), ok.end(),
                     [&](const topi::ConfigEntity& x, const topi::ConfigEntity& y) {
                       return cost(x.index()) < cost(y.index());
                     });
    if (ok.size() > k) ok.resize(k);
    return ok;
  }
  // The config compile will apply, as Database::best chooses it (choose_config); none if none.
  std::optional<topi::ConfigEntity> chosen(uint64_t fallback_index) const {
    std::vector<topi::ConfigEntity> all = configs();
    std::vector<ConfigStanding> standings;
    for (const topi::ConfigEntity& c : all) {
      standings.push_back({cost(c.index()), c.index() == fallback_index, vetoed(c.index())});
    }
    std::optional<size_t> at = choose_config(standings);
    if (!at) return std::nullopt;
    return all[*at];
  }

 private:
  struct Pooled {
    topi::ConfigEntity config;
    std::vector<double> costs;
    bool failed, vetoed;
  };
  std::map<uint64_t, Pooled> configs_;
  std::vector<uint64_t> order_;
};

// One task's tuning run, as tune_task's steps: prepare (the tuner learns from earlier records,
// and resumed configs count as measured), measure the fallback, search (the tuner's batches, each
// measured and recorded), re-measure the finalists, pick the best.
class TaskTuning {
 public:
  TaskTuning(const Task& task, const topi::ConfigSpace& space, const ConfigMeasurer& measure,
             const std::string& target, const TuneOptions& opt, double time_budget_s,
             const std::function<void(const TuneProgress&)>& on_progress)
      : task_(task),
        space_(space),
        measure_(measure),
        target_(target),
        opt_(opt),
        time_budget_s_(time_budget_s),
        on_progress_(on_progress),
        start_(Clock::now()),
        tuner_(make_tuner(opt.tuner, space, opt.seed)),
        fallback_(space.fallback()) {
    result_.task = task;
    progress_.info = &task;
  }

  // The tuner learns from prior records of similar workloads and from this workload's earlier
  // records, whose configs count as measured (and as trials); then the records file is opened.
  void prepare() {
    std::vector<TuningRecord> known = opt_.prior;
    known.insert(known.end(), opt_.resume.begin(), opt_.resume.end());
    transfer(known, target_, task_, space_, *tuner_);
    // The model check's verdicts in the records file rule configs out, as Database::best does for
    // compile, which reads that file only.
    for (auto& [r, config] : records_in_space(opt_.resume, target_, task_, space_))
      resumed_.push_back(r);
    std::set<uint64_t> vetoed = vetoed_configs(resumed_);
    for (const auto& [r, config] : records_in_space(known, target_, task_, space_)) {
      // A config that the template refuses now (a constraint added since, as the conv template's
      // on serial configs) is not applied by compile: it does not count as measured. Its verdicts
      // still rule out what was measured before them.
      bool refused = !space_.invalid_reason(config).empty();
      if (!r.verdict && !refused) measured_.add(config, r.costs, r.error != MeasureError::kNone);
      if (vetoed.count(config.index())) measured_.veto(config);
    }
    std::vector<topi::ConfigEntity> replay = measured_.configs();
    if (!replay.empty()) {
      std::vector<double> costs;
      for (const topi::ConfigEntity& c : replay) costs.push_back(measured_.cost(c.index()));
      tuner_->update(replay, costs);
    }
    result_.resumed = static_cast<int>(replay.size());
    // A resumed run can hold more trials than this run asks for.
    progress_.trials_total = std::max(opt_.trials, result_.resumed);
    progress_.trials_done = result_.resumed;
    progress_.best_gflops = gflops(task_.flops, best_cost());
    writer_.emplace(opt_.records_path);
  }

  // The fallback is measured first (unless resumed): it is the untuned baseline, and tuning never
  // ends with anything slower.
  void measure_fallback() {
    if (!measured_.has(fallback_.index())) tuner_->update({fallback_}, {trial(fallback_)});
  }

  // The tuner's batches until a stop reason (or the space runs out), with the fallback measured
  // again as a control every opt.control_every trials.
  void search() {
    while ((result_.stop_reason = stop_reason()).empty()) {
      std::vector<topi::ConfigEntity> batch =
          tuner_->has_next()
              ? tuner_->next_batch(std::min(opt_.batch_size, opt_.trials - progress_.trials_done))
              : std::vector<topi::ConfigEntity>{};
      if (batch.empty()) {
        result_.stop_reason = "space exhausted";
        return;
      }
      measure_batch(std::move(batch));
      if (opt_.control_every > 0 && !paired_ && since_control_ >= opt_.control_every &&
          stop_reason().empty() && std::isfinite(measured_.cost(fallback_.index()))) {
        measure_and_record(fallback_);
        since_control_ = 0;
      }
    }
  }

  // The best candidates and the fallback are measured again, in turns, so that neither the chosen
  // config nor the reported speed-up rests on one lucky measurement; the fallback not when it is
  // the time base (the finalists are timed in turns with it again). Not in a run that measured
  // nothing (a resumed run that had done its trials): it would append the same re-measurements on
  // every resume.
  void remeasure_finalists() {
    std::vector<topi::ConfigEntity> finalists;
    if (result_.trials > 0) finalists = measured_.best(static_cast<size_t>(opt_.remeasure_top));
    auto is_fallback = [&](const topi::ConfigEntity& c) { return c.index() == fallback_.index(); };
    if (paired_) {
      std::erase_if(finalists, is_fallback);
    } else if (!finalists.empty() &&
               std::none_of(finalists.begin(), finalists.end(), is_fallback)) {
      finalists.push_back(fallback_);
    }
    size_t least = paired_ ? 1 : 2;  // unpaired, a lone fallback has nothing to be compared with
    for (int round = 0; round < opt_.remeasure_rounds && finalists.size() >= least; ++round) {
      for (const topi::ConfigEntity& c : finalists) measure_and_record(c);
    }
  }

  // What compile will apply (Database::best): the fallback unless a config clearly beats it.
  TaskResult pick_best() {
    result_.fallback_cost_s = measured_.cost(fallback_.index());
    std::optional<topi::ConfigEntity> chosen = measured_.chosen(fallback_.index());
    result_.best_cost_s = chosen ? measured_.cost(chosen->index()) : kInf;
    if (chosen) result_.best_config = chosen->to_json();
    result_.pinned = chosen && chosen->index() == fallback_.index() &&
                     std::any_of(resumed_.begin(), resumed_.end(), [](const TuningRecord& r) {
                       return r.is_verdict(VerdictKind::kPin);
                     });
    progress_.finished = true;
    progress_.best_gflops = gflops(task_.flops, result_.best_cost_s);
    progress_.elapsed_s = seconds_since(start_);
    if (on_progress_) on_progress_(progress_);
    return result_;
  }

 private:
  // Measures a batch of the tuner's proposals, as trials, until a stop reason; the tuner learns
  // their costs. A config the template rejects is not a trial: no build, no record; the tuner
  // learns it as a failure.
  void measure_batch(std::vector<topi::ConfigEntity> batch) {
    std::vector<double> costs;
    for (const topi::ConfigEntity& config : batch) {
      if (!stop_reason().empty()) break;
      bool valid = space_.invalid_reason(config).empty();
      result_.invalid += valid ? 0 : 1;
      since_control_ += valid ? 1 : 0;
      costs.push_back(valid ? trial(config) : kInf);
    }
    batch.resize(costs.size());
    tuner_->update(batch, costs);
  }

  // Measures a config as a trial, and reports progress; returns its pooled cost.
  double trial(const topi::ConfigEntity& config) {
    double before = best_cost();
    double cost = measure_and_record(config);
    ++result_.trials;
    ++progress_.trials_done;
    if (!std::isfinite(cost)) ++result_.errors;
    since_best_ = cost < before ? 0 : since_best_ + 1;
    progress_.current_gflops = gflops(task_.flops, cost);
    progress_.best_gflops = gflops(task_.flops, best_cost());
    progress_.elapsed_s = seconds_since(start_);
    if (on_progress_) on_progress_(progress_);
    return cost;
  }

  // Measures a config, appends its record and pools it; returns its pooled cost. Once the
  // fallback's cost is known, every other config is timed in turns with it and costed in its
  // time, as the auto-scheduler's programs are (docs/autotune.md): a slow phase of the machine
  // during the fallback's one measurement would otherwise pass for a speed-up.
  double measure_and_record(const topi::ConfigEntity& config) {
    bool fallback = config.index() == fallback_.index();
    double fallback_cost = measured_.cost(fallback_.index());
    bool pair = !fallback && std::isfinite(fallback_cost);
    MeasureResult m = measure_(config, pair ? &fallback_ : nullptr);
    TuningRecord r = record_of(target_, task_, config, m, fallback);
    if (pair && !m.baseline_costs_s.empty() && m.error == MeasureError::kNone) {
      r.fallback_costs = m.baseline_costs_s;
      r.costs = baseline_times_.costs(m, fallback_cost);
      result_.slow_phases = baseline_times_.slow_phases();
      paired_ = true;
    }
    writer_->write(r);
    return measured_.add(config, r.costs, m.error != MeasureError::kNone);
  }

  // Why the task should end before its next trial; "" to go on.
  std::string stop_reason() const {
    if (progress_.trials_done >= opt_.trials) return "trials";
    if (opt_.early_stopping > 0 && since_best_ >= opt_.early_stopping) return "early stopping";
    if (time_budget_s_ > 0 && seconds_since(start_) >= time_budget_s_) return "time budget";
    return "";
  }

  double best_cost() const {
    std::vector<topi::ConfigEntity> top = measured_.best(1);
    return top.empty() ? kInf : measured_.cost(top[0].index());
  }

  const Task& task_;
  const topi::ConfigSpace& space_;
  const ConfigMeasurer& measure_;
  const std::string& target_;
  const TuneOptions& opt_;
  double time_budget_s_;
  const std::function<void(const TuneProgress&)>& on_progress_;
  Clock::time_point start_;
  std::unique_ptr<Tuner> tuner_;
  topi::ConfigEntity fallback_;
  std::vector<TuningRecord> resumed_;  // this workload's records in opt.resume, in this space
  Measured measured_;
  std::optional<RecordWriter> writer_;
  TaskResult result_;
  TuneProgress progress_;
  int since_best_ = 0, since_control_ = 0;
  bool paired_ = false;  // a config was timed in turns with the fallback: its cost is the time base
  BaselineHistory baseline_times_;  // the fallback's times when paired
};

}  // namespace

TaskResult tune_task(const Task& task, const topi::ConfigSpace& space,
                     const ConfigMeasurer& measure, const std::string& target,
                     const TuneOptions& opt, double time_budget_s,
                     const std::function<void(const TuneProgress&)>& on_progress) {
  validate(opt);
  TaskTuning tuning(task, space, measure, target, opt, time_budget_s, on_progress);
  tuning.prepare();
  tuning.measure_fallback();
  tuning.search();
  tuning.remeasure_finalists();
  return tuning.pick_best();
}

std::vector<TaskResult> tune_tasks(const std::vector<TaskGraph>& graphs,
                                   const std::vector<Task>& tasks, const Target& target,
                                   const TuneOptions& opt,
                                   const std::function<void(const TuneProgress&)>& on_progress) {
  validate(opt);
  auto start = Clock::now();
  std::vector<TaskResult> results;
  for (size_t t = 0; t < tasks.size(); ++t) {
    // Each task gets an equal share of what is left of the budget, so time a task does not use
    // goes to the ones after it.
    double share_s = 0;
    if (opt.time_budget_s > 0) {
      share_s = std::max(1e-3, opt.time_budget_s - seconds_since(start)) /
                static_cast<double>(tasks.size() - t);
    }
    const Task& task = tasks[t];
    const TaskGraph& plan = graphs.at(static_cast<size_t>(task.graph));
    TaskBench bench(*plan.graph, plan.groups->at(static_cast<size_t>(task.group)), task.group,
                    target, opt.seed + t);
    TuneOptions task_opt = opt;
    task_opt.seed = opt.seed + t;
    auto progress = [&](TuneProgress p) {
      p.task = static_cast<int>(t);
      p.num_tasks = static_cast<int>(tasks.size());
      if (on_progress) on_progress(p);
    };
    results.push_back(tune_task(
        task, bench.space(),
        [&](const topi::ConfigEntity& c, const topi::ConfigEntity* baseline) {
          return bench.measure(c, baseline, opt.measure);
        },
        target.str(), task_opt, share_s, progress));
  }
  return results;
}

}  // namespace tessel::autotune
