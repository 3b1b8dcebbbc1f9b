// tessel: compile ONNX models into packages, run packages, inspect and tune models. `tessel --help`.
#include <CLI/CLI.hpp>

#include <iostream>

#include "cli/commands.h"
#include "ir/error.h"

int main(int argc, char** argv) {
  CLI::App app{"Tessel: a deep-learning compiler. Compile ONNX models to packages and run them."};
  app.require_subcommand(1);
  tessel::cli::add_compile_command(app);
  tessel::cli::add_run_command(app);
  tessel::cli::add_inspect_command(app);
  tessel::cli::add_tune_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;  // usage errors: CLI11's message names the flag (--help: 0)
  } catch (const tessel::Error& e) {
    std::cerr << "tessel: error: " << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "tessel: internal error: " << e.what() << "\n";
    return 3;
  }
  return 0;
}
