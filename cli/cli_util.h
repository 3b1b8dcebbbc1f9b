// Shared pieces of the tessel commands: flag value parsing, progress output and tables.
#pragma once

#include <CLI/CLI.hpp>
#include <map>
#include <string>
#include <vector>

#include "runtime/ndarray.h"

namespace tessel::cli {

// Flag checks shared by every command. CLI11 reports a failed check as "FLAG: MESSAGE", a usage
// error (cli/main.cc).
//
// Bounds of the numeric flags: far above any useful value, and far from overflowing what is
// derived from them (a vector per run or round, a timeout as nanoseconds, a 32-bit count).
constexpr double kMaxCount = 1e6;  // runs, repeats, trials, rounds, rows shown
constexpr double kMaxTime = 1e6;   // in the flag's unit: milliseconds or minutes
// A finite number in [lo, hi]. CLI11's own Range and PositiveNumber let NaN through (every
// comparison with it is false), and inf.
CLI::Validator number_in(double lo, double hi);
// Wall time since this process started (to 10 ms): what the user waited, loading included.
double seconds_since_process_start();
// Refuses an empty value on every option and positional of `cmd` that takes one: an empty path or
// list would otherwise read as "not given".
void refuse_empty_values(CLI::App& cmd);
// "a,b,c" → {a, b, c}; Error naming `flag` for an empty item ("a,,b", a trailing comma).
std::vector<std::string> split_list(const std::string& text, const std::string& flag);

// "data:[1,3,224,224] mask:[1,128]" → {data: [1,3,224,224], mask: [1,128]}. Entries are separated
// by spaces or commas outside brackets; the name is everything before the last ':' ahead of '['.
// Error naming the flag and the entry when malformed, and the input and the dim for a dim or a
// size past 2^31 - 1 (kernels index tensors with 32-bit integers).
std::map<std::string, std::vector<int64_t>> parse_input_shapes(const std::string& text);

// "graph,tir" or "all" → the stages (Error naming an unknown one).
std::vector<std::string> parse_dump_ir(const std::string& text);

// Writes `text` to `path` atomically (runtime/output_file.h); Error naming `what` on failure.
void write_text_file(const std::string& path, const std::string& what, const std::string& text);

// True when stderr is a terminal: progress lines are shown only then.
bool interactive();

// "float32[1, 3, 224, 224]"
std::string describe(const runtime::NDArray& a);
std::string describe(const std::vector<int64_t>& shape, DataType dtype);

// mean, median, min, max, std (ms) of the samples, as one table row.
std::string time_summary(std::vector<double> ms);

}  // namespace tessel::cli
