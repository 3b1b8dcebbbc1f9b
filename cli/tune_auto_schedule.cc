#include "cli/tune_auto_schedule.h"

#include <fmt/format.h>

#include <cmath>
#include <iostream>
#include <memory>

#include "autotune/auto_schedule/search_task.h"
#include "cli/cli_util.h"
#include "ir/error.h"

namespace tessel::cli {
namespace {

void print_sketches(const std::vector<autotune::Task>& all, const std::vector<size_t>& chosen,
                    const GraphPlan& plan, const Target& target) {
  CpuModel cpu = CpuModel::of(target);
  for (size_t i : chosen) {
    const autotune::Task& t = all[i];
    autotune::TaskComputation c = autotune::task_computation(
        plan.graph, plan.groups.at(static_cast<size_t>(t.group)), t.group, cpu);
    std::vector<autotune::Sketch> sketches = autotune::task_sketches(c);
    std::cout << fmt::format("task {} ({}, weight {}, {:.2f} MFLOP): {}\nstages:\n{}", i, t.op,
                             t.weight, t.flops / 1e6, c.group.name, c.dag.str());
    for (size_t k = 0; k < sketches.size(); ++k)
      std::cout << fmt::format("sketch {}:\n{}", k, sketches[k].str(c.dag));
    std::cout << "\n";
  }
}

std::string micros(double s) {
  return std::isfinite(s) ? fmt::format("{:.1f} us", s * 1e6) : std::string("failed");
}

void print_summary(const std::vector<autotune::AutoScheduleResult>& results) {
  std::cout << fmt::format(
      "\n{:>4}  {:<18} {:>6} {:>8} {:>6} {:>6} {:>6}  {:>12} {:>12} {:>8} {:>9}  {}\n", "task",
      "op", "weight", "sketches", "trials", "errors", "rules", "untuned (ms)", "tuned (ms)",
      "speed-up", "GFLOP/s", "stopped by");
  double untuned = 0, tuned = 0;
  for (size_t i = 0; i < results.size(); ++i) {
    const autotune::AutoScheduleResult& r = results[i];
    double speedup = r.fallback_cost_s / r.best_cost_s;
    std::cout << fmt::format(
        "{:>4}  {:<18} {:>6} {:>8} {:>6} {:>6} {:>6}  {:>12.4f} {:>12.4f} {:>7.2f}x {:>9.1f}  {}\n",
        i, r.task.op, r.task.weight, r.sketches, r.trials + r.resumed, r.errors, r.invalid,
        r.fallback_cost_s * 1e3, r.best_cost_s * 1e3, std::isfinite(speedup) ? speedup : 0.0,
        r.task.flops / r.best_cost_s / 1e9, r.stop_reason);
    untuned += r.task.weight * r.fallback_cost_s;
    tuned += r.task.weight * r.best_cost_s;
  }
  for (size_t i = 0; i < results.size(); ++i) {
    if (results[i].invalid > 0) {
      std::cout << fmt::format(
          "warning: task {}: {} program(s) did not make a valid schedule (a bug of a sketch "
          "rule or of the op's schedule template), the first: {}\n",
          i, results[i].invalid, results[i].first_invalid);
    }
  }
  std::cout << fmt::format(
      "kernels alone, weighted by occurrence: {:.4f} ms untuned, {:.4f} ms tuned ({:.2f}x; each "
      "measured in isolation)\n",
      untuned * 1e3, tuned * 1e3, untuned / tuned);
  double search = 0, measure = 0;
  int slow = 0;
  for (const autotune::AutoScheduleResult& r : results)
    search += r.search_s, measure += r.measure_s, slow += r.slow_phases;
  print_slow_phases(slow);
  std::cout << fmt::format(
      "time: {:.1f} s proposing programs (evolution, cost model), {:.1f} s measuring them\n",
      search, measure);
}

}  // namespace

void run_auto_schedule(AutoScheduleRun run, const CompileOptions& copt) {
  Target target = Target::parse(copt.target);
  GraphPlan plan = plan_graph(run.model, copt);
  std::vector<autotune::Task> all = autotune::extract_auto_tasks(plan.graph, plan.groups);
  if (run.tasks == "list" && !run.show_sketches) {
    print_tasks(all);
    return;
  }
  if (all.empty()) {
    std::cout << run.model << " has no kernels to tune\n";
    return;
  }
  std::vector<size_t> chosen = parse_task_list(run.tasks == "list" ? "all" : run.tasks, all.size());
  if (run.show_sketches) {
    print_sketches(all, chosen, plan, target);
    return;
  }
  std::vector<autotune::Task> tasks;
  for (size_t i : chosen) tasks.push_back(all[i]);
  if (run.search.trials == 0) {
    int per_task = run.search.time_budget_s > 0 ? kBudgetedTrialsPerTask : kTrialsPerTask;
    run.search.trials = per_task * static_cast<int>(tasks.size());
  }
  std::unique_ptr<autotune::CostModel> model = autotune::make_cost_model(run.search.seed);
  bool live = interactive();
  auto progress = [&](const autotune::AutoScheduleProgress& p) {
    std::cerr << fmt::format(
                     "{}[Task {:>3}/{:>3}] round {:>3} | best {:>10} {:>8.2f} GFLOP/s | trials "
                     "{}/{} | est. model latency {:.3f} ms | {:.1f} s",
                     live ? "\r" : "", p.task + 1, p.num_tasks, p.round, micros(p.best_cost_s),
                     p.info->flops / p.best_cost_s / 1e9, p.trials_done, p.trials_total,
                     p.est_latency_s * 1e3, p.elapsed_s)
              << (live ? "" : "\n") << std::flush;
  };
  std::cerr << fmt::format(
      "auto-scheduling {} tasks of {} for {} -mcpu={}: {} trials in all{}, cost model {}\n",
      tasks.size(), run.model, target.triple, target.cpu, run.search.trials,
      run.search.time_budget_s > 0 ? fmt::format(", {:.1f} min", run.search.time_budget_s / 60)
                                   : "",
      model->name());
  std::vector<autotune::AutoScheduleResult> results = autotune::auto_schedule_tasks(
      {{&plan.graph, &plan.groups}}, tasks, target, run.search, *model, progress);
  if (live) std::cerr << "\n";
  print_summary(results);
  std::cout << fmt::format("records: {}\n", run.output);
  if (run.model_check) run.model_check();
}

}  // namespace tessel::cli
