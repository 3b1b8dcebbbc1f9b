// What tuning buys (docs/benchmarks.md; bench/run_tuning_bench.sh runs it). Every mode takes
// --target T (default: the host CPU; "llvm -mcpu=haswell" runs AVX2 code on an AVX-512 machine).
//   tune_bench kernels [--trials N] [--tuner xgb] [--records FILE] [--filter S] [--markdown]
//     tunes single-op kernels (ResNet-50, MobileNetV2, BERT shapes) and reports the untuned
//     (fallback) and tuned GFLOP/s next to an Eigen reference computed in this process;
//   tune_bench tuners [--trials N] [--seeds K] [--tuners xgb,random] [--every N] [--filter S]
//   [--markdown]
//     tunes one conv and one dense task with each tuner and prints the best-so-far GFLOP/s at
//     trial checkpoints, averaged over seeds: which tuner finds fast configs in fewer trials;
//   tune_bench auto [--trials N | --seconds S] [--tuner xgb] [--seed N] [--records DIR]
//   [--filter S] [--markdown]
//     the auto-scheduler against the template tuner and the untuned kernel, per kernel (softmax,
//     layer norm and two means too), at equal trials or equal time.
#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <Eigen/Core>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <functional>
#include <iostream>
#include <limits>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "autotune/auto_schedule/search.h"
#include "autotune/auto_schedule/search_task.h"
#include "autotune/task.h"
#include "autotune/tune.h"
#include "autotune/tuner.h"
#include "bench/bench_kernels.h"
#include "codegen/target.h"
#include "driver/compile.h"
#include "ir/error.h"
#include "ir/graph.h"
#include "passes/pipeline.h"
#include "runtime/fill.h"
#include "runtime/thread_pool.h"

namespace tessel::bench {

namespace {

// Every mode's target: the host CPU, or --target's (main).
std::string g_target = "llvm -mcpu=native";

// The tasks of the tuner comparison: convs of the direct template (ResNet for CIFAR, the shape of
// resnet_mini's; ResNet-50 with packing disabled) and of the packed template (the same ResNet-50
// conv), and a BERT dense layer.
const std::vector<std::string> kTunerKernels = {"conv/cifar-3x3-32", "conv/r50-3x3-28-direct",
                                                "conv/r50-3x3-28", "dense/bert"};

// A records file in the temp directory, removed when done; or, given a path, that file (emptied
// first) kept.
class TempRecords {
 public:
  TempRecords() {
    static int counter = 0;
    std::string name = fmt::format("tune_bench-{}-{}.json", getpid(), counter++);
    path_ = (std::filesystem::temp_directory_path() / name).string();
    std::filesystem::remove(path_);
  }
  explicit TempRecords(std::string kept) : path_(std::move(kept)), keep_(true) {
    std::filesystem::remove(path_);
  }
  ~TempRecords() {
    if (!keep_) std::filesystem::remove(path_);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  bool keep_ = false;
};

// A kernel's graph after the graph passes, with its one tunable task.
struct KernelTask {
  graph::Graph graph;
  std::vector<passes::FusedGroup> groups;
  autotune::Task task;
};

// The graph passes of a kernel: its own disabled passes, and no Winograd, whose transforms would
// make a 3x3 conv several kernels none of which is the conv template's.
passes::GraphPipelineOptions pipeline_options(const KernelSpec& k) {
  passes::GraphPipelineOptions opt;
  opt.cpu = CpuModel::of(Target::parse(g_target));
  opt.disabled_passes = k.disabled_passes;
  opt.disabled_passes.push_back("winograd_conv");
  return opt;
}

KernelTask plan_kernel(const KernelSpec& k) {
  KernelTask t{build_graph(k), {}, {}};
  t.groups = passes::run_graph_pipeline(t.graph, pipeline_options(k)).groups;
  std::vector<autotune::Task> tasks = autotune::extract_tasks(t.graph, t.groups);
  if (tasks.size() != 1)
    throw Error(fmt::format("{}: expected one tunable task, found {}", k.name, tasks.size()));
  t.task = tasks[0];
  return t;
}

// The CLI's measurement settings (tessel tune's defaults), so the numbers match a real tuning run.
autotune::TuneOptions tune_options(const std::string& tuner, int trials, uint64_t seed,
                                   const std::string& records) {
  autotune::TuneOptions opt;
  opt.tuner = tuner;
  opt.trials = trials;
  opt.seed = seed;
  opt.records_path = records;
  opt.measure.min_repeat_ms = 20;
  return opt;
}

autotune::TaskResult tune(const KernelTask& kt, const autotune::TuneOptions& opt,
                          const std::function<void(const autotune::TuneProgress&)>& on_progress) {
  return autotune::tune_tasks(kt.graph, kt.groups, {kt.task}, Target::parse(g_target), opt,
                              on_progress)
      .at(0);
}

double gflops(double flops, double seconds) {
  return std::isfinite(seconds) && seconds > 0 ? flops / seconds / 1e9 : 0;
}

// ---- Eigen reference ----

using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using MapMat = Eigen::Map<RowMajor>;
using ConstMap = Eigen::Map<const RowMajor>;

std::vector<float> random_floats(int64_t n) {
  std::vector<float> v(static_cast<size_t>(n));
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> dist(-1, 1);
  for (float& x : v) x = dist(rng);
  return v;
}

// Caffe's im2col: cols[(c * kernel + i) * kernel + j][oy * out + ox] = padded x[c][oy*s + i][ox*s +
// j].
void im2col(const KernelSpec& k, const float* x, float* cols, int threads) {
  int64_t out = conv_out_size(k), rows = k.cin * k.kernel * k.kernel;
#pragma omp parallel for num_threads(threads)
  for (int64_t r = 0; r < rows; ++r) {
    int64_t c = r / (k.kernel * k.kernel), i = r / k.kernel % k.kernel, j = r % k.kernel;
    float* dst = cols + r * out * out;
    for (int64_t oy = 0; oy < out; ++oy) {
      int64_t y = oy * k.stride + i - k.pad;
      for (int64_t ox = 0; ox < out; ++ox) {
        int64_t xx = ox * k.stride + j - k.pad;
        bool inside = y >= 0 && y < k.size && xx >= 0 && xx < k.size;
        dst[oy * out + ox] = inside ? x[(c * k.size + y) * k.size + xx] : 0.0f;
      }
    }
  }
}

// The reference as a callable that runs it once: an Eigen product of the same shapes (per batch),
// or im2col + GEMM per group for convolutions (skipping im2col for 1x1 stride-1 convs, as Caffe
// does). Grouped convs run their groups in parallel, as Eigen threads only large products.
std::function<void()> eigen_reference(const KernelSpec& k, int threads) {
  struct Buffers {
    std::vector<float> a, b, c,
        cols;  // a x b = c; a conv's input, weight, output and im2col matrix
  };
  auto buf = std::make_shared<Buffers>();
  switch (k.kind) {
    case Kind::kDense:
      *buf = {
          random_floats(k.m * k.k), random_floats(k.n * k.k), std::vector<float>(k.m * k.n), {}};
      return [buf, k] {
        MapMat(buf->c.data(), k.m, k.n).noalias() =
            ConstMap(buf->a.data(), k.m, k.k) * ConstMap(buf->b.data(), k.n, k.k).transpose();
      };
    case Kind::kBatchMatMul:
      *buf = {random_floats(k.batch * k.m * k.k),
              random_floats(k.batch * k.k * k.n),
              std::vector<float>(k.batch * k.m * k.n),
              {}};
      return [buf, k] {
        for (int64_t i = 0; i < k.batch; ++i) {
          MapMat(buf->c.data() + i * k.m * k.n, k.m, k.n).noalias() =
              ConstMap(buf->a.data() + i * k.m * k.k, k.m, k.k) *
              ConstMap(buf->b.data() + i * k.k * k.n, k.k, k.n);
        }
      };
    case Kind::kConv:
      break;
    case Kind::kSoftmax:
    case Kind::kLayerNorm:
    case Kind::kReduceMean:
      throw Error(fmt::format("{}: no Eigen reference", k.name));
  }
  int64_t pixels = conv_out_size(k) * conv_out_size(k),
          rows = k.cin / k.group * k.kernel * k.kernel;
  int64_t cout_g = k.cout / k.group;
  bool direct = k.kernel == 1 && k.stride == 1 && k.pad == 0;
  *buf = {random_floats(k.cin * k.size * k.size), random_floats(k.cout * rows),
          std::vector<float>(k.cout * pixels),
          std::vector<float>(direct ? 0 : k.group * rows * pixels)};
  return [buf, k, pixels, rows, cout_g, direct, threads] {
    if (!direct) im2col(k, buf->a.data(), buf->cols.data(), threads);
    const float* cols = direct ? buf->a.data() : buf->cols.data();
    auto gemm = [&](int64_t g) {
      MapMat(buf->c.data() + g * cout_g * pixels, cout_g, pixels).noalias() =
          ConstMap(buf->b.data() + g * cout_g * rows, cout_g, rows) *
          ConstMap(cols + g * rows * pixels, rows, pixels);
    };
    if (k.group == 1) return gemm(0);  // Eigen threads it
#pragma omp parallel for num_threads(threads)
    for (int64_t g = 0; g < k.group; ++g) gemm(g);
  };
}

// Median seconds per run: a few warm-up runs, then samples of `number` runs (about 1 ms each)
// until at least 50 ms and 5 samples are timed.
double time_median_s(const std::function<void()>& f) {
  using Clock = std::chrono::steady_clock;
  auto time = [&](int number) {
    auto t0 = Clock::now();
    for (int i = 0; i < number; ++i) f();
    return std::chrono::duration<double>(Clock::now() - t0).count();
  };
  double once = time(3) / 3;
  int number = std::max(1, static_cast<int>(std::ceil(1e-3 / std::max(once, 1e-9))));
  std::vector<double> samples;
  double total = 0;
  while (total < 0.05 || samples.size() < 5) {
    double s = time(number);
    total += s;
    samples.push_back(s / number);
  }
  std::sort(samples.begin(), samples.end());
  size_t n = samples.size();
  return n % 2 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2;
}

// ---- output ----

struct Table {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;

  void print(bool markdown) const {
    std::vector<size_t> width(header.size());
    for (size_t c = 0; c < header.size(); ++c) {
      width[c] = header[c].size();
      for (const auto& r : rows) width[c] = std::max(width[c], r[c].size());
    }
    auto line = [&](const std::vector<std::string>& cells) {
      std::string s = markdown ? "|" : "";
      for (size_t c = 0; c < cells.size(); ++c) {
        if (markdown) {
          s += fmt::format(" {} |", cells[c]);
        } else {  // names left, numbers right
          s += c == 0 ? fmt::format("{:<{}}", cells[c], width[c])
                      : fmt::format("  {:>{}}", cells[c], width[c]);
        }
      }
      std::cout << s << "\n";
    };
    line(header);
    if (markdown) {
      std::string rule = "|";
      for (size_t c = 0; c < header.size(); ++c) rule += "---|";
      std::cout << rule << "\n";
    }
    for (const auto& r : rows) line(r);
  }
};

// A table cell: "-" for a failed or missing measurement.
std::string num(double x, int digits = 1) {
  return x > 0 && std::isfinite(x) ? fmt::format("{:.{}f}", x, digits) : "-";
}

// The kernels named (all when none) whose name contains `filter`; with `templates_only`, those
// with a schedule template.
std::vector<const KernelSpec*> select(const std::vector<std::string>& names,
                                      const std::string& filter, bool templates_only = true) {
  std::vector<const KernelSpec*> out;
  for (const KernelSpec& k : kKernels) {
    if (templates_only && !templated(k)) continue;
    bool listed = names.empty() || std::find(names.begin(), names.end(), k.name) != names.end();
    if (listed && std::string(k.name).find(filter) != std::string::npos) out.push_back(&k);
  }
  if (out.empty()) throw Error(fmt::format("--filter: '{}' matches no kernel", filter));
  return out;
}

void print_setup(int threads, const char* who) {
  Target t = Target::parse(g_target);
  std::cout << fmt::format("Tessel target {} -mcpu={} ({}-bit vectors); {} threads for {}\n\n",
                           t.triple, t.cpu, t.vector_bits(), threads, who);
}

// ---- modes ----

struct Args {
  int trials = 200, seeds = 3, every = 8;
  uint64_t seed = 0;  // auto: both tuners' seed
  double seconds = 0;
  std::string tuner = autotune::default_tuner_name(), records, filter;
  std::vector<std::string> tuners = autotune::tuner_names();
  bool markdown = false;
};

void run_kernels(const Args& a) {
  int threads = runtime::num_threads();
  std::vector<const KernelSpec*> kernels = select({}, a.filter);
  TempRecords temp;
  const std::string& records = a.records.empty() ? temp.path() : a.records;
  // Tuning forks a measuring child per candidate; Eigen's OpenMP threads start only after the
  // last fork, as a child forked while they hold locks may hang.
  std::vector<autotune::TaskResult> results;
  for (const KernelSpec* k : kernels) {
    KernelTask kt = plan_kernel(*k);
    std::cerr << fmt::format("tuning {} ({}), {} trials with {}\n", k->name, kt.task.workload,
                             a.trials, a.tuner);
    results.push_back(tune(kt, tune_options(a.tuner, a.trials, 0, records), {}));
    const autotune::TaskResult& r = results.back();
    std::cerr << fmt::format("  {} trials, {} errors, stopped by {}; best {}\n", r.trials, r.errors,
                             r.stop_reason, r.best_config);
  }
  Eigen::setNbThreads(threads);
  Table table{{"kernel", "shape", "MFLOP", "fallback GFLOP/s", "tuned GFLOP/s", "tuned/fallback",
               "Eigen GFLOP/s", "tuned/Eigen", "trials"},
              {}};
  for (size_t i = 0; i < kernels.size(); ++i) {
    const autotune::TaskResult& r = results[i];
    double flops = r.task.flops;
    double fallback = gflops(flops, r.fallback_cost_s), tuned = gflops(flops, r.best_cost_s);
    double eigen = gflops(flops, time_median_s(eigen_reference(*kernels[i], threads)));
    table.rows.push_back(
        {kernels[i]->name, shape_text(*kernels[i]), num(flops / 1e6), num(fallback), num(tuned),
         num(tuned / fallback, 2), num(eigen), num(tuned / eigen, 2),
         r.errors ? fmt::format("{} ({} failed)", r.trials, r.errors) : std::to_string(r.trials)});
  }
  print_setup(threads, "Tessel and Eigen");
  table.print(a.markdown);
  if (!a.records.empty()) std::cout << fmt::format("\nrecords: {}\n", a.records);
}

// Best-so-far GFLOP/s after each trial (index 0: none yet) of one tuning run.
std::vector<double> best_curve(const KernelTask& kt, const std::string& tuner, int trials,
                               uint64_t seed) {
  TempRecords records;
  std::vector<double> curve(static_cast<size_t>(trials) + 1, 0);
  auto record = [&](const autotune::TuneProgress& p) {
    if (p.trials_done <= trials) curve[static_cast<size_t>(p.trials_done)] = p.best_gflops;
  };
  autotune::TaskResult r = tune(kt, tune_options(tuner, trials, seed, records.path()), record);
  // A space smaller than the trial budget ends early: the best stays what it was.
  for (size_t t = 1; t < curve.size(); ++t) curve[t] = std::max(curve[t], curve[t - 1]);
  std::cerr << fmt::format(
      "  {} seed {}: best {:.1f} GFLOP/s after {} trials ({} failed, stopped by {})\n", tuner, seed,
      curve.back(), r.trials, r.errors, r.stop_reason);
  return curve;
}

void run_tuners(const Args& a) {
  print_setup(runtime::num_threads(), "Tessel");
  for (const KernelSpec* k : select(kTunerKernels, a.filter)) {
    KernelTask kt = plan_kernel(*k);
    std::cerr << fmt::format("{} ({}): {} trials x {} seeds per tuner\n", k->name, kt.task.workload,
                             a.trials, a.seeds);
    std::vector<std::vector<std::vector<double>>> curves;  // tuner -> seed -> curve
    double best_any = 0;
    for (const std::string& tuner : a.tuners) {
      curves.emplace_back();
      for (int s = 0; s < a.seeds; ++s) {
        curves.back().push_back(best_curve(kt, tuner, a.trials, static_cast<uint64_t>(s)));
        best_any = std::max(best_any, curves.back().back().back());
      }
    }
    std::cout << fmt::format("{} {}: best-so-far GFLOP/s by trial, mean of {} seeds\n\n", k->name,
                             shape_text(*k), a.seeds);
    Table curve{{"trials"}, {}};
    curve.header.insert(curve.header.end(), a.tuners.begin(), a.tuners.end());
    for (int t = 1; t <= a.trials; ++t) {
      if (t != 1 && t % a.every != 0 && t != a.trials) continue;
      std::vector<std::string> row = {std::to_string(t)};
      for (const auto& per_seed : curves) {
        double sum = 0;
        for (const auto& c : per_seed) sum += c[static_cast<size_t>(t)];
        row.push_back(num(sum / a.seeds));
      }
      curve.rows.push_back(row);
    }
    curve.print(a.markdown);

    // How soon each tuner gets within 5% of the best config any run found.
    std::cout << fmt::format(
        "\n{}: final best GFLOP/s over {} seeds, and trials to reach 95% of the best of all runs "
        "({:.1f} GFLOP/s)\n\n",
        k->name, a.seeds, best_any);
    Table final{{"tuner", "mean", "min", "max", "trials to 95%", "runs reaching 95%"}, {}};
    for (size_t i = 0; i < a.tuners.size(); ++i) {
      std::vector<double> finals;
      std::vector<int> reach;
      for (const auto& c : curves[i]) {
        finals.push_back(c.back());
        auto it = std::find_if(c.begin(), c.end(), [&](double g) { return g >= 0.95 * best_any; });
        if (it != c.end()) reach.push_back(static_cast<int>(it - c.begin()));
      }
      double mean = std::accumulate(finals.begin(), finals.end(), 0.0) / a.seeds;
      double reach_mean =
          reach.empty() ? 0 : std::accumulate(reach.begin(), reach.end(), 0.0) / reach.size();
      final.rows.push_back({a.tuners[i], num(mean),
                            num(*std::min_element(finals.begin(), finals.end())),
                            num(*std::max_element(finals.begin(), finals.end())),
                            num(reach_mean, 0), fmt::format("{}/{}", reach.size(), a.seeds)});
    }
    final.print(a.markdown);
    std::cout << "\n";
  }
}

// Rounds in which run_auto times the untuned, template-tuned and auto-scheduled builds of a kernel
// in turns.
constexpr int kSideBySideRounds = 5;

// One kernel of run_auto: what each tuner found, and the records it wrote.
struct AutoRow {
  const KernelSpec* kernel;
  std::unique_ptr<TempRecords> template_records, auto_records;  // no template: null
  autotune::TaskResult template_result;
  autotune::AutoScheduleResult auto_result;
  double template_s = 0, auto_s = 0;
};

// `g` (the kernel's graph, or its floor_graph) compiled with `records` (none: untuned), as the
// kernel's tuning planned it.
CompiledModel compile_kernel(const KernelSpec& k, const graph::Graph& g,
                             const TempRecords* records) {
  CompileOptions opt;
  opt.target = g_target;
  opt.disabled_passes = pipeline_options(k).disabled_passes;
  if (records) opt.tuning_records = records->path();
  CompiledModel m = compile_graph(g, opt);
  for (int i = 0; i < m.num_inputs(); ++i) {
    runtime::NDArray x = m.executor().get_input(i).copy();
    runtime::fill(x, "random", 7u + static_cast<unsigned>(i));
    m.set_input(i, x);
  }
  return m;
}

// Seconds per run of each build, timed in turns over kSideBySideRounds rounds, the fastest
// round's: each tuner's own figures are its kernels' times over the untuned kernel's in its own
// run, and a slow phase of the VM during one tuner's run would otherwise decide the comparison.
// Each round runs a fresh copy of each build (its own inputs and outputs), the earlier copies
// kept so that their pages are not handed out again: with one placement per build, the same
// untuned layer norm over [128, 768], built twice, measured 0.86-0.96x as fast in its second
// build (we take it to be where its arrays land in the physically indexed L2).
std::vector<double> time_side_by_side(const std::vector<CompiledModel>& builds) {
  std::vector<double> best(builds.size(), std::numeric_limits<double>::infinity());
  std::vector<runtime::Model> copies;
  copies.reserve(builds.size() * kSideBySideRounds);
  for (int round = 0; round < kSideBySideRounds; ++round)
    for (size_t b = 0; b < builds.size(); ++b) {
      runtime::Model& m = copies.emplace_back(builds[b]);
      best[b] = std::min(best[b], time_median_s([&] { m.run(); }));
    }
  return best;
}

// The auto-scheduler against the template tuner and the untuned kernel on each kernel's one fused
// group, at equal trials, or at equal time with --seconds. Each tuner's best is then compiled from
// its records, as tessel compile would, and the three builds are timed side by side.
void run_auto(const Args& a) {
  print_setup(runtime::num_threads(), "Tessel");
  using Clock = std::chrono::steady_clock;
  auto seconds_since = [](Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
  };
  std::vector<AutoRow> rows;
  for (const KernelSpec* k : select({}, a.filter, false)) {
    // With --records DIR: DIR/<kernel>.template.json and DIR/<kernel>.auto.json ('/' as '_').
    auto records_file = [&](const char* tuner) {
      if (a.records.empty()) return std::make_unique<TempRecords>();
      std::string name = k->name;
      std::replace(name.begin(), name.end(), '/', '_');
      return std::make_unique<TempRecords>(
          (std::filesystem::path(a.records) / fmt::format("{}.{}.json", name, tuner)).string());
    };
    AutoRow row{k, nullptr, records_file("auto"), {}, {}, 0, 0};
    graph::Graph g = build_graph(*k);
    std::vector<passes::FusedGroup> groups =
        passes::run_graph_pipeline(g, pipeline_options(*k)).groups;
    std::vector<autotune::Task> tasks = autotune::extract_auto_tasks(g, groups);
    if (tasks.size() != 1)
      throw Error(fmt::format("{}: expected one kernel, found {}", k->name, tasks.size()));
    if (templated(*k)) {
      row.template_records = records_file("template");
      autotune::TuneOptions opt =
          tune_options(a.tuner, a.trials, a.seed, row.template_records->path());
      if (a.seconds > 0) opt.trials = 1 << 30, opt.time_budget_s = a.seconds;
      std::cerr << fmt::format("{}: the {} template tuner\n", k->name, a.tuner);
      auto t0 = Clock::now();
      KernelTask kt{g, groups, {}};
      kt.task = autotune::extract_tasks(g, groups).at(0);
      row.template_result = tune(kt, opt, {});
      row.template_s = seconds_since(t0);
    }
    autotune::AutoScheduleOptions opt;
    opt.trials = a.seconds > 0 ? 1 << 30 : a.trials;
    opt.time_budget_s = a.seconds;
    opt.seed = a.seed;
    opt.records_path = row.auto_records->path();
    opt.measure.min_repeat_ms = 20;
    std::unique_ptr<autotune::CostModel> model = autotune::make_cost_model(a.seed);
    std::cerr << fmt::format("{}: the auto-scheduler ({} cost model)\n", k->name, model->name());
    auto t0 = Clock::now();
    row.auto_result =
        autotune::auto_schedule_tasks({{&g, &groups}}, tasks, Target::parse(g_target), opt, *model)
            .at(0);
    row.auto_s = seconds_since(t0);
    rows.push_back(std::move(row));
  }

  // Timed after all tuning: tuning forks its measuring children, and the builds' thread pool
  // starts with the first run.
  Table table{{"kernel", "shape", "MFLOP", "untuned us", "template us", "auto us", "auto/template",
               "auto/untuned", "auto GFLOP/s", "auto/untuned in its run", "untuned/floor",
               "trials template/auto", "seconds template/auto", "auto proposing s"},
              {}};
  for (const AutoRow& row : rows) {
    const KernelSpec& k = *row.kernel;
    std::cerr << fmt::format("{}: timing the builds side by side\n", k.name);
    std::vector<CompiledModel> builds;
    graph::Graph g = build_graph(k);
    builds.push_back(compile_kernel(k, g, nullptr));
    builds.push_back(compile_kernel(k, g, row.auto_records.get()));
    if (row.template_records) builds.push_back(compile_kernel(k, g, row.template_records.get()));
    std::optional<graph::Graph> floor = floor_graph(k);
    if (floor) builds.push_back(compile_kernel(k, *floor, nullptr));
    std::vector<double> s = time_side_by_side(builds);
    double untuned = s[0], tuned_auto = s[1];
    double tuned_template = row.template_records ? s[2] : 0;
    const autotune::AutoScheduleResult& r = row.auto_result;
    auto us = [](double cost) { return num(cost * 1e6, 2); };
    bool t = row.template_records != nullptr;
    table.rows.push_back(
        {k.name, shape_text(k), num(r.task.flops / 1e6, 2), us(untuned),
         t ? us(tuned_template) : "-", us(tuned_auto),
         t ? num(tuned_template / tuned_auto, 2) : "-", num(untuned / tuned_auto, 2),
         num(gflops(r.task.flops, tuned_auto)), num(r.fallback_cost_s / r.best_cost_s, 2),
         floor ? num(untuned / s.back(), 2) : "-",
         fmt::format("{}/{}", t ? std::to_string(row.template_result.trials) : "-", r.trials),
         fmt::format("{}/{:.0f}", t ? num(row.template_s, 0) : "-", row.auto_s),
         num(r.search_s, 0)});
  }
  std::cout << fmt::format(
      "{}; each tuner's best compiled from its records and timed side by side with the untuned "
      "build, fastest of {} rounds; auto/x: how many times faster the auto-scheduler's kernel "
      "is; untuned/floor: the most any program could gain over the untuned kernel, which does "
      "at least the floor's work (bench_kernels.h, floor_graph)\n\n",
      a.seconds > 0 ? fmt::format("{} s per tuner and kernel", a.seconds)
                    : fmt::format("{} trials per tuner and kernel", a.trials),
      kSideBySideRounds);
  table.print(a.markdown);
}

}  // namespace

}  // namespace tessel::bench

int main(int argc, char** argv) {
  using namespace tessel::bench;
  CLI::App app{
      "Template tuning benchmarks: single-op kernels against Eigen, and tuners at equal trials"};
  app.require_subcommand(1);
  Args a;
  app.add_option("--target", g_target,
                 "the target of every kernel (\"llvm -mcpu=haswell\": AVX2 code on an AVX-512 "
                 "machine)")
      ->capture_default_str();
  auto common = [&](CLI::App* cmd) {
    cmd->add_option("--trials", a.trials, "measured configs per task, the fallback included")
        ->check(CLI::PositiveNumber)
        ->capture_default_str();
    cmd->add_option("--filter", a.filter, "only kernels whose name contains this");
    cmd->add_flag("--markdown", a.markdown, "print markdown tables");
  };
  CLI::App* kernels =
      app.add_subcommand("kernels", "Tune single-op kernels; fallback and tuned GFLOP/s vs Eigen");
  common(kernels);
  kernels->add_option("--tuner", a.tuner, "the search strategy")
      ->check(CLI::IsMember(tessel::autotune::tuner_names()))
      ->capture_default_str();
  kernels->add_option("--records", a.records,
                      "append the tuning records here (default: a temp file, removed)");
  CLI::App* tuners = app.add_subcommand(
      "tuners", "Best-so-far GFLOP/s by trial for each tuner, averaged over seeds");
  common(tuners);
  tuners->add_option("--seeds", a.seeds, "tuning runs per tuner (seeds 0..K-1)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  tuners->add_option("--tuners", a.tuners, "the tuners to compare")
      ->delimiter(',')
      ->check(CLI::IsMember(tessel::autotune::tuner_names()))
      ->capture_default_str();
  tuners->add_option("--every", a.every, "print a checkpoint every this many trials")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  CLI::App* autos = app.add_subcommand(
      "auto", "The auto-scheduler against the template tuner and the untuned kernel");
  common(autos);
  autos->add_option("--tuner", a.tuner, "the template tuner's search strategy")
      ->check(CLI::IsMember(tessel::autotune::tuner_names()))
      ->capture_default_str();
  autos
      ->add_option("--seconds", a.seconds,
                   "give each tuner this many seconds per kernel instead of --trials")
      ->check(CLI::NonNegativeNumber);
  autos->add_option("--seed", a.seed, "both tuners' random seed")->capture_default_str();
  autos
      ->add_option("--records", a.records,
                   "keep each tuner's records in this directory (KERNEL.template.json, "
                   "KERNEL.auto.json; default: temp files, removed)")
      ->check(CLI::ExistingDirectory);
  try {
    app.parse(argc, argv);
    if (autos->parsed()) run_auto(a);
    if (kernels->parsed()) run_kernels(a);
    if (tuners->parsed()) run_tuners(a);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  } catch (const std::exception& e) {
    std::cerr << "tune_bench: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
