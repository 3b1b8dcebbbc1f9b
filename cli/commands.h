// The tessel subcommands. Each registers itself on the app; its callback throws tessel::Error for
// a user mistake (main prints it and exits 1).
#pragma once

namespace CLI {
class App;
}

namespace tessel::cli {

void add_compile_command(CLI::App& app);
void add_run_command(CLI::App& app);
void add_inspect_command(CLI::App& app);
void add_tune_command(CLI::App& app);

}  // namespace tessel::cli
