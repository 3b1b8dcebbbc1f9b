// Shared pieces of the tessel commands: flag value parsing, progress output and tables.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "runtime/ndarray.h"

namespace tessel::cli {

// "data:[1,3,224,224] mask:[1,128]" → {data: [1,3,224,224], mask: [1,128]}. Entries are separated by
// spaces or commas outside brackets; the name is everything before the last ':' ahead of '['.
// Error naming the entry and the flag when malformed.
std::map<std::string, std::vector<int64_t>> parse_input_shapes(const std::string& text);

// "graph,tir" or "all" → the stages (Error naming an unknown one).
std::vector<std::string> parse_dump_ir(const std::string& text);

// True when stderr is a terminal: progress lines are shown only then.
bool interactive();

// "float32[1, 3, 224, 224]"
std::string describe(const runtime::NDArray& a);
std::string describe(const std::vector<int64_t>& shape, DataType dtype);

// mean, median, min, max, std (ms) of the samples, as one table row.
std::string time_summary(std::vector<double> ms);

}  // namespace tessel::cli
