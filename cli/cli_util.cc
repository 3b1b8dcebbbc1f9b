#include "cli/cli_util.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "driver/compile.h"
#include "ir/error.h"

namespace tessel::cli {

std::map<std::string, std::vector<int64_t>> parse_input_shapes(const std::string& text) {
  std::vector<std::string> entries;
  std::string current;
  int depth = 0;
  for (char c : text) {
    if (c == '[') ++depth;
    if (c == ']') --depth;
    if (depth == 0 && (c == ' ' || c == ',')) {
      if (!current.empty()) entries.push_back(current);
      current.clear();
    } else {
      current += c;
    }
  }
  if (!current.empty()) entries.push_back(current);
  std::map<std::string, std::vector<int64_t>> shapes;
  for (const std::string& e : entries) {
    auto bad = [&](const std::string& why) {
      return Error(fmt::format("--input-shapes: '{}' {}; expected NAME:[D1,D2,...] as in \"data:[1,3,224,224]\"", e, why));
    };
    size_t open = e.find('[');
    if (open == std::string::npos || e.back() != ']') throw bad("has no [dims]");
    if (open == 0 || e[open - 1] != ':') throw bad("needs ':' between the name and the dims");
    std::string name = e.substr(0, open - 1);
    if (name.empty()) throw bad("has no input name");
    std::vector<int64_t> dims;
    std::string body = e.substr(open + 1, e.size() - open - 2);
    size_t pos = 0;
    while (pos < body.size()) {
      size_t comma = body.find(',', pos);
      std::string dim = body.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
      size_t used = 0;
      long long v = -1;
      try {
        v = std::stoll(dim, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used != dim.size() || dim.empty() || v < 0) throw bad(fmt::format("has a bad dim '{}'", dim));
      dims.push_back(v);
      if (comma == std::string::npos) break;
      pos = comma + 1;
    }
    if (!shapes.emplace(name, dims).second) throw bad("repeats an input name");
  }
  if (shapes.empty()) throw Error("--input-shapes: no shapes given; expected NAME:[D1,D2,...]");
  return shapes;
}

std::vector<std::string> parse_dump_ir(const std::string& text) {
  if (text == "all") return dump_stages();
  std::vector<std::string> stages;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t comma = text.find(',', pos);
    std::string stage = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    if (std::find(dump_stages().begin(), dump_stages().end(), stage) == dump_stages().end()) {
      throw Error(fmt::format("--dump-ir: unknown stage '{}' (known: {}, or all)", stage, fmt::join(dump_stages(), ", ")));
    }
    stages.push_back(stage);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return stages;
}

bool interactive() { return isatty(STDERR_FILENO) != 0; }

std::string describe(const std::vector<int64_t>& shape, DataType dtype) {
  return fmt::format("{}[{}]", dtype.str(), fmt::join(shape, ", "));
}
std::string describe(const runtime::NDArray& a) { return describe(a.shape(), a.dtype()); }

std::string time_summary(std::vector<double> ms) {
  std::sort(ms.begin(), ms.end());
  double mean = std::accumulate(ms.begin(), ms.end(), 0.0) / static_cast<double>(ms.size());
  double var = 0;
  for (double x : ms) var += (x - mean) * (x - mean);
  double median = ms.size() % 2 ? ms[ms.size() / 2] : (ms[ms.size() / 2 - 1] + ms[ms.size() / 2]) / 2;
  return fmt::format("{:>10.4f} {:>10.4f} {:>10.4f} {:>10.4f} {:>10.4f}", mean, median, ms.front(), ms.back(),
                     std::sqrt(var / static_cast<double>(ms.size())));
}

}  // namespace tessel::cli
