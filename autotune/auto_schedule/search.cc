#include "autotune/auto_schedule/search.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include "autotune/auto_schedule/search_task.h"
#include "autotune/auto_schedule/task_scheduler.h"
#include "autotune/kernel_data.h"
#include "codegen/build.h"
#include "ir/error.h"
#include "te/lower.h"
#include "te/schedule_to_tir.h"

namespace tessel::autotune {
namespace {

using Clock = std::chrono::steady_clock;
constexpr double kInf = std::numeric_limits<double>::infinity();
// Rounds in a row that measure nothing new before a task is done.
constexpr int kMaxIdleRounds = 3;
// The template sketch's share of a population's random programs: its space is the template
// tuner's, where a hand-written schedule fixed the structure and the numbers alone decide, against
// the 3-7 structures the rules give a packed conv or a matmul.
constexpr double kTemplateShare = 0.5;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

void validate(const AutoScheduleOptions& opt) {
  auto positive = [](int v, const char* what) {
    if (v < 1) throw Error(fmt::format("auto-schedule: {} must be at least 1, got {}", what, v));
  };
  positive(opt.trials, "trials");
  positive(opt.population, "the population");
  positive(opt.generations, "generations");
  positive(opt.per_round, "programs per round");
  if (opt.early_stopping < 0)
    throw Error(fmt::format("auto-schedule: early stopping must not be negative, got {}",
                            opt.early_stopping));
  if (opt.remeasure_top < 0 || opt.remeasure_rounds < 0) {
    throw Error(fmt::format(
        "auto-schedule: remeasure_top ({}) and remeasure_rounds ({}) must not be negative",
        opt.remeasure_top, opt.remeasure_rounds));
  }
  if (!(opt.time_budget_s >= 0) || !std::isfinite(opt.time_budget_s)) {
    throw Error(fmt::format(
        "auto-schedule: the time budget must be a finite number of seconds >= 0, got {}",
        opt.time_budget_s));
  }
  for (double p : {opt.mutation_prob, opt.eps_greedy}) {
    if (!(p >= 0 && p <= 1))
      throw Error(fmt::format("auto-schedule: a probability must be in [0, 1], got {}", p));
  }
  if (opt.mutation_weights.size() != 5 ||
      std::any_of(opt.mutation_weights.begin(), opt.mutation_weights.end(),
                  [](double w) { return !(w >= 0) || !std::isfinite(w); }) ||
      std::all_of(opt.mutation_weights.begin(), opt.mutation_weights.end(),
                  [](double w) { return w == 0; })) {
    throw Error("auto-schedule: mutation weights must be 5 finite numbers >= 0, not all 0");
  }
  if (opt.records_path.empty())
    throw Error("auto-schedule: a records file is needed (records_path, --output)");
}

// One task's search state: its DAG and sketches, what the measurements found, and how to measure.
class TaskSearch {
 public:
  TaskSearch(const Task& task, const TaskGraph& plan, const Target& target,
             const AutoScheduleOptions& opt, uint64_t seed)
      : task_(task),
        target_(target),
        cpu_(CpuModel::of(target)),
        opt_(opt),
        rng_(seed),
        group_(plan.groups->at(static_cast<size_t>(task.group))),
        graph_(*plan.graph),
        comp_(task_computation(graph_, group_, task.group, cpu_)),
        sketches_(task_sketches(comp_)),
        data_(kernel_data(graph_, group_, comp_.group, seed)) {
    result_.task = task;
    result_.sketches = static_cast<int>(sketches_.size());
    std::vector<TuningRecord> own;
    for (const TuningRecord& r : opt.resume) {
      if (r.target != target.str() || r.workload != task.workload) continue;
      own.push_back(r);
      if (r.verdict) continue;
      result_.resumed += r.fallback || pooled_.count(r.config_index) ? 0 : 1;
      pool(r.config_index, r.steps, r.fallback, r.costs, r.error != MeasureError::kNone);
    }
    vetoed_ = vetoed_configs(own);
    // A resumed run draws other programs than the run it continues, which measured those.
    rng_.seed(seed + static_cast<uint64_t>(own.size()) * 0x9e3779b97f4a7c15ULL);
  }

  const Task& task() const { return task_; }
  const ComputeDAG& dag() const { return comp_.dag; }
  const std::vector<Sketch>& sketches() const { return sketches_; }
  AutoScheduleResult& result() { return result_; }

  // Measures the compiler's own schedule (unless resumed): the baseline every program must beat.
  void measure_fallback(RecordWriter& writer) {
    if (has_fallback()) return;
    CandidateBuilder build = [this] { return build_fallback(); };
    record(writer, 0, "", true, measure_with(build));
  }

  // Builds the fallback here, once its cost is known, to be timed in turns with every program:
  // each program's costs are then its times over the fallback's fastest time in the same child, in
  // the fallback's measured cost (which stays fixed from then on: remeasure_finalists). On the
  // shared 2-core VM, a slow phase during the fallback's one measurement made programs measured
  // later look 1.5x faster than it, gains the model check then found in no model
  // (docs/auto-scheduler.md).
  void prepare_baseline() {
    if (std::isfinite(fallback_cost()))
      baseline_.build([this] { return build_fallback(); }, comp_.group.name);
  }

  // Proposes up to `n` programs not measured yet by the evolutionary search (best first).
  std::vector<Program> propose(CostModel& model, int n) {
    std::vector<Program> population, randoms;
    for (const auto& [cost, p] : measured_best(static_cast<size_t>(opt_.population / 8)))
      population.push_back(p);
    while (population.size() < static_cast<size_t>(opt_.population)) {
      randoms.push_back(sample_program(comp_.dag, sketches_, random_sketch(), rng_));
      population.push_back(randoms.back());
    }
    std::vector<std::pair<double, Program>> scored;
    std::uniform_real_distribution<double> coin(0, 1);
    for (int gen = 0;; ++gen) {
      std::vector<double> scores = model.predict(batch_of(population));
      for (size_t i = 0; i < population.size(); ++i) scored.emplace_back(scores[i], population[i]);
      if (gen == opt_.generations) break;
      // Parents drawn in proportion to their score above the worst (roulette), then mutated.
      double lo = *std::min_element(scores.begin(), scores.end());
      std::vector<double> weights;
      for (double s : scores) weights.push_back(std::max(s - lo, 1e-9));
      std::discrete_distribution<size_t> parent(weights.begin(), weights.end());
      std::vector<Program> next;
      for (size_t i = 0; i < population.size(); ++i) {
        const Program& p = population[parent(rng_)];
        next.push_back(coin(rng_) < opt_.mutation_prob
                           ? mutate(comp_.dag, sketches_, p, opt_.mutation_weights, rng_)
                           : p);
      }
      population = std::move(next);
    }
    std::stable_sort(scored.begin(), scored.end(),
                     [](const auto& a, const auto& b) { return a.first > b.first; });
    std::vector<Program> picks;
    std::set<std::string> taken;
    auto take = [&](const Program& p) {
      std::string key = p.str(comp_.dag);
      if (static_cast<int>(picks.size()) >= n || seen_.count(key) || !taken.insert(key).second)
        return;
      picks.push_back(p);
    };
    int random_picks = static_cast<int>(std::lround(opt_.eps_greedy * n));
    for (const auto& [score, p] : scored) {
      if (static_cast<int>(picks.size()) >= n - random_picks) break;
      take(p);
    }
    for (const Program& p : randoms) take(p);
    for (const auto& [score, p] : scored) take(p);
    return picks;
  }

  // Measures a program as a trial and records it; its pooled cost, or nullopt when it was not
  // measured (its schedule threw, or it was measured before under another program's numbers).
  std::optional<double> measure_program(const Program& p, RecordWriter& writer) {
    seen_.insert(p.str(comp_.dag));
    std::string steps;
    try {
      te::Schedule s = apply(comp_.dag, sketches_[p.sketch], p);
      // Bound inference finds what apply does not (a stage computed at a loop that a later step
      // split): a rule's bug as well, not the measuring child's build error.
      te::schedule_to_tir(s, comp_.dag.args(), comp_.group.name);
      steps = s.trace().str();
    } catch (const std::exception& e) {  // tessel::Error, or a failed internal check
      if (result_.invalid++ == 0) result_.first_invalid = e.what();
      return std::nullopt;
    }
    uint64_t key = steps_key(steps);
    if (pooled_.count(key)) return std::nullopt;
    CandidateBuilder build = [this, &steps] { return build_steps(steps); };
    prepare_baseline();
    MeasureResult m = measure_with(build, baseline());
    double cost = record(writer, key, steps, false, m);
    programs_.emplace_back(key, p);
    ++result_.trials;
    result_.errors += m.error == MeasureError::kNone ? 0 : 1;
    return cost;
  }

  // The best programs measured again in turns (each in turns with the fallback; without a
  // baseline, the fallback too, after them), so that neither the chosen program nor the reported
  // speed-up rests on one lucky measurement: of 48 programs of a few-microsecond kernel, the one
  // measured fastest is often the luckiest (docs/auto-scheduler.md, "Re-measured finalists").
  void remeasure_finalists(RecordWriter& writer) {
    if (result_.trials == 0) return;  // a resumed run with nothing new: no lines on every resume
    if (!program_chosen()) return;
    std::vector<uint64_t> keys = finalists(static_cast<size_t>(opt_.remeasure_top));
    if (keys.empty()) return;
    if (measures_fallback_with_finalists()) keys.push_back(fallback_key());
    for (int r = 0; r < opt_.remeasure_rounds; ++r) {
      for (uint64_t key : keys) {
        Pooled entry = pooled_.at(key);  // a copy: recording adds to the pool
        CandidateBuilder build = [this, &entry] {
          return entry.fallback ? build_fallback() : build_steps(entry.steps);
        };
        record(writer, key, entry.steps, entry.fallback, measure_with(build, baseline()));
      }
    }
  }

  // Without a baseline the fallback is measured again with the finalists: programs' costs are
  // then their own times, and a fallback that failed (sticky, as in Database::best) does not.
  bool measures_fallback_with_finalists() const {
    return !baseline() && std::isfinite(fallback_cost());
  }

  // How many measurements remeasure_finalists will take at most, as things stand.
  int finalist_measurements() const {
    if (!program_chosen()) return 0;
    return (opt_.remeasure_top + (measures_fallback_with_finalists() ? 1 : 0)) *
           opt_.remeasure_rounds;
  }

  // Whether a program is chosen over the fallback (at least kMinGainOverDefault faster).
  bool program_chosen() const {
    std::optional<uint64_t> best = chosen();
    return best && !pooled_.at(*best).fallback;
  }

  // The cost compile would get: the chosen program's, else the fallback's.
  double best_cost() const {
    std::optional<uint64_t> k = chosen();
    return k ? cost(*k) : kInf;
  }
  double fallback_cost() const { return has_fallback() ? cost(fallback_key()) : kInf; }

  void finish() {
    result_.fallback_cost_s = fallback_cost();
    result_.best_cost_s = best_cost();
    std::optional<uint64_t> k = chosen();
    result_.best_steps = k ? pooled_.at(*k).steps : "";
  }

  ProgramBatch batch_of(std::vector<Program> programs) const {
    return {&comp_.dag, &sketches_, task_.workload, std::move(programs)};
  }

 private:
  struct Pooled {
    std::string steps;
    bool fallback = false, failed = false;
    std::vector<double> costs;
  };

  // The compiler's own schedule of the group, and the schedule of a program's steps; each runs in
  // the measuring child.
  runtime::Module build_fallback() const {
    passes::LoweredGroup lg = passes::lower_to_te(graph_, group_, task_.group, cpu_);
    return tessel::build_cached(
        {te::lower(lg.schedule, lg.args, lg.name, tessel::pipeline_options(cpu_))}, target_);
  }
  runtime::Module build_steps(const std::string& steps) const {
    te::Schedule s = comp_.dag.schedule();
    s.replay(te::Trace::parse(steps));
    return tessel::build_cached(
        {te::lower(s, comp_.dag.args(), comp_.group.name, tessel::pipeline_options(cpu_))},
        target_);
  }

  // The sketch of a random program: the template sketch (the last, when the group has one) with
  // probability kTemplateShare, else one of the rules' sketches, all alike (as Ansor draws them).
  size_t random_sketch() {
    size_t rules = sketches_.size() - (sketches_.back().schedule_template ? 1 : 0);
    if (rules < sketches_.size() && std::bernoulli_distribution(kTemplateShare)(rng_)) return rules;
    return std::uniform_int_distribution<size_t>(0, rules - 1)(rng_);
  }

  // A program far slower than the fallback would hold the run for seconds per measurement (a
  // random tile of a resnet_mini conv ran 7.5 ms, against 18 us untuned): once the fallback's cost
  // is known, a candidate gets the time a program kSlowestRatio times slower would need, plus
  // kBuildAllowanceS to build, and times out (a failure the cost model learns) beyond it.
  static constexpr double kSlowestRatio = 20;
  static constexpr double kBuildAllowanceS = 3;
  MeasureResult measure_with(const CandidateBuilder& build,
                             const runtime::Function* baseline = nullptr) const {
    MeasureOptions m = opt_.measure;
    double fallback = fallback_cost();
    if (std::isfinite(fallback)) {
      double slowest = kSlowestRatio * fallback;
      double timed = m.repeat * std::max(m.min_repeat_ms / 1e3, m.number * slowest);
      if (baseline) timed += m.repeat * std::max(m.min_repeat_ms / 1e3, m.number * fallback);
      m.timeout_s = std::min(m.timeout_s, kBuildAllowanceS + slowest + timed);
    }
    return autotune::measure(build, comp_.group.name, data_.inputs, data_.references, m, baseline);
  }

  double record(RecordWriter& writer, uint64_t key, const std::string& steps, bool fallback,
                const MeasureResult& m) {
    TuningRecord r;
    r.target = target_.str();
    r.workload = task_.workload;
    // Records of one workload are told apart by their config (Database::best, the model check).
    r.config = fallback ? "{}" : fmt::format(R"({{"program":"{:016x}"}})", key);
    r.config_index = key;
    r.costs = m.costs_s;
    r.error = m.error;
    r.error_msg = m.message;
    r.timestamp = unix_time_now();
    r.fallback = fallback;
    r.auto_schedule = true;
    r.steps = steps;
    if (!m.baseline_costs_s.empty() && m.error == MeasureError::kNone) {
      r.fallback_costs = m.baseline_costs_s;
      r.costs = baseline_times_.costs(m, fallback_cost());
      result_.slow_phases = baseline_times_.slow_phases();
    }
    writer.write(r);
    return pool(key, steps, fallback, r.costs, m.error != MeasureError::kNone);
  }

  double pool(uint64_t key, const std::string& steps, bool fallback,
              const std::vector<double>& costs, bool failed) {
    Pooled& p = pooled_[key];
    p.steps = steps;
    p.fallback = fallback;
    p.failed |= failed;
    p.costs.insert(p.costs.end(), costs.begin(), costs.end());
    if (fallback) fallback_ = key;
    return cost(key);
  }

  double cost(uint64_t key) const {
    const Pooled& p = pooled_.at(key);
    return p.failed ? kInf : median_cost(p.costs);
  }
  bool has_fallback() const { return fallback_.has_value(); }
  const runtime::Function* baseline() const { return baseline_.get(); }
  uint64_t fallback_key() const { return *fallback_; }

  std::optional<uint64_t> chosen() const {
    std::vector<uint64_t> keys;
    std::vector<ConfigStanding> standings;
    for (const auto& [key, p] : pooled_) {
      keys.push_back(key);
      standings.push_back({cost(key), p.fallback, vetoed_.count(key) != 0});
    }
    std::optional<size_t> at = choose_config(standings);
    if (!at) return std::nullopt;
    return keys[*at];
  }

  // The `k` programs (this run's or resumed) with the lowest costs, best first: neither the
  // fallback nor a program the model check vetoed.
  std::vector<uint64_t> finalists(size_t k) const {
    std::vector<std::pair<double, uint64_t>> ranked;
    for (const auto& [key, p] : pooled_) {
      if (!p.fallback && !vetoed_.count(key) && std::isfinite(cost(key)))
        ranked.emplace_back(cost(key), key);
    }
    std::stable_sort(ranked.begin(), ranked.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<uint64_t> keys;
    for (size_t i = 0; i < std::min(k, ranked.size()); ++i) keys.push_back(ranked[i].second);
    return keys;
  }

  // This run's measured programs with the lowest costs, best first.
  std::vector<std::pair<double, Program>> measured_best(size_t k) const {
    std::vector<std::pair<double, Program>> out;
    for (const auto& [key, p] : programs_) {
      if (std::isfinite(cost(key))) out.emplace_back(cost(key), p);
    }
    std::stable_sort(out.begin(), out.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    if (out.size() > k) out.resize(k);
    return out;
  }

  const Task& task_;
  const Target& target_;
  CpuModel cpu_;
  const AutoScheduleOptions& opt_;
  std::mt19937_64 rng_;
  const passes::FusedGroup& group_;
  const graph::Graph& graph_;
  TaskComputation comp_;
  std::vector<Sketch> sketches_;
  KernelData data_;
  std::map<uint64_t, Pooled> pooled_;
  std::optional<uint64_t> fallback_;
  // The fallback built here, timed in turns with each program (prepare_baseline), and its times.
  BaselineKernel baseline_;
  BaselineHistory baseline_times_;
  std::set<uint64_t> vetoed_;                           // by the model check of an earlier run
  std::vector<std::pair<uint64_t, Program>> programs_;  // measured in this run
  std::set<std::string> seen_;                          // programs proposed and taken
  AutoScheduleResult result_;
};

}  // namespace

uint64_t steps_key(const std::string& steps) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : steps) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

std::vector<AutoScheduleResult> auto_schedule_tasks(
    const std::vector<TaskGraph>& graphs, const std::vector<Task>& tasks, const Target& target,
    const AutoScheduleOptions& opt, CostModel& model,
    const std::function<void(const AutoScheduleProgress&)>& on_progress) {
  validate(opt);
  auto start = Clock::now();
  RecordWriter writer(opt.records_path);
  std::vector<std::unique_ptr<TaskSearch>> searches;
  std::vector<TaskHistory> histories;
  for (size_t t = 0; t < tasks.size(); ++t) {
    searches.push_back(std::make_unique<TaskSearch>(
        tasks[t], graphs.at(static_cast<size_t>(tasks[t].graph)), target, opt, opt.seed + t));
    searches.back()->measure_fallback(writer);
    histories.push_back({tasks[t].weight, {}, false});
  }
  // The finalists' re-measurement after the search (remeasure_finalists) of each task with a
  // program chosen, at this run's mean measurement time. The search leaves it out of the time
  // budget, so that it fits in.
  auto finalists_s = [&] {
    double seconds = 0;
    int trials = 0, measurements = 0;
    for (const auto& s : searches) {
      seconds += s->result().measure_s;
      trials += s->result().trials;
      measurements += s->finalist_measurements();
    }
    return trials == 0 ? 0.0 : seconds / trials * measurements;
  };
  auto past_budget = [&] {
    return opt.time_budget_s > 0 && seconds_since(start) >= opt.time_budget_s;
  };
  auto out_of_time = [&] {
    return opt.time_budget_s > 0 && seconds_since(start) + finalists_s() >= opt.time_budget_s;
  };
  AutoScheduleProgress progress;
  progress.num_tasks = static_cast<int>(tasks.size());
  progress.trials_total = opt.trials;
  std::vector<int> since_best(tasks.size(), 0), idle(tasks.size(), 0);
  std::string run_stop;
  while (true) {
    if (progress.trials_done >= opt.trials) run_stop = "trials";
    if (out_of_time()) run_stop = "time budget";
    int t = next_task(histories);
    if (t < 0 && run_stop.empty()) run_stop = "every task done";
    if (!run_stop.empty()) break;
    TaskSearch& s = *searches[static_cast<size_t>(t)];
    int n = std::min(opt.per_round, opt.trials - progress.trials_done);
    auto proposing = Clock::now();
    std::vector<Program> proposed = s.propose(model, n);
    s.result().search_s += seconds_since(proposing);
    auto measuring = Clock::now();
    std::vector<Program> measured;
    std::vector<double> costs;
    double before = s.best_cost();
    int invalid_before = s.result().invalid;
    for (const Program& p : proposed) {
      if (out_of_time()) break;
      std::optional<double> cost = s.measure_program(p, writer);
      if (!cost) continue;
      measured.push_back(p);
      costs.push_back(*cost);
      ++progress.trials_done;
    }
    s.result().measure_s += seconds_since(measuring);
    auto learning = Clock::now();
    if (!measured.empty()) model.update(s.batch_of(measured), costs);
    s.result().search_s += seconds_since(learning);
    TaskHistory& h = histories[static_cast<size_t>(t)];
    AutoScheduleResult& r = s.result();
    ++r.rounds;
    h.best.push_back(s.best_cost());
    since_best[static_cast<size_t>(t)] =
        s.best_cost() < before
            ? 0
            : since_best[static_cast<size_t>(t)] + static_cast<int>(measured.size());
    idle[static_cast<size_t>(t)] = measured.empty() ? idle[static_cast<size_t>(t)] + 1 : 0;
    if (idle[static_cast<size_t>(t)] >= kMaxIdleRounds && !out_of_time()) {
      // Nothing new to measure, round after round: every proposal was measured before, or did
      // not make a schedule.
      h.done = true;
      r.stop_reason = r.invalid > invalid_before ? "invalid programs" : "no new programs";
    } else if (opt.early_stopping > 0 && since_best[static_cast<size_t>(t)] >= opt.early_stopping) {
      h.done = true;
      r.stop_reason = "early stopping";
    }
    progress.task = t;
    progress.info = &s.task();
    progress.round = r.rounds;
    progress.best_cost_s = s.best_cost();
    progress.est_latency_s = 0;
    for (const auto& other : searches) {
      double c = other->best_cost();
      progress.est_latency_s +=
          other->task().weight * (std::isfinite(c) ? c : other->fallback_cost());
    }
    progress.elapsed_s = seconds_since(start);
    if (on_progress) on_progress(progress);
  }
  std::vector<AutoScheduleResult> results;
  for (auto& s : searches) {
    if (!past_budget()) s->remeasure_finalists(writer);
    s->finish();
    if (s->result().stop_reason.empty()) s->result().stop_reason = run_stop;
    results.push_back(s->result());
  }
  return results;
}

}  // namespace tessel::autotune
