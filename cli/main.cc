// tessel: compile ONNX models into packages, run packages, inspect and tune models. `tessel
// --help`.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <iostream>
#include <string>

#include "cli/cli_util.h"
#include "cli/commands.h"
#include "ir/error.h"

namespace {

// "tessel tune --help" for a usage error inside `tessel tune`.
std::string help_command(const CLI::App& app) {
  std::string command = "tessel";
  for (const CLI::App* sub : app.get_subcommands()) command += " " + sub->get_name();
  return command + " --help";
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Tessel: a deep-learning compiler. Compile ONNX models to packages and run them."};
  app.require_subcommand(1);
  tessel::cli::add_compile_command(app);
  tessel::cli::add_run_command(app);
  tessel::cli::add_inspect_command(app);
  tessel::cli::add_tune_command(app);
  for (CLI::App* cmd : app.get_subcommands([](CLI::App*) { return true; }))
    tessel::cli::refuse_empty_values(*cmd);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help
    // A usage error: one line, as every other error, and the same exit code.
    std::string message = e.what();
    std::replace(message.begin(), message.end(), '\n', ' ');
    std::cerr << "tessel: error: " << message << " (" << help_command(app) << " lists the flags)\n";
    return 1;
  } catch (const tessel::Error& e) {
    std::cerr << "tessel: error: " << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "tessel: internal error: " << e.what() << "\n";
    return 3;
  }
  return 0;
}
