#include "cli/cli_util.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <ctime>
#include <fstream>
#include <iterator>
#include <limits>
#include <numeric>
#include <sstream>

#include "driver/compile.h"
#include "ir/error.h"
#include "ir/graph.h"
#include "runtime/output_file.h"

namespace tessel::cli {

namespace {

// "a,,b" → {a, "", b}; "" → {""}.
std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> out;
  size_t pos = 0;
  for (size_t at; (at = text.find(sep, pos)) != std::string::npos; pos = at + 1) {
    out.push_back(text.substr(pos, at - pos));
  }
  out.push_back(text.substr(pos));
  return out;
}

std::string trim(const std::string& s) {
  size_t first = s.find_first_not_of(" \t");
  return first == std::string::npos ? "" : s.substr(first, s.find_last_not_of(" \t") - first + 1);
}

// 1000000 rather than 1e+06 in a range.
std::string format_bound(double v) {
  return v == std::floor(v) && std::fabs(v) < 1e15 ? fmt::format("{}", static_cast<int64_t>(v))
                                                   : fmt::format("{}", v);
}

// The largest dim, and element count, of an input.
constexpr int64_t kMaxElements = graph::kMaxTensorElements;

}  // namespace

CLI::Validator number_in(double lo, double hi) {
  std::string range = fmt::format("[{}, {}]", format_bound(lo), format_bound(hi));
  return CLI::Validator(
      [lo, hi, range](std::string& text) -> std::string {
        double v = 0;
        auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
        if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(v)) {
          return fmt::format("'{}' is not a finite decimal number", text);
        }
        // CLI11 converts integers as C does, so "010" would be octal 8.
        size_t digits = text[0] == '-' ? 1 : 0;
        if (text.size() > digits + 1 && text[digits] == '0' &&
            std::isdigit(static_cast<unsigned char>(text[digits + 1])))
          return fmt::format("'{}' has a leading zero", text);
        if (v < lo || v > hi)
          return fmt::format("{} is out of range: expected a number in {}", text, range);
        return "";
      },
      "in " + range);
}

void refuse_empty_values(CLI::App& cmd) {
  CLI::Validator non_empty(
      [](std::string& text) { return text.empty() ? std::string("the value is empty") : ""; }, "");
  for (CLI::Option* opt : cmd.get_options()) {
    if (opt->get_type_size_max() > 0)
      opt->check(non_empty);  // flags (--resume, --help) take no value
  }
}

std::vector<std::string> split_list(const std::string& text, const std::string& flag) {
  std::vector<std::string> items = split(text, ',');
  for (const std::string& item : items) {
    if (item.empty()) throw Error(fmt::format("{}: '{}' has an empty item", flag, text));
  }
  return items;
}

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
      return Error(fmt::format(
          "--input-shapes: '{}' {}; expected NAME:[D1,D2,...] as in \"data:[1,3,224,224]\"", e,
          why));
    };
    size_t open = e.find('[');
    if (open == std::string::npos || e.back() != ']') throw bad("has no [dims]");
    if (open == 0 || e[open - 1] != ':') throw bad("needs ':' between the name and the dims");
    std::string name = e.substr(0, open - 1);
    if (name.empty()) throw bad("has no input name");
    std::string body = e.substr(open + 1, e.size() - open - 2);
    std::vector<int64_t> dims;
    int64_t elements = 1;
    for (const std::string& item : body.empty() ? std::vector<std::string>{} : split(body, ',')) {
      std::string dim = trim(item);
      int64_t v = -1;
      auto [end, ec] = std::from_chars(dim.data(), dim.data() + dim.size(), v);
      bool whole = end == dim.data() + dim.size() && !dim.empty();
      if (whole && dim[0] != '-' &&
          (ec == std::errc::result_out_of_range || (ec == std::errc() && v > kMaxElements))) {
        throw Error(fmt::format(
            "--input-shapes: input '{}' dim {} is {}, more than {} (kernels index tensors with "
            "32-bit integers)",
            name, dims.size(), dim, kMaxElements));
      }
      if (ec != std::errc() || !whole || v < 0) throw bad(fmt::format("has a bad dim '{}'", dim));
      dims.push_back(v);
      elements *= v;  // both at most kMaxElements: no overflow
      if (elements > kMaxElements) {
        throw Error(fmt::format(
            "--input-shapes: input '{}' has more than {} elements at dim {} (kernels index "
            "tensors with 32-bit integers)",
            name, kMaxElements, dims.size() - 1));
      }
    }
    if (!shapes.emplace(name, dims).second) throw bad("repeats an input name");
  }
  if (shapes.empty()) throw Error("--input-shapes: no shapes given; expected NAME:[D1,D2,...]");
  return shapes;
}

std::vector<std::string> parse_dump_ir(const std::string& text) {
  if (text == "all") return dump_stages();
  std::vector<std::string> stages = split_list(text, "--dump-ir");
  for (const std::string& stage : stages) {
    if (std::find(dump_stages().begin(), dump_stages().end(), stage) == dump_stages().end()) {
      throw Error(fmt::format("--dump-ir: unknown stage '{}' (known: {}, or all)", stage,
                              fmt::join(dump_stages(), ", ")));
    }
  }
  return stages;
}

double seconds_since_process_start() {
  // Field 22 of /proc/self/stat is the start time in clock ticks since boot; the command name
  // (field 2) may hold spaces, so fields are counted from its closing parenthesis.
  std::ifstream stat("/proc/self/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  std::istringstream fields(text.substr(text.rfind(')') + 2));
  std::string field;
  for (int i = 3; i < 22 && fields >> field;) ++i;
  unsigned long long start_ticks = 0;
  timespec now{};
  if (!(fields >> start_ticks) || clock_gettime(CLOCK_BOOTTIME, &now) != 0) return 0;
  double start = static_cast<double>(start_ticks) / static_cast<double>(sysconf(_SC_CLK_TCK));
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9 - start;
}

void write_text_file(const std::string& path, const std::string& what, const std::string& text) {
  runtime::write_atomically(path, what, [&](int fd) {
    for (size_t done = 0; done < text.size();) {
      ssize_t n = ::write(fd, text.data() + done, text.size() - done);
      if (n <= 0) throw Error(fmt::format("cannot write {} '{}'", what, path));
      done += static_cast<size_t>(n);
    }
  });
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
  double median =
      ms.size() % 2 ? ms[ms.size() / 2] : (ms[ms.size() / 2 - 1] + ms[ms.size() / 2]) / 2;
  return fmt::format("{:>10.4f} {:>10.4f} {:>10.4f} {:>10.4f} {:>10.4f}", mean, median, ms.front(),
                     ms.back(), std::sqrt(var / static_cast<double>(ms.size())));
}

}  // namespace tessel::cli
