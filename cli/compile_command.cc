// tessel compile MODEL.onnx -o model.tar [--target T] [--input-shapes S] [-O N] [--disabled-pass P]
//                [--tuning-records FILE]
//                [--dump-ir STAGES --dump-dir DIR]
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <iostream>
#include <memory>

#include "cli/cli_util.h"
#include "cli/commands.h"
#include "cli/model_flags.h"
#include "driver/compile.h"
#include "ir/error.h"
#include "runtime/output_file.h"

namespace tessel::cli {

namespace {

struct CompileArgs {
  std::string model, output, tuning_records, dump_ir, dump_dir;
  ModelFlags flags;
};

void run_compile(const CompileArgs& a) {
  std::filesystem::path dir = std::filesystem::path(a.output).parent_path();
  if (!dir.empty() && !std::filesystem::is_directory(dir)) {
    throw Error(fmt::format("-o {}: directory {} does not exist", a.output, dir.string()));
  }
  runtime::check_replaceable(a.output, "the package");  // before compiling, not after
  CompileOptions opt = a.flags.compile_options();
  opt.tuning_records = a.tuning_records;
  if (!a.dump_ir.empty()) {
    opt.dump = parse_dump_ir(a.dump_ir);
    if (a.dump_dir.empty()) throw Error("--dump-ir needs --dump-dir DIR");
    opt.dump_dir = a.dump_dir;
  }
  bool progress = interactive();
  auto show = [&](const StageTiming& t) {
    if (progress && t.ms >= 1) std::cerr << fmt::format("  {:<32} {:>9.1f} ms\n", t.stage, t.ms);
  };
  if (progress) {
    opt.on_stage = show;
    std::cerr << "compiling " << a.model << "\n";
  }
  // The final lines are printed after the model is gone, so that its teardown (unmapping the
  // weights, the JIT) is in the time they report.
  size_t kernels = 0;
  std::string target, memory;
  TuningSummary tuning;
  {
    CompiledModel m = compile(a.model, opt);
    const CodegenSummary& cg = m.codegen();
    if (progress && cg.kernels > 0) {
      std::cerr << fmt::format(
          "  (llvm: {} distinct of {} kernels, {} from the cache, {} jobs; optimize {:.1f} s and "
          "machine code {:.1f} s summed over the jobs)\n",
          cg.distinct, cg.kernels, cg.from_cache, cg.jobs, cg.optimize_ms / 1000,
          cg.machine_code_ms / 1000);
    }
    for (const StageTiming& t : m.export_package(a.output)) show(t);
    kernels = m.plan().kernels.size();
    target = fmt::format("{} -mcpu={}", m.target().triple, m.target().cpu);
    memory = m.memory_plan().summary();
    tuning = m.tuning();
  }
  std::cout << fmt::format("wrote {} ({} kernels for {}) in {:.2f} s\n{}\n", a.output, kernels,
                           target, seconds_since_process_start(), memory);
  if (a.tuning_records.empty()) return;
  for (const std::string& w : tuning.warnings) std::cerr << "warning: " << w << "\n";
  const TuningSummary& t = tuning;
  std::cout << fmt::format(
      "tuning records: {} of {} tunable kernels tuned ({} of them keep the fallback config, which "
      "no measured config beat), {} without records use the fallback schedule",
      t.tuned, t.tuned + t.untuned, t.kept_fallback, t.untuned);
  if (t.auto_scheduled > 0) {
    std::cout << fmt::format("; {} kernels follow auto-scheduler programs", t.auto_scheduled);
  }
  if (t.layouts_from_records > 0) {
    std::cout << fmt::format("; {} convs laid out (direct or packed) by records of both forms",
                             t.layouts_from_records);
  }
  std::cout << "\n";
}

}  // namespace

void add_compile_command(CLI::App& app) {
  auto args = std::make_shared<CompileArgs>();
  CLI::App* cmd = app.add_subcommand(
      "compile", "Compile an ONNX model into a package (mod.so, mod.json, mod.params)");
  cmd->add_option("model", args->model, "the ONNX model file")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("-o,--output", args->output, "the package to write (a .tar)")->required();
  add_model_flags(*cmd, args->flags);
  cmd->add_option("--tuning-records", args->tuning_records,
                  "tuning records (tessel tune): each kernel takes its workload's best config")
      ->check(CLI::ExistingFile);
  cmd->add_option("--dump-ir", args->dump_ir, "IR stages to write: graph,te,tir,llvm,asm or all");
  cmd->add_option("--dump-dir", args->dump_dir, "directory for --dump-ir files");
  cmd->callback([args] { run_compile(*args); });
}

}  // namespace tessel::cli
