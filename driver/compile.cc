#include "driver/compile.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <tuple>
#include <utility>

#include "autotune/auto_schedule/search_task.h"
#include "autotune/records.h"
#include "autotune/task.h"
#include "codegen/build.h"
#include "codegen/kernel_objects.h"
#include "codegen/parallel_jobs.h"
#include "frontend/onnx_importer.h"
#include "ir/error.h"
#include "ir/op_table.h"
#include "passes/graph_util.h"
#include "passes/lower_to_te.h"
#include "passes/pipeline.h"
#include "passes/plan_memory.h"
#include "runtime/jit.h"
#include "te/lower.h"

namespace tessel {

CompiledModel::CompiledModel(runtime::Model model, std::vector<PrimFunc> funcs,
                             std::vector<std::string> objects, Target target,
                             std::vector<StageTiming> timings, std::string fusion_summary,
                             passes::MemoryPlan memory_plan)
    : runtime::Model(std::move(model)),
      funcs_(std::move(funcs)),
      objects_(std::move(objects)),
      target_(std::move(target)),
      timings_(std::move(timings)),
      fusion_summary_(std::move(fusion_summary)),
      memory_plan_(std::move(memory_plan)) {}

const std::vector<std::string>& dump_stages() {
  static const std::vector<std::string> stages = {"graph", "te", "tir", "llvm", "asm"};
  return stages;
}

namespace {

// Times stages into a list and reports each to an optional callback as it ends.
class Timer {
 public:
  Timer(std::vector<StageTiming>* out, std::function<void(const StageTiming&)> on_stage)
      : out_(out), on_stage_(std::move(on_stage)) {}
  template <class Fn>
  auto operator()(const std::string& stage, Fn fn) {
    auto t0 = std::chrono::steady_clock::now();
    auto done = [&] {
      record(
          {stage, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                      .count()});
    };
    if constexpr (std::is_void_v<decltype(fn())>) {
      fn();
      done();
    } else {
      auto r = fn();
      done();
      return r;
    }
  }
  void record(const StageTiming& t) {
    out_->push_back(t);
    if (on_stage_) on_stage_(t);
  }

 private:
  std::vector<StageTiming>* out_;
  std::function<void(const StageTiming&)> on_stage_;
};

// Turns the graph inputs named in `params` into constants; Error for an unknown name or a value
// whose type differs from the input's.
void bind_params(graph::Graph& g, const std::map<std::string, graph::TensorData>& params) {
  for (const auto& [name, data] : params) {
    auto it = std::find_if(g.inputs.begin(), g.inputs.end(),
                           [&](graph::ValueId v) { return g.value(v).name == name; });
    if (it == g.inputs.end()) throw Error(fmt::format("params: the model has no input '{}'", name));
    graph::Value& in = g.value(*it);
    graph::TensorType given{data.dtype(), data.shape(), {}};
    bool shape_ok = in.type.shape.size() == data.shape().size();
    for (size_t d = 0; shape_ok && d < data.shape().size(); ++d) {
      shape_ok = in.type.shape[d] < 0 || in.type.shape[d] == data.shape()[d];
    }
    if (in.type.dtype != data.dtype() || !shape_ok) {
      throw Error(fmt::format("params: input '{}' is {}, the value given is {}", name,
                              in.type.str(), given.str()));
    }
    in.type = given;
    in.constant = data;
    g.inputs.erase(it);
  }
}

// Writes the IR stages named in opt.dump into opt.dump_dir (created if missing).
class Dumper {
 public:
  explicit Dumper(const CompileOptions& opt) : opt_(opt) {
    for (const std::string& stage : opt.dump) {
      if (std::find(dump_stages().begin(), dump_stages().end(), stage) == dump_stages().end()) {
        throw Error(fmt::format("unknown IR stage '{}' to dump (known: {})", stage,
                                fmt::join(dump_stages(), ", ")));
      }
    }
    if (opt.dump.empty()) return;
    if (opt.dump_dir.empty()) throw Error("dumping IR needs a directory (dump_dir, --dump-dir)");
    std::error_code ec;
    std::filesystem::create_directories(opt.dump_dir, ec);
    if (ec)
      throw Error(
          fmt::format("cannot create the dump directory {}: {}", opt.dump_dir, ec.message()));
  }
  template <class Fn>
  void operator()(const std::string& stage, const std::string& file, Fn text) const {
    if (std::find(opt_.dump.begin(), opt_.dump.end(), stage) == opt_.dump.end()) return;
    std::string path = (std::filesystem::path(opt_.dump_dir) / file).string();
    std::ofstream out(path);
    out << text();
    if (!out) throw Error(fmt::format("cannot write {}", path));
  }

 private:
  const CompileOptions& opt_;
};

runtime::ExecutorPlan executor_plan_header(const Target& target) {
  runtime::ExecutorPlan p;
  p.target = target.str();
  p.arch = target.triple.substr(0, target.triple.find('-'));
  if (p.arch == "x86_64") {
    for (const char* f : {"avx", "avx2", "fma", "avx512f", "avx512bw", "avx512vl", "avx512dq"}) {
      if (target.has_feature(f)) p.cpu_features.push_back(f);
    }
  }
  return p;
}

// "Conv+Add+Relu": the op types of a group, for profiles.
std::string group_ops(const graph::Graph& g, const passes::FusedGroup& group) {
  std::string ops;
  for (graph::NodeId n : group.nodes)
    ops += (ops.empty() ? "" : "+") + std::string(graph::op_kind_name(g.nodes[n].op));
  return ops;
}

// 2 x multiply-adds of the group's convolutions and matrix products (elementwise work not counted).
double group_flops(const graph::Graph& g, const passes::FusedGroup& group) {
  double flops = 0;
  for (graph::NodeId n : group.nodes) flops += passes::node_flops(g, g.nodes[n]);
  return flops;
}

// Picks each templated kernel's config from the best tuning record of its workload.
class RecordPicker {
 public:
  RecordPicker(const std::string& path, const Target& target, const CpuModel& cpu,
               std::vector<std::string>& warnings)
      : target_(target.str()), cpu_(cpu) {
    if (!path.empty()) db_ = autotune::Database(autotune::load_records(path, &warnings));
  }

  // When tuning measured both layouts of a packable conv (tessel tune does), the other layout
  // than pack_conv_weights' rule picks wins if its best record clearly beats the rule's
  // (autotune::beats_default); otherwise, and without records of both, the rule decides. So it
  // does when the model check pinned either form to its fallback (the untuned kernel).
  passes::ConvLayoutChoice conv_layout(int& decided) {
    return [this, &decided](const graph::Graph& g, const graph::Node& conv, bool rule) {
      std::string direct_key = autotune::workload_key(g, conv);
      std::optional<autotune::TuningRecord> direct = db_.best(target_, direct_key);
      // The packed form's records may be of any of its layouts (passes/alter_op_layout): the
      // fastest stands for it.
      auto [packed, packed_key] = best_of(autotune::packed_workload_keys(g, conv, cpu_));
      if (!direct || !packed || db_.pinned(target_, direct_key) || db_.pinned(target_, packed_key))
        return rule;
      ++decided;
      const autotune::TuningRecord& rule_form = rule ? *packed : *direct;
      const autotune::TuningRecord& other_form = rule ? *direct : *packed;
      return autotune::beats_default(other_form.cost(), rule_form.cost()) != rule;
    };
  }

  // No picker (the fallback) for kernels that tuning does not cover, such as pools. Groups are
  // lowered in parallel: each gets its own `warnings`.
  // The auto-scheduler's best program for `group`: when its records hold one that beats the
  // group's untuned kernel (autotune::beats_default, as Database::best decides) and, for a group
  // with a schedule template, also the best record of its anchor that the template takes.
  std::optional<autotune::TuningRecord> auto_schedule_for(const graph::Graph& g,
                                                          const passes::FusedGroup& group) const {
    std::string key = autotune::group_workload_key(g, group);
    std::optional<autotune::TuningRecord> best = db_.best(target_, key);
    if (!best || best->fallback || !best->auto_schedule) return std::nullopt;
    const graph::Node& master = g.nodes[group.master];
    if (master.def().tuned) {
      auto [templated, template_key] = template_record(g, master);
      // A record that the template refuses now would not be applied: the program is compared
      // with the best one that it takes.
      std::optional<topi::ConfigSpace> space;
      if (templated && !templated->fallback) space = passes::template_space(g, group, cpu_);
      if (space && !why_unusable(*space, *templated).empty())
        std::tie(templated, template_key) = template_record(g, master, usable_in(*space));
      if (templated && !faster(*best, key, *templated, template_key)) return std::nullopt;
    }
    return best;
  }

  passes::ConfigPicker for_group(const graph::Graph& g, const graph::Node& master,
                                 std::vector<std::string>& warnings) const {
    if (!master.def().tuned) return {};
    return [this, &g, &master,
            &warnings](const topi::ConfigSpace& space) -> std::optional<topi::ConfigEntity> {
      auto [best, workload] = template_record(g, master);
      // A record of an older template: the best that this one takes, and a word on the other.
      std::string why = best && !best->fallback ? why_unusable(space, *best) : "";
      if (!why.empty()) {
        std::string passed_over = workload;
        std::tie(best, workload) = template_record(g, master, usable_in(space));
        std::string instead =
            !best            ? "using the fallback"
            : best->fallback ? "keeping the untuned kernel, which no record that it takes beats"
            : workload == passed_over
                ? "applying its best record that the template takes"
                : fmt::format("applying the best record of workload {} that it takes", workload);
        warnings.push_back(fmt::format("{}: the best record of workload {} {}; {}",
                                       master.describe(), passed_over, why, instead));
      }
      if (!best) return std::nullopt;
      if (best->fallback) return space.fallback();
      return topi::ConfigEntity::from_json(space, best->config);
    };
  }

 private:
  // Whether a record's config may be applied to `space`. A fallback record means the untuned
  // kernel: today's fallback, which may have changed since the record's config was written.
  static autotune::Database::Usable usable_in(const topi::ConfigSpace& space) {
    return [&space](const autotune::TuningRecord& r) {
      return r.fallback || why_unusable(space, r).empty();
    };
  }

  // Why the config of `r` may not be applied to `space`: "does not fit its template (...)" (a knob
  // or value the template no longer has), "is a config its template refuses (...)" (a constraint
  // added since); "" when it may.
  static std::string why_unusable(const topi::ConfigSpace& space, const autotune::TuningRecord& r) {
    try {
      std::string reason = space.invalid_reason(topi::ConfigEntity::from_json(space, r.config));
      return reason.empty() ? "" : fmt::format("is a config its template refuses ({})", reason);
    } catch (const Error& e) {
      return fmt::format("does not fit its template ({})", e.what());
    }
  }

  // The template tuner's best record for `master` (of those `usable`, when given), and its
  // workload key: its own workload's, or for a packed conv tuned in another activation layout
  // (the layouts around it follow the convs that records laid out) its fastest record there.
  // Another layout's records stand in only where this one has no record to apply, usable or not:
  // the tuning summary and the model check name this workload.
  // Layout choice (conv_layout) reads every record, those the template refuses now included: it
  // decides before either layout's space exists.
  std::pair<std::optional<autotune::TuningRecord>, std::string> template_record(
      const graph::Graph& g, const graph::Node& master,
      const autotune::Database::Usable& usable = {}) const {
    std::string key = autotune::workload_key(g, master);
    std::optional<autotune::TuningRecord> best = db_.best(target_, key, usable);
    if (!best && master.op == graph::OpKind::ConvNCHWc && !(usable && db_.best(target_, key)))
      return best_of(autotune::layout_workload_keys(g, master), usable);
    return {std::move(best), std::move(key)};
  }

  // The fastest best record among `keys`' workloads, and its key.
  std::pair<std::optional<autotune::TuningRecord>, std::string> best_of(
      const std::vector<std::string>& keys, const autotune::Database::Usable& usable = {}) const {
    std::pair<std::optional<autotune::TuningRecord>, std::string> found;
    for (const std::string& key : keys) {
      std::optional<autotune::TuningRecord> r = db_.best(target_, key, usable);
      if (r && (!found.first || r->cost() < found.first->cost())) found = {std::move(r), key};
    }
    return found;
  }

  // Whether `a`, a record of workload `a_key`, is faster than `b`, of `b_key`. The two tuners'
  // records are of different kernels (a template's of the first group with its anchor, whatever
  // its epilogue; a program's of the whole group), each timed against its own untuned kernel: so
  // their speed-ups over those compare, and their seconds only where one has no such time.
  bool faster(const autotune::TuningRecord& a, const std::string& a_key,
              const autotune::TuningRecord& b, const std::string& b_key) const {
    auto speedup = [&](const autotune::TuningRecord& r,
                       const std::string& key) -> std::optional<double> {
      if (r.fallback) return 1.0;
      std::optional<double> base = db_.fallback_cost(target_, key);
      return base ? std::optional<double>(*base / r.cost()) : std::nullopt;
    };
    std::optional<double> sa = speedup(a, a_key), sb = speedup(b, b_key);
    return sa && sb ? *sa > *sb : a.cost() < b.cost();
  }

  std::string target_;
  CpuModel cpu_;
  autotune::Database db_;
};

graph::Graph import_model(const std::string& onnx_path, const CompileOptions& opt) {
  frontend::ImportOptions iopt;
  iopt.input_shapes = opt.input_shapes;
  return frontend::import_onnx(onnx_path, iopt);
}

passes::GraphPipelineResult run_graph_passes(graph::Graph& g, const CompileOptions& opt,
                                             const CpuModel& cpu,
                                             const passes::ConvLayoutChoice& conv_layout) {
  bind_params(g, opt.params);
  frontend::require_static_inputs(g);
  passes::GraphPipelineOptions popt;
  popt.opt_level = opt.opt_level;
  popt.disabled_passes = opt.disabled_passes;
  popt.conv_layout = conv_layout;
  popt.cpu = cpu;
  return passes::run_graph_pipeline(g, popt);
}

GraphPlan plan(const std::string& onnx_path, const CompileOptions& opt,
               const passes::ConvLayoutChoice& conv_layout) {
  GraphPlan p{import_model(onnx_path, opt), {}};
  p.groups =
      run_graph_passes(p.graph, opt, CpuModel::of(Target::parse(opt.target)), conv_layout).groups;
  return p;
}

// A plan's kernels: the fused groups that compute something, each lowered to te and to tir.
struct Kernels {
  std::vector<const passes::FusedGroup*> groups;
  std::vector<passes::LoweredGroup> lowered;
  std::vector<PrimFunc> funcs;
};

// Lists a kernel in the tuning summary, and counts it: an auto-scheduled one under its group's
// workload and record, one with a schedule template under its anchor's workload and config, any
// other under its group's workload, untuned.
void note_tuning(const graph::Graph& g, const passes::FusedGroup& group,
                 const passes::LoweredGroup& lg, const std::optional<autotune::TuningRecord>& as,
                 TuningSummary& tuning) {
  const graph::Node& master = g.nodes[group.master];
  if (as) {
    ++tuning.tuned;
    ++tuning.auto_scheduled;
    tuning.kernels.push_back({lg.name, as->workload, as->config, true, as->config_index});
    return;
  }
  if (!lg.config || !master.def().tuned) {
    tuning.kernels.push_back({lg.name, autotune::group_workload_key(g, group), "{}", false, 0});
    return;
  }
  ++(lg.tuned ? tuning.tuned : tuning.untuned);
  if (lg.tuned && lg.config->index() == lg.space->fallback().index()) ++tuning.kept_fallback;
  tuning.kernels.push_back({lg.name, autotune::workload_key(g, master), lg.config->to_json(),
                            lg.tuned, lg.config->index()});
}

// Lowers each group that computes something, templated kernels with the config of their best
// record, on `jobs` threads (one when tir dumps are asked for, so that they do not interleave).
// Kernels, warnings and the tuning summary come in group order whatever the thread count.
Kernels lower_kernels(const graph::Graph& g, const passes::GraphPipelineResult& plan,
                      const Target& target, const CpuModel& cpu, const RecordPicker& records,
                      int jobs, std::vector<std::string>& warnings, TuningSummary& tuning) {
  const std::vector<passes::FusedGroup>& groups = plan.groups;
  std::vector<size_t> order;
  for (size_t i = 0; i < groups.size(); ++i) {
    if (passes::runs_kernel(g, plan, i)) order.push_back(i);
  }
  struct Lowered {
    std::optional<passes::LoweredGroup> group;
    std::optional<autotune::TuningRecord> auto_schedule;  // the program it follows
    PrimFunc func;
    std::vector<std::string> warnings;
  };
  std::vector<Lowered> lowered(groups.size());
  unsigned threads = std::getenv("TESSEL_DUMP_IR") ? 1 : codegen::job_threads(jobs, order.size());
  codegen::run_jobs(order, threads, [&](size_t i) {
    Lowered& l = lowered[i];
    const graph::Node& master = g.nodes[groups[i].master];
    if ((l.auto_schedule = records.auto_schedule_for(g, groups[i]))) {
      try {
        l.group = passes::compute_group(g, groups[i], static_cast<int>(i),
                                        passes::StageNames::kByPosition);
        l.group->schedule.replay(te::Trace::parse(l.auto_schedule->steps));
        // A trace that replays onto changed computes may still not lower (bound inference).
        l.func = te::lower(l.group->schedule, l.group->args, l.group->name, pipeline_options(cpu));
      } catch (const Error& e) {
        l.warnings.push_back(fmt::format(
            "{}: the auto-scheduler's best record of its group does not replay ({}); using the "
            "group's other records",
            master.describe(), e.what()));
        l.group.reset();
        l.auto_schedule.reset();
      }
    }
    if (!l.group) {
      l.group = passes::lower_to_te(g, groups[i], static_cast<int>(i), cpu,
                                    records.for_group(g, master, l.warnings));
      l.func = te::lower(l.group->schedule, l.group->args, l.group->name, pipeline_options(cpu));
    }
  });
  Kernels kernels;
  for (size_t i : order) {
    Lowered& l = lowered[i];
    warnings.insert(warnings.end(), l.warnings.begin(), l.warnings.end());
    note_tuning(g, groups[i], *l.group, l.auto_schedule, tuning);
    kernels.funcs.push_back(std::move(l.func));
    kernels.groups.push_back(&groups[i]);
    kernels.lowered.push_back(std::move(*l.group));
  }
  return kernels;
}

// The kernels' schedule traces and tir, where opt.dump asks for them.
void dump_kernels(const Dumper& dump, const Kernels& kernels) {
  dump("te", "te.txt", [&] {
    std::string text;
    for (const auto& lg : kernels.lowered)
      text += fmt::format("// {}\n{}\n", lg.name, lg.schedule.trace().str());
    return text;
  });
  dump("tir", "tir.txt", [&] {
    std::string text;
    for (const PrimFunc& f : kernels.funcs) text += to_string(f) + "\n";
    return text;
  });
}

// Machine code for the kernels, linked into this process, and its dumps. A model without kernels
// has an empty module.
struct BuiltKernels {
  std::vector<std::string> objects;
  runtime::Module module;
  CodegenSummary summary;
};
BuiltKernels build_kernels(const std::vector<PrimFunc>& funcs, const CompileOptions& opt,
                           const Target& target, const Dumper& dump, Timer& time) {
  BuiltKernels built;
  if (funcs.empty()) return built;
  target.check_runs_on_host("compile");
  dump("llvm", "llvm.ll", [&] { return emit_llvm_ir(funcs, target); });
  dump("asm", "asm.s", [&] { return emit_assembly(funcs, target); });
  std::optional<KernelCache> cache = KernelCache::from_environment();
  KernelObjectOptions kopt{opt.compile_jobs, cache ? &*cache : nullptr};
  KernelObjects objects = time("llvm", [&] { return compile_kernel_objects(funcs, target, kopt); });
  built.summary = {static_cast<int>(funcs.size()),
                   static_cast<int>(objects.symbols.size()),
                   objects.cache_hits,
                   objects.jobs,
                   objects.optimize_ms,
                   objects.machine_code_ms};
  built.module = time("link", [&] {
    return runtime::JitSession::shared()->add_objects(objects.objects, "the model's kernels");
  });
  built.objects = std::move(objects.objects);
  return built;
}

// The runnable model: the kernels' module, the executor plan that calls them, and the weights.
runtime::Model assemble_model(const graph::Graph& g, const Target& target, const Kernels& kernels,
                              const passes::MemoryPlan& memory, runtime::Module module) {
  // One storage entry per graph value that a kernel, an input or an output touches: a weight, a
  // view of a shared buffer, or an array of its own.
  runtime::ExecutorPlan xplan = executor_plan_header(target);
  xplan.buffer_bytes = memory.buffer_bytes;
  std::map<std::string, runtime::NDArray> params;
  std::map<graph::ValueId, int> slot;
  auto slot_of = [&](graph::ValueId v) {
    auto it = slot.find(v);
    if (it != slot.end()) return it->second;
    const graph::Value& val = g.value(v);
    runtime::StorageEntry entry{val.type.shape, val.type.dtype, -1, ""};
    if (val.constant) {
      entry.param = params.count(val.name) ? fmt::format("{}#{}", val.name, v) : val.name;
      params[entry.param] = to_ndarray(*val.constant);
    } else if (auto planned = memory.buffer_of.find(v); planned != memory.buffer_of.end()) {
      entry.buffer = planned->second;
      if (auto offset = memory.offset_of.find(v); offset != memory.offset_of.end())
        entry.offset = offset->second;
    }
    xplan.storage.push_back(std::move(entry));
    return slot[v] = static_cast<int>(xplan.storage.size() - 1);
  };
  for (graph::ValueId v : g.inputs) xplan.inputs.push_back({g.value(v).name, slot_of(v)});
  for (size_t k = 0; k < kernels.lowered.size(); ++k) {
    const passes::FusedGroup& group = *kernels.groups[k];
    runtime::KernelEntry kernel{
        kernels.lowered[k].name, {}, group_ops(g, group), group_flops(g, group)};
    for (graph::ValueId v : kernels.lowered[k].arg_values) kernel.args.push_back(slot_of(v));
    xplan.kernels.push_back(std::move(kernel));
  }
  for (graph::ValueId v : g.outputs) xplan.outputs.push_back({g.value(v).name, slot_of(v)});
  return runtime::Model(module, std::move(xplan), params);
}

}  // namespace

GraphPlan plan_graph(const std::string& onnx_path, const CompileOptions& opt) {
  return plan(onnx_path, opt, {});
}

GraphPlan plan_graph_other_conv_layouts(const std::string& onnx_path, const CompileOptions& opt) {
  return plan(onnx_path, opt,
              [](const graph::Graph&, const graph::Node&, bool rule) { return !rule; });
}

CompiledModel compile_graph(graph::Graph g, const CompileOptions& opt) {
  std::vector<StageTiming> timings;
  Timer time(&timings, opt.on_stage);
  Target target = Target::parse(opt.target);
  Dumper dump(opt);
  TuningSummary tuning;
  CpuModel cpu = CpuModel::of(target);
  RecordPicker records(opt.tuning_records, target, cpu, tuning.warnings);
  // The graph passes and fusion: each fused group becomes a kernel.
  passes::GraphPipelineResult plan =
      run_graph_passes(g, opt, cpu, records.conv_layout(tuning.layouts_from_records));
  for (const auto& t : plan.timings) time.record({"graph:" + t.pass, t.ms});
  dump("graph", "graph.txt", [&] { return g.str() + "\n" + passes::to_string(g, plan.groups); });
  Kernels kernels = time("lower", [&] {
    return lower_kernels(g, plan, target, cpu, records, opt.compile_jobs, tuning.warnings, tuning);
  });
  dump_kernels(dump, kernels);
  BuiltKernels built = build_kernels(kernels.funcs, opt, target, dump, time);
  passes::MemoryPlan memory =
      time("plan_memory", [&] { return passes::plan_kernel_memory(g, plan); });
  runtime::Model model =
      time("assemble", [&] { return assemble_model(g, target, kernels, memory, built.module); });
  CompiledModel compiled(std::move(model), std::move(kernels.funcs), std::move(built.objects),
                         target, std::move(timings), passes::to_string(g, plan.groups), memory);
  compiled.tuning_ = std::move(tuning);
  compiled.codegen_ = built.summary;
  return compiled;
}

CompiledModel compile(const std::string& onnx_path, const CompileOptions& opt) {
  std::vector<StageTiming> import_timing;
  Timer time(&import_timing, opt.on_stage);
  graph::Graph g = time("import", [&] { return import_model(onnx_path, opt); });
  CompiledModel m = compile_graph(std::move(g), opt);
  m.timings_.insert(m.timings_.begin(), import_timing.begin(), import_timing.end());
  return m;
}

std::vector<StageTiming> CompiledModel::export_package(const std::string& path) const {
  if (objects_.empty()) throw Error("export_package: the model has no kernels to package");
  std::filesystem::path dir = std::filesystem::path(path).parent_path();
  if (!dir.empty() && !std::filesystem::is_directory(dir)) {
    throw Error(fmt::format("cannot write the package {}: directory {} does not exist", path,
                            dir.string()));
  }
  std::vector<StageTiming> timings;
  Timer time(&timings, nullptr);
  std::string library =
      (std::filesystem::temp_directory_path() /
       fmt::format("tessel-{}-{}.so", getpid(), reinterpret_cast<uintptr_t>(this)))
          .string();
  try {
    time("link library", [&] { link_shared_library(objects_, library); });
    time("write package", [&] { runtime::write_package(path, library, plan(), params()); });
  } catch (...) {
    std::remove(library.c_str());
    throw;
  }
  std::remove(library.c_str());
  return timings;
}

}  // namespace tessel
