// tessel run model.tar [--inputs in.npz] [--outputs out.npz] [--fill-mode random|zeros|ones]
//                      [--print-time --repeat N --number M] [--profile] [--print-top N]
// Loads the package with the runtime alone (no LLVM).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <iostream>
#include <map>
#include <memory>
#include <set>

#include "cli/cli_util.h"
#include "cli/commands.h"
#include "ir/error.h"
#include "runtime/fill.h"
#include "runtime/model.h"
#include "runtime/npz.h"
#include "runtime/output_file.h"

namespace tessel::cli {

namespace {

struct RunArgs {
  std::string package, inputs, outputs, fill_mode = "random";
  bool print_time = false, profile = false;
  int repeat = 1, number = 1, print_top = 0;
};

void set_inputs(runtime::Model& m, const RunArgs& a) {
  std::map<std::string, runtime::NDArray> given;
  if (!a.inputs.empty()) {
    for (auto& [name, array] : runtime::load_npz(a.inputs)) given[name] = array;
  }
  std::set<std::string> names;
  for (int i = 0; i < m.num_inputs(); ++i) names.insert(m.input_name(i));
  for (const auto& [name, array] : given) {
    if (!names.count(name)) {
      throw Error(fmt::format(
          "{} has an array '{}' but the model has no input of that name; its inputs are: {}",
          a.inputs, name, fmt::join(names, ", ")));
    }
  }
  for (int i = 0; i < m.num_inputs(); ++i) {
    auto it = given.find(m.input_name(i));
    if (it != given.end()) {
      try {
        m.set_input(i, it->second);
      } catch (const Error& e) {
        throw Error(fmt::format("{}: {}", a.inputs, e.what()));
      }
      continue;
    }
    runtime::NDArray x = m.executor().get_input(i).copy();
    try {
      runtime::fill(x, a.fill_mode, 42u + static_cast<unsigned>(i));
    } catch (const Error& e) {
      throw Error(fmt::format("--fill-mode: input '{}': {}; give it in --inputs", m.input_name(i),
                              e.what()));
    }
    m.set_input(i, x);
  }
}

// Mean per-iteration times of `repeat` batches of `number` runs each.
std::vector<double> time_runs(runtime::Model& m, int repeat, int number) {
  std::vector<double> ms;
  for (int r = 0; r < repeat; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    for (int n = 0; n < number; ++n) m.run();
    ms.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() /
        number);
  }
  return ms;
}

void print_profile(runtime::Model& m, int repeat, int top) {
  std::vector<double> total(m.plan().kernels.size(), 0);
  for (int r = 0; r < repeat; ++r) {
    std::vector<runtime::KernelTime> times = m.run_profiled();
    for (size_t k = 0; k < times.size(); ++k) total[k] += times[k].ms / repeat;
  }
  std::vector<size_t> order(total.size());
  for (size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::sort(order.begin(), order.end(), [&](size_t x, size_t y) { return total[x] > total[y]; });
  double sum = 0;
  for (double t : total) sum += t;
  size_t shown = top > 0 ? std::min(order.size(), static_cast<size_t>(top)) : order.size();
  std::cout << fmt::format("{:<28} {:<28} {:>10} {:>7} {:>9}  {}\n", "kernel", "ops", "time (ms)",
                           "%", "GFLOP/s", "output");
  for (size_t i = 0; i < shown; ++i) {
    const runtime::KernelEntry& k = m.plan().kernels[order[i]];
    const runtime::StorageEntry& out = m.plan().storage[k.args.back()];
    double t = total[order[i]];
    std::string gflops = k.flops > 0 && t > 0 ? fmt::format("{:.2f}", k.flops / (t * 1e6)) : "-";
    std::cout << fmt::format("{:<28} {:<28} {:>10.4f} {:>7.2f} {:>9}  {}\n", k.name,
                             k.ops.substr(0, 28), t, sum > 0 ? 100 * t / sum : 0.0, gflops,
                             describe(out.shape, out.dtype));
  }
  if (shown < order.size()) std::cout << fmt::format("... {} more kernels\n", order.size() - shown);
  std::cout << fmt::format("total {:.4f} ms over {} kernels (mean of {} profiled runs)\n", sum,
                           order.size(), repeat);
}

void run_package(const RunArgs& a) {
  if (!a.outputs.empty())
    runtime::check_replaceable(a.outputs, "the .npz");  // before running, not after
  runtime::Model m = runtime::load_package(a.package);
  set_inputs(m, a);
  m.run();  // warm-up, and the outputs
  std::vector<std::pair<std::string, runtime::NDArray>> outputs;
  for (int i = 0; i < m.num_outputs(); ++i)
    outputs.emplace_back(m.output_name(i), m.get_output(i).copy());
  if (!a.outputs.empty()) {
    runtime::save_npz(a.outputs, outputs);
    std::cout << fmt::format("wrote {} output(s) to {}\n", outputs.size(), a.outputs);
  } else {
    for (const auto& [name, y] : outputs) {
      std::cout << fmt::format("output '{}' {}:", name, describe(y));
      for (int64_t i = 0; i < std::min<int64_t>(y.numel(), 8) && y.dtype() == DataType::f32();
           ++i) {
        std::cout << fmt::format(" {:.6g}", y.data<float>()[i]);
      }
      std::cout << (y.numel() > 8 ? " ...\n" : "\n");
    }
  }
  if (a.print_time) {
    std::cout << fmt::format("Execution time summary ({} repeats x {} runs):\n", a.repeat,
                             a.number);
    std::cout << fmt::format("{:>10} {:>10} {:>10} {:>10} {:>10}\n", "mean (ms)", "median (ms)",
                             "min (ms)", "max (ms)", "std (ms)");
    std::cout << time_summary(time_runs(m, a.repeat, a.number)) << "\n";
  }
  if (a.profile) print_profile(m, std::max(a.repeat, 1), a.print_top);
}

}  // namespace

void add_run_command(CLI::App& app) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* cmd = app.add_subcommand("run", "Run a compiled package (loads without LLVM)");
  cmd->add_option("package", args->package, "the package (.tar) written by tessel compile")
      ->required();
  cmd->add_option("--inputs", args->inputs,
                  "an .npz with input arrays by name (missing ones are filled)");
  cmd->add_option("--outputs", args->outputs, "write the outputs by name to this .npz");
  cmd->add_option("--fill-mode", args->fill_mode, "how to fill inputs not in --inputs")
      ->check(CLI::IsMember({"random", "zeros", "ones"}))
      ->capture_default_str();
  cmd->add_flag("--print-time", args->print_time, "print mean/median/min/max/std of the run time");
  cmd->add_option("--repeat", args->repeat, "timed batches (--print-time, --profile)")
      ->check(number_in(1, kMaxCount))
      ->capture_default_str();
  cmd->add_option("--number", args->number, "runs per timed batch")
      ->check(number_in(1, kMaxCount))
      ->capture_default_str();
  cmd->add_flag("--profile", args->profile, "print a per-kernel time table, slowest first");
  cmd->add_option("--print-top", args->print_top, "show only the N slowest kernels in --profile")
      ->check(number_in(0, kMaxCount));
  cmd->callback([args] { run_package(*args); });
}

}  // namespace tessel::cli
