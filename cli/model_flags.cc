#include "cli/model_flags.h"

#include <CLI/CLI.hpp>

#include "cli/cli_util.h"

namespace tessel::cli {

CompileOptions ModelFlags::compile_options() const {
  CompileOptions opt;
  opt.target = target;
  opt.opt_level = opt_level;
  opt.compile_jobs = jobs;
  for (const std::string& list : disabled_passes) {
    for (const std::string& pass : split_list(list, "--disabled-pass"))
      opt.disabled_passes.push_back(pass);
  }
  if (!input_shapes.empty()) opt.input_shapes = parse_input_shapes(input_shapes);
  return opt;
}

void add_model_flags(CLI::App& cmd, ModelFlags& flags) {
  cmd.add_option("--target", flags.target,
                 "the target, e.g. \"llvm -mcpu=znver4\" (default: the host CPU)")
      ->capture_default_str();
  cmd.add_option("--input-shapes", flags.input_shapes,
                 "input shapes, e.g. \"data:[1,3,224,224] mask:[1,128]\"");
  cmd.add_option("-O,--opt-level", flags.opt_level, "graph optimization level")
      ->check(number_in(0, 3))
      ->capture_default_str();
  cmd.add_option("-j,--jobs", flags.jobs,
                 "kernels compiled at once (default 0: one per hardware thread)")
      ->check(number_in(0, 1024))
      ->capture_default_str();
  // Split by compile_options rather than CLI11, which drops empty items silently.
  cmd.add_option("--disabled-pass", flags.disabled_passes,
                 "graph passes to skip, e.g. pack_conv_weights,fuse_ops");
}

}  // namespace tessel::cli
