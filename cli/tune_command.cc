// tessel tune MODEL.onnx --output records.json [--target T] [--input-shapes S] [--trials N]
// [--timeout S]
//             [--tuner xgb|ga|random|grid] [--early-stopping N] [--number N --repeat N
//             --min-repeat-ms MS]
//             [--tuning-records prior.json] [--resume] [--tasks all|list|0,2,5-7] [--time-budget
//             MIN]
//             [--conv-layouts both|rule] [--model-check-rounds N] [--plot curves.svg]
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <set>

#include "autotune/tune.h"
#include "autotune/tuner.h"
#include "cli/cli_util.h"
#include "cli/commands.h"
#include "cli/model_flags.h"
#include "cli/svg_plot.h"
#include "cli/tune_auto_schedule.h"
#include "driver/check_tuned_model.h"
#include "driver/compile.h"
#include "ir/error.h"
#include "ir/whole_number.h"

namespace tessel::cli {

namespace {

struct TuneArgs {
  std::string model, output, prior, tasks = "all", conv_layouts = "both", plot;
  std::string tuner = autotune::default_tuner_name();
  bool tuner_named = false;  // --tuner was given (else the build's default tuner)
  ModelFlags flags;
  int trials = 200, early_stopping = 0, number = 4, repeat = 3, model_check_rounds = 20;
  double timeout_s = 10, min_repeat_ms = 20, time_budget_min = 0;
  bool resume = false, cache_flush = false, auto_schedule = false, show_sketches = false;
  bool trials_named = false;  // --trials was given
};

// Each measurement is one cost in its record's line, which load_records reads up to 1 MiB of.
constexpr double kMaxRepeat = 1e4;

// For each task, the position of the task it is the other conv layout of; -1 for none, or when
// that task is not among `tasks`.
std::vector<int> layout_partners(const std::vector<autotune::Task>& tasks) {
  std::vector<int> partner(tasks.size(), -1);
  for (size_t i = 0; i < tasks.size(); ++i) {
    for (size_t j = 0; j < tasks.size() && !tasks[i].layout_of.empty(); ++j) {
      if (tasks[j].workload == tasks[i].layout_of) partner[i] = static_cast<int>(j);
    }
  }
  return partner;
}

std::vector<autotune::TuningRecord> load_with_warnings(const std::string& path) {
  std::vector<std::string> warnings;
  std::vector<autotune::TuningRecord> records = autotune::load_records(path, &warnings);
  for (const std::string& w : warnings) std::cerr << "warning: " << w << "\n";
  return records;
}

void print_summary(const std::vector<autotune::TaskResult>& results) {
  std::cout << fmt::format("\n{:>4}  {:<9} {:>6} {:>7} {:>6}  {:>12} {:>12} {:>8} {:>9}  {}\n",
                           "task", "op", "weight", "trials", "errors", "untuned (ms)", "tuned (ms)",
                           "speed-up", "GFLOP/s", "stopped by");
  for (size_t i = 0; i < results.size(); ++i) {
    const autotune::TaskResult& r = results[i];
    double speedup = r.fallback_cost_s / r.best_cost_s;
    std::cout << fmt::format(
        "{:>4}  {:<9} {:>6} {:>7} {:>6}  {:>12.4f} {:>12.4f} {:>7.2f}x {:>9.1f}  {}\n", i,
        r.task.op, r.task.weight, r.trials + r.resumed, r.errors, r.fallback_cost_s * 1e3,
        r.best_cost_s * 1e3, std::isfinite(speedup) ? speedup : 0.0,
        r.task.flops / r.best_cost_s / 1e9, r.stop_reason);
  }
  // A conv measured in both layouts counts once: untuned in the rule's layout, tuned in the one
  // compile takes (the other only when it clearly beats the rule's and the model check pinned
  // neither to its fallback, as compile decides).
  std::vector<autotune::Task> tasks;
  std::vector<double> tuned;
  for (const autotune::TaskResult& r : results) {
    tasks.push_back(r.task);
    tuned.push_back(r.best_cost_s);
  }
  std::vector<int> partner = layout_partners(tasks);
  for (size_t i = 0; i < results.size(); ++i) {
    if (partner[i] < 0) continue;
    const autotune::TaskResult& r = results[i];
    const autotune::TaskResult& p = results[static_cast<size_t>(partner[i])];
    bool other = !r.pinned && !p.pinned && autotune::beats_default(r.best_cost_s, p.best_cost_s);
    if (other) tuned[static_cast<size_t>(partner[i])] = r.best_cost_s;
    std::cout << fmt::format(
        "task {} is task {} in the other layout: {:.4f} ms against {:.4f} ms, compile takes {} "
        "(task {})\n",
        i, partner[i], r.best_cost_s * 1e3, p.best_cost_s * 1e3, other ? r.task.op : p.task.op,
        other ? static_cast<int>(i) : partner[i]);
  }
  int slow = 0;
  for (const autotune::TaskResult& r : results) slow += r.slow_phases;
  print_slow_phases(slow);
  double untuned_total = 0, tuned_total = 0;
  for (size_t i = 0; i < results.size(); ++i) {
    if (!results[i].task.layout_of.empty()) continue;
    untuned_total += results[i].task.weight * results[i].fallback_cost_s;
    tuned_total += results[i].task.weight * tuned[i];
  }
  std::cout << fmt::format(
      "tuned kernels alone, weighted by occurrence: {:.4f} ms untuned, {:.4f} ms tuned ({:.2f}x; "
      "each kernel measured in isolation, where a slow phase of the machine can favour either "
      "side: the model check times them in the model)\n",
      untuned_total * 1e3, tuned_total * 1e3, untuned_total / tuned_total);
}

// The best GFLOP/s of each task after each trial, against trials and against seconds.
class TuneCurves {
 public:
  void add(const autotune::TuneProgress& p) {
    if (curves_.size() <= static_cast<size_t>(p.task)) curves_.resize(p.task + 1);
    Curve& c = curves_[p.task];
    if (p.info)
      c.name = fmt::format("task {}: {}, {:.1f} MFLOP", p.task, p.info->op, p.info->flops / 1e6);
    c.by_trial.emplace_back(p.trials_done, p.best_gflops);
    c.by_time.emplace_back(p.elapsed_s, p.best_gflops);
  }
  std::string svg(const std::string& model) const {
    PlotPanel trials{"best GFLOP/s by trial", "trials", "GFLOP/s", {}, true};
    PlotPanel time{"best GFLOP/s by time", "seconds since the task started", "GFLOP/s", {}, true};
    for (const Curve& c : curves_) {
      trials.series.push_back({c.name, c.by_trial});
      time.series.push_back({c.name, c.by_time});
    }
    return line_plot_svg("tessel tune " + model, {trials, time});
  }

 private:
  struct Curve {
    std::string name;
    std::vector<std::pair<double, double>> by_trial, by_time;
  };
  std::vector<Curve> curves_;
};

// A workload's verdict, on its rounds of every pass so far; `pin`: a veto gives it the untuned
// kernel.
std::string verdict(const WorkloadCheck& w, bool pin) {
  if (w.tuned_faster()) return "kept";
  return pin ? "untuned" : "vetoed";
}

// `pooled`: each workload's speed-up over the rounds of every pass so far, which the verdict uses.
void print_model_check(const ModelCheck& c, int pass, const std::vector<WorkloadCheck>& pooled,
                       const std::set<std::string>& pin) {
  std::cout << fmt::format(
      "\nmodel check{}: the build with these records against the untuned one, {} alternating "
      "rounds of {} runs each; outputs agree (largest difference {:.3g})\n",
      pass > 1 ? fmt::format(" (pass {})", pass) : "", c.rounds, c.runs_per_round,
      c.max_output_diff);
  if (!c.workloads.empty()) {
    std::cout << fmt::format("{:>12} {:>12} {:>8} {:>8} {:>6}  {:<8}  {}\n", "untuned (ms)",
                             "tuned (ms)", "speed-up", "pooled", "rounds", "verdict",
                             "kernels (a workload's config applies to each)");
  }
  for (size_t i = 0; i < c.workloads.size(); ++i) {
    const WorkloadCheck& w = c.workloads[i];
    std::cout << fmt::format(
        "{:>12.4f} {:>12.4f} {:>7.2f}x {:>7.2f}x {:>6}  {:<8}  {}\n", w.untuned_ms, w.tuned_ms,
        w.speedup, pooled[i].speedup, pooled[i].round_speedups.size(),
        verdict(pooled[i], pin.count(w.judged_as()) != 0), fmt::join(w.tuned_kernels, ", "));
  }
  std::cout << fmt::format(
      "end to end: {:.4f} ms untuned, {:.4f} ms tuned ({:.2f}x, the median of the rounds' "
      "ratios)\n",
      c.untuned_ms, c.tuned_ms, c.speedup);
}

// Times the model built with the new records against the untuned build. A config is kept when
// its workload runs at least kMinGainInModel faster over the rounds of every pass that checked
// it, and vetoed otherwise; the next best of a vetoed workload is checked in the next pass. A
// workload vetoed a second time, or on the last pass, gets its untuned kernel back, so that the
// build compile makes holds only configs the check kept. The passes end with one that judges no
// workload, so that the build it timed is the one compile makes; when that build runs slower end
// to end than the untuned one, every workload gets its untuned kernel back (workloads each faster
// in the model had added up to a slower model: ResNet-50 after a 30-minute auto-schedule on an
// Intel Xeon, three kept workloads at 1.03-1.09x, the model 0.98x).
void check_model(const TuneArgs& a, CompileOptions copt) {
  copt.tuning_records = a.output;
  ModelCheckOptions mopt;
  mopt.rounds = a.model_check_rounds;
  ModelCheckPasses passes(5);
  while (true) {
    ModelCheck c = check_tuned_model(a.model, copt, mopt);
    ModelCheck pooled = c;
    std::set<std::string> pin = passes.judge(pooled);
    print_model_check(c, passes.pass(), pooled.workloads, pin);
    int judged = veto_slower_workloads(pooled, a.output, pin);
    int pinned = static_cast<int>(std::count_if(
        pooled.workloads.begin(), pooled.workloads.end(),
        [&](const WorkloadCheck& w) { return !w.tuned_faster() && pin.count(w.judged_as()); }));
    if (pinned > 0) {
      std::cout << fmt::format(
          "{} workload(s) get the untuned kernel back (model-check pins appended to {})\n", pinned,
          a.output);
    }
    if (judged == 0) {
      if (c.workloads.empty() || c.speedup >= 1) return;
      std::set<std::string> all;
      for (const WorkloadCheck& w : pooled.workloads) all.insert(w.judged_as());
      int undone = veto_slower_workloads(pooled, a.output, all, true);
      std::cout << fmt::format(
          "the tuned build ran {:.2f}x the untuned one's speed end to end: its {} workload(s) get "
          "the untuned kernel back (model-check pins appended to {})\n",
          c.speedup, undone, a.output);
      return;
    }
    if (judged > pinned) {
      std::cout << fmt::format(
          "vetoed {} config(s) not {:.0f}% faster in the model (model-check vetoes appended to "
          "{}): compile takes each workload's next best; checking again\n",
          judged - pinned, kMinGainInModel * 100, a.output);
    } else {
      std::cout << "checking the build without them again\n";
    }
  }
}

// --tuner's help, and why xgb is missing from a build without XGBoost.
std::string tuner_help() {
  if (autotune::xgb_tuner_available()) return "the search strategy (xgb: XGBoost-guided)";
  return "the search strategy (xgb, XGBoost-guided, is not in this build: Tessel was built "
         "without XGBoost)";
}

// Accepts the tuners of this build (listed in --help); check_tuner_name's error otherwise.
CLI::Validator tuner_validator() {
  return CLI::Validator(
      [](std::string& name) {
        try {
          autotune::check_tuner_name(name);
        } catch (const Error& e) {
          return std::string(e.what());
        }
        return std::string();
      },
      fmt::format("{{{}}}", fmt::join(autotune::tuner_names(), ",")));
}

// What -o holds of an earlier run, when --resume continues it; an Error when it exists without
// --resume.
std::vector<autotune::TuningRecord> resume_records(const TuneArgs& a) {
  if (!std::filesystem::exists(a.output)) return {};
  if (!a.resume) {
    throw Error(fmt::format(
        "-o {} exists: pass --resume to continue that run, or choose another file", a.output));
  }
  std::vector<autotune::TuningRecord> records = load_with_warnings(a.output);
  auto verdicts = std::count_if(records.begin(), records.end(),
                                [](const auto& r) { return r.verdict.has_value(); });
  std::cerr << fmt::format("resuming: {} records in {} ({} of them model-check verdicts)\n",
                           records.size(), a.output, verdicts);
  return records;
}

// The model check after tuning, its failure an Error that says the records are complete.
void check_model_after_tuning(const TuneArgs& a, const CompileOptions& copt) {
  if (a.model_check_rounds <= 0) return;
  try {
    check_model(a, copt);
  } catch (const Error& e) {
    throw Error(fmt::format(
        "model check: {} (the records are complete; --model-check-rounds 0 skips the check)",
        e.what()));
  }
}

// How both tuners measure a candidate: the measurement flags.
autotune::MeasureOptions measure_options(const TuneArgs& a) {
  autotune::MeasureOptions m;
  m.number = a.number;
  m.repeat = a.repeat;
  m.min_repeat_ms = a.min_repeat_ms;
  m.timeout_s = a.timeout_s;
  m.flush_cache = a.cache_flush;
  return m;
}

void run_auto_schedule_tune(const TuneArgs& a, const CompileOptions& copt) {
  AutoScheduleRun run;
  run.model = a.model;
  run.output = a.output;
  run.tasks = a.tasks;
  run.show_sketches = a.show_sketches;
  autotune::AutoScheduleOptions& opt = run.search;
  opt.trials = a.trials_named ? a.trials : 0;
  opt.early_stopping = a.early_stopping;
  opt.time_budget_s = a.time_budget_min * 60;
  opt.measure = measure_options(a);
  opt.records_path = a.output;
  if (!a.show_sketches && a.tasks != "list") opt.resume = resume_records(a);
  run.model_check = [&a, &copt] { check_model_after_tuning(a, copt); };
  run_auto_schedule(std::move(run), copt);
}

void run_tune(const TuneArgs& a) {
  CompileOptions copt = a.flags.compile_options();
  if (a.show_sketches && !a.auto_schedule)
    throw Error("--show-sketches: sketches are the auto-scheduler's; add --auto-schedule");
  if (a.auto_schedule) {
    for (const auto& [given, flag] :
         {std::pair{a.tuner_named, "--tuner"}, std::pair{!a.prior.empty(), "--tuning-records"},
          std::pair{!a.plot.empty(), "--plot"},
          std::pair{a.conv_layouts != "both", "--conv-layouts"}}) {
      if (given) {
        throw Error(fmt::format(
            "{}: a flag of the template tuner, which --auto-schedule does not use", flag));
      }
    }
    return run_auto_schedule_tune(a, copt);
  }
  Target target = Target::parse(copt.target);
  GraphPlan plan = plan_graph(a.model, copt);
  GraphPlan other;  // plan 1: the convs' other layouts
  std::vector<autotune::Task> all = autotune::extract_tasks(plan.graph, plan.groups);
  if (a.conv_layouts == "both") {
    other = plan_graph_other_conv_layouts(a.model, copt);
    all = autotune::extract_tasks_both_layouts(plan.graph, plan.groups, other.graph, other.groups);
  }
  if (a.tasks == "list") {
    print_tasks(all);
    return;
  }
  if (all.empty()) {
    std::cout << a.model << " has no tunable kernels (Conv, MatMul, Gemm)\n";
    return;
  }
  std::vector<autotune::Task> tasks;
  for (size_t i : parse_task_list(a.tasks, all.size())) tasks.push_back(all[i]);

  autotune::TuneOptions opt;
  opt.tuner = a.tuner;
  if (!a.tuner_named && !autotune::xgb_tuner_available()) {
    std::cerr << fmt::format(
        "note: this Tessel was built without XGBoost (TESSEL_WITH_XGBOOST=OFF): tuning with the {} "
        "tuner instead of xgb\n",
        a.tuner);
  }
  opt.trials = a.trials;
  opt.early_stopping = a.early_stopping;
  opt.time_budget_s = a.time_budget_min * 60;
  opt.measure = measure_options(a);
  opt.records_path = a.output;
  opt.resume = resume_records(a);
  if (!a.prior.empty()) opt.prior = load_with_warnings(a.prior);

  bool live = interactive();
  TuneCurves curves;
  auto progress = [&](const autotune::TuneProgress& p) {
    curves.add(p);
    if (!live && !p.finished) return;
    std::cerr << fmt::format(
                     "{}[Task {:>2}/{:>2}] Current/Best: {:>7.2f}/{:>7.2f} GFLOPS | Progress: "
                     "({}/{}) | {:.1f} s",
                     live ? "\r" : "", p.task + 1, p.num_tasks, p.current_gflops, p.best_gflops,
                     p.trials_done, p.trials_total, p.elapsed_s)
              << (p.finished ? " Done.\n" : "") << std::flush;
  };
  std::cerr << fmt::format(
      "tuning {} tasks of {} for {} -mcpu={} with the {} tuner, {} trials each{}\n", tasks.size(),
      a.model, target.triple, target.cpu, a.tuner, a.trials,
      a.time_budget_min > 0 ? fmt::format(", {} min in all", a.time_budget_min) : "");
  std::vector<autotune::TaskResult> results = autotune::tune_tasks(
      {{&plan.graph, &plan.groups}, {&other.graph, &other.groups}}, tasks, target, opt, progress);
  print_summary(results);
  std::cout << fmt::format("records: {}\n", a.output);  // before the check, which can fail
  if (!a.plot.empty()) {
    write_text_file(a.plot, "the plot", curves.svg(a.model));
    std::cout << fmt::format("tuning curves: {}\n", a.plot);
  }
  check_model_after_tuning(a, copt);
}

}  // namespace

void print_slow_phases(int measurements) {
  if (measurements == 0) return;
  std::cout << fmt::format(
      "{} measurement(s) ran in a slow phase of the machine (the untuned kernel over {}x its "
      "median time beside them): costed over that median\n",
      measurements, autotune::BaselineHistory::kSlowPhase);
}

// "all", or "0,2,5-7" → the task positions (Error naming the flag for a bad or out-of-range entry).
std::vector<size_t> parse_task_list(const std::string& text, size_t num_tasks) {
  std::vector<size_t> out;
  if (text == "all") {
    for (size_t i = 0; i < num_tasks; ++i) out.push_back(i);
    return out;
  }
  std::set<size_t> chosen;
  for (const std::string& item : split_list(text, "--tasks")) {
    size_t dash = item.find('-');
    std::optional<size_t> lo = parse_whole_number<size_t>(item.substr(0, dash));
    std::optional<size_t> hi =
        dash == std::string::npos ? lo : parse_whole_number<size_t>(item.substr(dash + 1));
    if (!lo || !hi) {
      throw Error(fmt::format(
          "--tasks: '{}' is not a task number or range (expected all, list or e.g. 0,2,5-7)",
          item));
    }
    if (*lo > *hi || *hi >= num_tasks) {
      throw Error(fmt::format("--tasks: '{}' is out of range: the model has tasks 0 to {}", item,
                              num_tasks - 1));
    }
    for (size_t i = *lo; i <= *hi; ++i) chosen.insert(i);
  }
  if (chosen.empty()) throw Error("--tasks: no task given (expected all, list or e.g. 0,2,5-7)");
  return {chosen.begin(), chosen.end()};
}

void print_tasks(const std::vector<autotune::Task>& tasks) {
  std::cout << fmt::format("{:>4}  {:<18} {:>6} {:>10}  {:<9}  {}\n", "task", "op", "weight",
                           "MFLOP", "layout of", "workload");
  std::vector<int> partner = layout_partners(tasks);
  for (size_t i = 0; i < tasks.size(); ++i) {
    std::cout << fmt::format("{:>4}  {:<18} {:>6} {:>10.2f}  {:<9}  {}\n", i, tasks[i].op,
                             tasks[i].weight, tasks[i].flops / 1e6,
                             partner[i] < 0 ? "" : fmt::format("task {}", partner[i]),
                             tasks[i].workload);
  }
}

void add_tune_command(CLI::App& app) {
  auto args = std::make_shared<TuneArgs>();
  CLI::App* cmd =
      app.add_subcommand("tune", "Tune the model's kernels and append tuning records to a file");
  cmd->add_option("model", args->model, "the ONNX model file")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("-o,--output", args->output,
                  "the records file to write (JSON lines, appended as tuning goes)")
      ->required();
  add_model_flags(*cmd, args->flags);
  cmd->add_option("--trials", args->trials, "measured configs per task")
      ->check(number_in(1, kMaxCount))
      ->capture_default_str();
  cmd->add_option("--tuner", args->tuner, tuner_help())
      ->check(tuner_validator())
      ->capture_default_str();
  cmd->add_option("--early-stopping", args->early_stopping,
                  "end a task after this many trials without improvement (0: never)")
      ->check(number_in(0, kMaxCount))
      ->capture_default_str();
  cmd->add_option("--timeout", args->timeout_s, "seconds for building and running one candidate")
      ->check(number_in(1e-3, autotune::kMaxTimeoutS))
      ->capture_default_str();
  cmd->add_option("--number", args->number, "runs per measurement")
      ->check(number_in(1, kMaxCount))
      ->capture_default_str();
  cmd->add_option("--repeat", args->repeat, "measurements per candidate")
      ->check(number_in(1, kMaxRepeat))
      ->capture_default_str();
  cmd->add_option("--min-repeat-ms", args->min_repeat_ms,
                  "raise --number until a measurement takes this long")
      ->check(number_in(0, kMaxTime))
      ->capture_default_str();
  cmd->add_option("--tuning-records", args->prior,
                  "records of earlier runs: their configs are not measured again, similar "
                  "workloads guide xgb")
      ->check(CLI::ExistingFile);
  cmd->add_option("--plot", args->plot,
                  "draw each task's best GFLOP/s against trials and against time as an SVG file");
  cmd->add_flag(
      "--cache-flush", args->cache_flush,
      "flush the CPU caches before each timed run, as a kernel inside a model finds them");
  cmd->add_flag("--resume", args->resume,
                "continue a run whose records file (-o) exists: measured configs are skipped");
  cmd->add_option("--tasks", args->tasks,
                  "tasks to tune: all, list (print them and stop), or e.g. 0,2,5-7")
      ->capture_default_str();
  cmd->add_option("--time-budget", args->time_budget_min, "minutes for the whole run (0: no limit)")
      ->check(number_in(0, kMaxTime))
      ->capture_default_str();
  cmd->add_option(
         "--model-check-rounds", args->model_check_rounds,
         "after tuning, time the model built with the records against the untuned one in this many "
         "alternating rounds, and veto configs that are not at least 2% faster in the model (0: "
         "skip "
         "the check)")
      ->check(number_in(0, kMaxCount))
      ->capture_default_str();
  cmd->add_option(
         "--conv-layouts", args->conv_layouts,
         "both: tune each packable conv direct and packed (NCHW16c), compile takes the faster; "
         "rule: only the layout the compiler picks without records")
      ->check(CLI::IsMember({"both", "rule"}))
      ->capture_default_str();
  cmd->add_flag("--auto-schedule", args->auto_schedule,
                "tune every fused kernel with the template-free auto-scheduler (sketches, "
                "evolutionary search, a learned cost model); --trials is then the total over all "
                "tasks (default 64 per task, 1000 with --time-budget)");
  cmd->add_flag("--show-sketches", args->show_sketches,
                "with --auto-schedule: print the stages and sketches of the --tasks chosen, and "
                "stop");
  cmd->callback([args, cmd] {
    args->tuner_named = cmd->count("--tuner") > 0;
    args->trials_named = cmd->count("--trials") > 0;
    run_tune(*args);
  });
}

}  // namespace tessel::cli
