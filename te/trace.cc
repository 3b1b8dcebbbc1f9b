// Text form and replay of schedule traces.
#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <sstream>

#include "ir/error.h"
#include "ir/whole_number.h"
#include "te/schedule.h"

namespace tessel::te {
namespace {

template <class T>
std::string list(const std::vector<T>& v) {
  return fmt::format("[{}]", fmt::join(v, ","));
}

std::vector<std::string> split_list(const std::string& field, int line) {
  if (field.size() < 2 || field.front() != '[' || field.back() != ']') {
    throw Error(fmt::format("trace line {}: expected a [list], got '{}'", line, field));
  }
  std::vector<std::string> out;
  std::string inner = field.substr(1, field.size() - 2), item;
  std::istringstream is(inner);
  while (std::getline(is, item, ',')) out.push_back(item);
  return out;
}

MemScope parse_scope(const std::string& s) {
  for (MemScope m : {MemScope::kGlobal, MemScope::kShared, MemScope::kLocal}) {
    if (s == mem_scope_name(m)) return m;
  }
  throw Error(fmt::format("trace: unknown memory scope '{}'", s));
}

// "3:i.outer" (position and name), or "i.outer" (an older trace's name only).
std::string axis_text(const AxisRef& a) {
  return a.position < 0 ? a.name : fmt::format("{}:{}", a.position, a.name);
}

AxisRef parse_axis(const std::string& text) {
  size_t colon = text.find(':');
  bool positioned = colon != std::string::npos && colon > 0 &&
                    std::all_of(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(colon),
                                [](char c) { return c >= '0' && c <= '9'; });
  if (!positioned) return {-1, text};
  std::optional<int64_t> position = parse_whole_number<int64_t>(text.substr(0, colon));
  if (!position) throw Error(fmt::format("trace: axis position '{}' is out of range", text));
  return {*position, text.substr(colon + 1)};
}

// The axis of `stage` that `ref`, taken by `step`, names: by position, or by name in an older
// trace, where a name that several axes share cannot tell which.
IterVar resolve_axis(const Step& step, const Stage& stage, const AxisRef& ref) {
  const std::vector<IterVar>& all = stage->all_iter_vars;
  std::string where = fmt::format("trace step '{}': stage '{}'", step.primitive, stage.name());
  if (ref.position >= 0) {
    if (ref.position >= static_cast<int64_t>(all.size())) {
      throw Error(fmt::format("{} has no axis at position {} (it has {})", where, ref.position,
                              all.size()));
    }
    const IterVar& iv = all[static_cast<size_t>(ref.position)];
    if (iv.name() != ref.name) {
      throw Error(fmt::format(
          "{}: the axis at position {} is '{}', the trace names '{}' (a trace of another "
          "computation?)",
          where, ref.position, iv.name(), ref.name));
    }
    return iv;
  }
  std::vector<size_t> named;
  for (size_t i = 0; i < all.size(); ++i) {
    if (all[i].name() == ref.name) named.push_back(i);
  }
  if (named.empty()) throw Error(fmt::format("{} has no axis '{}'", where, ref.name));
  if (named.size() > 1) {
    throw Error(
        fmt::format("{} has {} axes named '{}' (positions {}); this trace names axes without their "
                    "positions, so it cannot tell which: record the schedule again",
                    where, named.size(), ref.name, fmt::join(named, ", ")));
  }
  return all[named[0]];
}

}  // namespace

AxisRef axis_ref(const StageNode& stage, const IterVar& iv) {
  auto it = std::find_if(stage.all_iter_vars.begin(), stage.all_iter_vars.end(),
                         [&](const IterVar& a) { return a.same_as(iv); });
  TESSEL_ICHECK(it != stage.all_iter_vars.end())
      << "a step on stage '" << stage.name << "' takes axis '" << iv.name()
      << "', which is not one of its axes";
  return {it - stage.all_iter_vars.begin(), iv.name()};
}

std::string Trace::str() const {
  std::string out;
  for (const auto& s : steps_) {
    std::vector<std::string> axes;
    for (const AxisRef& a : s.axes) axes.push_back(axis_text(a));
    out += fmt::format("{} {} {} {} {}\n", s.primitive, s.stage, list(axes), list(s.ints),
                       list(s.strs));
  }
  return out;
}

Trace Trace::parse(const std::string& text) {
  Trace t;
  std::istringstream lines(text);
  std::string line;
  for (int n = 1; std::getline(lines, line); ++n) {
    if (line.empty()) continue;
    std::istringstream f(line);
    Step s;
    std::string axes, ints, strs;
    if (!(f >> s.primitive >> s.stage >> axes >> ints >> strs)) {
      throw Error(fmt::format(
          "trace line {}: expected 'primitive stage [axes] [ints] [strs]', got '{}'", n, line));
    }
    for (const auto& a : split_list(axes, n)) s.axes.push_back(parse_axis(a));
    s.strs = split_list(strs, n);
    for (const auto& i : split_list(ints, n)) {
      std::optional<int64_t> v = parse_integer<int64_t>(i);
      if (!v) throw Error(fmt::format("trace line {}: '{}' is not an integer", n, i));
      s.ints.push_back(*v);
    }
    t.append(std::move(s));
  }
  return t;
}

void Schedule::replay(const Trace& trace) {
  for (const auto& step : trace.steps()) {
    auto need = [&](size_t axes, size_t ints, size_t strs) {
      if (step.axes.size() < axes || step.ints.size() < ints || step.strs.size() < strs) {
        throw Error(fmt::format("trace step '{}' on '{}' has too few arguments", step.primitive,
                                step.stage));
      }
    };
    if (step.primitive == "cache_read") {
      need(0, 0, 2);
      std::vector<Tensor> readers;
      for (size_t i = 1; i < step.strs.size(); ++i) readers.emplace_back((*this)[step.strs[i]]->op);
      cache_read(Tensor((*this)[step.stage]->op), parse_scope(step.strs[0]), readers);
      continue;
    }
    if (step.primitive == "cache_write") {
      need(0, 0, 1);
      cache_write(Tensor((*this)[step.stage]->origin_op), parse_scope(step.strs[0]));
      continue;
    }
    Stage stage = (*this)[step.stage];
    auto axis = [&](const Stage& s, size_t i) { return resolve_axis(step, s, step.axes[i]); };
    const std::string& p = step.primitive;
    if (p == "split") {
      need(1, 1, 0);
      stage.split(axis(stage, 0), step.ints[0]);
    } else if (p == "split_nparts") {
      need(1, 1, 0);
      stage.split_nparts(axis(stage, 0), step.ints[0]);
    } else if (p == "fuse") {
      need(2, 0, 0);
      stage.fuse(axis(stage, 0), axis(stage, 1));
    } else if (p == "reorder") {
      std::vector<IterVar> order;
      for (size_t i = 0; i < step.axes.size(); ++i) order.push_back(axis(stage, i));
      stage.reorder(order);
    } else if (p == "vectorize") {
      need(1, 0, 0);
      stage.vectorize(axis(stage, 0));
    } else if (p == "parallel") {
      need(1, 0, 0);
      stage.parallel(axis(stage, 0));
    } else if (p == "unroll") {
      need(1, 0, 0);
      stage.unroll(axis(stage, 0));
    } else if (p == "bind") {
      need(1, 0, 1);
      stage.bind(axis(stage, 0), step.strs[0]);
    } else if (p == "compute_at") {
      need(1, 0, 1);
      Stage parent = (*this)[step.strs[0]];
      stage.compute_at(parent, axis(parent, 0));
    } else if (p == "pragma") {
      need(1, 1, 1);
      stage.pragma(axis(stage, 0), step.strs[0], step.ints[0]);
    } else if (p == "rfactor") {
      need(1, 1, 0);
      rfactor(Tensor(stage->origin_op), axis(stage, 0), step.ints[0]);
    } else if (p == "compute_inline") {
      stage.compute_inline();
    } else if (p == "compute_root") {
      stage.compute_root();
    } else {
      throw Error(fmt::format("trace: unknown primitive '{}'", p));
    }
  }
}

}  // namespace tessel::te
