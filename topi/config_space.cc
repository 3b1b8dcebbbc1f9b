#include "topi/config_space.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <numeric>
#include <set>

#include "ir/error.h"

namespace tessel::topi {

namespace {

using Values = std::vector<std::vector<int64_t>>;

// reorder "all" and annotate enumerate n! and 3 * 2^(n-1) values; beyond 8 axes that is no
// longer a space anyone can tune.
constexpr int kMaxEnumeratedAxes = 8;

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

std::vector<int64_t> divisors(int64_t n) {
  std::vector<int64_t> small, large;
  for (int64_t d = 1; d <= n / d; ++d) {
    if (n % d != 0) continue;
    small.push_back(d);
    if (d != n / d) large.push_back(n / d);
  }
  small.insert(small.end(), large.rbegin(), large.rend());
  return small;
}

std::vector<int64_t> powers_of_two_upto(int64_t n) {
  std::vector<int64_t> out;
  for (int64_t p = 1; p <= n; p *= 2) {
    out.push_back(p);
    if (p > n / 2) break;
  }
  return out;
}

// Appends [outer, inners...] for every list of `n_inner` factors from `allowed` (ascending) whose
// product is at most extent, and divides it when `exact`; lexicographic in the inner factors.
void enumerate_splits(int64_t extent, const std::vector<int64_t>& allowed, bool exact,
                      size_t n_inner, std::vector<int64_t>& inner, int64_t prod, Values& out) {
  if (inner.size() == n_inner) {
    std::vector<int64_t> entity{ceil_div(extent, prod)};
    entity.insert(entity.end(), inner.begin(), inner.end());
    out.push_back(std::move(entity));
    return;
  }
  for (int64_t f : allowed) {
    if (f > extent / prod) break;
    // A partial product of an exact split divides the full product, hence extent.
    if (exact && extent % (prod * f) != 0) continue;
    inner.push_back(f);
    enumerate_splits(extent, allowed, exact, n_inner, inner, prod * f, out);
    inner.pop_back();
  }
}

// Every combination of one value per axis (the last axis varies fastest).
Values cartesian(const Values& per_axis) {
  Values out{{}};
  for (const std::vector<int64_t>& options : per_axis) {
    Values next;
    for (const std::vector<int64_t>& prefix : out) {
      for (int64_t v : options) {
        next.push_back(prefix);
        next.back().push_back(v);
      }
    }
    out = std::move(next);
  }
  return out;
}

void check_distinct(const Values& values, const std::string& name) {
  std::set<std::vector<int64_t>> seen;
  for (const std::vector<int64_t>& v : values) {
    if (!seen.insert(v).second) {
      throw Error(
          fmt::format("knob '{}': candidate [{}] is listed twice", name, fmt::join(v, ", ")));
    }
  }
}

void check_num_axes(const std::string& name, int num_axes, const char* what) {
  if (num_axes < 1 || num_axes > kMaxEnumeratedAxes) {
    throw Error(fmt::format("knob '{}': {} needs 1 to {} axes, got {}", name, what,
                            kMaxEnumeratedAxes, num_axes));
  }
}

Values split_candidates(const std::string& name, int64_t extent, const SplitPolicy& p) {
  Values out;
  for (std::vector<int64_t> c : p.candidates) {
    auto bad = [&](const std::string& why) {
      return Error(fmt::format("knob '{}': split candidate [{}] of extent {} {}", name,
                               fmt::join(c, ", "), extent, why));
    };
    if (c.size() != static_cast<size_t>(p.num_outputs)) {
      throw bad(fmt::format("does not have {} factors", p.num_outputs));
    }
    int64_t prod = 1;
    for (size_t i = 1; i < c.size(); ++i) {
      if (c[i] < 1 || c[i] > extent / prod) throw bad("has inner factors that exceed the extent");
      prod *= c[i];
    }
    if (c[0] == -1) c[0] = ceil_div(extent, prod);
    if (c[0] != ceil_div(extent, prod)) {
      throw bad(fmt::format("needs outer factor {}", ceil_div(extent, prod)));
    }
    if (p.no_tail && extent % prod != 0) throw bad("leaves a tail (no_tail)");
    out.push_back(std::move(c));
  }
  return out;
}

// The position of the named item (a ConfigSpace knob or a ConfigEntity value) of `kind`; an Error
// naming it when it is missing or of another kind.
template <class T>
size_t find_named(const std::vector<T>& items, const std::string& name, KnobKind kind) {
  for (size_t i = 0; i < items.size(); ++i) {
    if (items[i].name != name) continue;
    if (items[i].kind != kind) {
      throw Error(fmt::format("knob '{}' is of kind {}, not {}", name,
                              knob_kind_name(items[i].kind), knob_kind_name(kind)));
    }
    return i;
  }
  std::vector<std::string> names;
  for (const T& item : items) names.push_back(item.name);
  throw Error(
      fmt::format("no knob '{}' in the config space (knobs: {})", name, fmt::join(names, ", ")));
}

Annotation parse_annotation(const std::string& s, const std::string& knob) {
  for (Annotation a : {Annotation::kNone, Annotation::kUnroll, Annotation::kVectorize}) {
    if (s == annotation_name(a)) return a;
  }
  throw Error(
      fmt::format("config knob '{}': unknown annotation '{}' (none, unroll, vec)", knob, s));
}

// A config JSON value -> the knob's integers; an Error naming the knob for the wrong JSON type.
std::vector<int64_t> json_to_ints(const nlohmann::ordered_json& j, KnobKind kind,
                                  const std::string& knob) {
  auto wrong = [&](const char* expected) {
    return Error(fmt::format("config knob '{}' ({}): expected {}, got {}", knob,
                             knob_kind_name(kind), expected, j.dump()));
  };
  if (kind == KnobKind::kKnob) {
    if (!j.is_number_integer()) throw wrong("an integer");
    return {j.get<int64_t>()};
  }
  const char* expected =
      kind == KnobKind::kAnnotate ? "an array of strings" : "an array of integers";
  if (!j.is_array()) throw wrong(expected);
  std::vector<int64_t> out;
  for (const nlohmann::ordered_json& e : j) {
    if (kind == KnobKind::kAnnotate) {
      if (!e.is_string()) throw wrong(expected);
      out.push_back(static_cast<int64_t>(parse_annotation(e.get<std::string>(), knob)));
    } else {
      if (!e.is_number_integer()) throw wrong(expected);
      out.push_back(e.get<int64_t>());
    }
  }
  return out;
}

}  // namespace

const char* knob_kind_name(KnobKind kind) {
  switch (kind) {
    case KnobKind::kSplit:
      return "split";
    case KnobKind::kReorder:
      return "reorder";
    case KnobKind::kAnnotate:
      return "annotate";
    case KnobKind::kKnob:
      return "knob";
  }
  TESSEL_UNREACHABLE("knob kind");
}

const char* annotation_name(Annotation a) {
  switch (a) {
    case Annotation::kNone:
      return "none";
    case Annotation::kUnroll:
      return "unroll";
    case Annotation::kVectorize:
      return "vec";
  }
  TESSEL_UNREACHABLE("annotation");
}

// ---- ConfigEntity ----

const ConfigEntity::Value& ConfigEntity::find(const std::string& name, KnobKind kind) const {
  return values_[find_named(values_, name, kind)];
}

const std::vector<int64_t>& ConfigEntity::split(const std::string& name) const {
  return find(name, KnobKind::kSplit).ints;
}

const std::vector<int64_t>& ConfigEntity::reorder(const std::string& name) const {
  return find(name, KnobKind::kReorder).ints;
}

std::vector<Annotation> ConfigEntity::annotate(const std::string& name) const {
  std::vector<Annotation> out;
  for (int64_t code : find(name, KnobKind::kAnnotate).ints)
    out.push_back(static_cast<Annotation>(code));
  return out;
}

int64_t ConfigEntity::knob(const std::string& name) const {
  return find(name, KnobKind::kKnob).ints[0];
}

std::vector<double> ConfigEntity::features() const {
  std::vector<double> out;
  for (const Value& v : values_) out.insert(out.end(), v.ints.begin(), v.ints.end());
  return out;
}

std::string ConfigEntity::to_json() const {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const Value& v : values_) {
    if (v.kind == KnobKind::kKnob) {
      j[v.name] = v.ints[0];
    } else if (v.kind == KnobKind::kAnnotate) {
      nlohmann::ordered_json names = nlohmann::ordered_json::array();
      for (int64_t code : v.ints) names.push_back(annotation_name(static_cast<Annotation>(code)));
      j[v.name] = std::move(names);
    } else {
      j[v.name] = v.ints;
    }
  }
  return j.dump();
}

ConfigEntity ConfigEntity::from_json(const ConfigSpace& space, const std::string& json,
                                     bool match_split_inners) {
  nlohmann::ordered_json j;
  try {
    j = nlohmann::ordered_json::parse(json);
  } catch (const nlohmann::json::parse_error& e) {
    throw Error(fmt::format("config is not valid JSON: {}", e.what()));
  }
  if (!j.is_object())
    throw Error(fmt::format("config must be a JSON object of knobs, got {}", j.dump()));
  for (const auto& [key, _] : j.items()) {
    bool known = std::any_of(space.knobs_.begin(), space.knobs_.end(),
                             [&](const ConfigSpace::Knob& k) { return k.name == key; });
    if (!known)
      throw Error(fmt::format("config has knob '{}', which is not in the config space", key));
  }
  std::vector<uint64_t> choices;
  for (const ConfigSpace::Knob& k : space.knobs_) {
    auto it = j.find(k.name);
    if (it == j.end()) throw Error(fmt::format("config is missing knob '{}'", k.name));
    std::vector<int64_t> value = json_to_ints(*it, k.kind, k.name);
    if (match_split_inners && k.kind == KnobKind::kSplit) {
      // Another extent gives another outer factor: the tile is what carries over.
      auto same_inners = [&](const std::vector<int64_t>& c) {
        return c.size() == value.size() && std::equal(c.begin() + 1, c.end(), value.begin() + 1);
      };
      auto found = std::find_if(k.values.begin(), k.values.end(), same_inners);
      if (found != k.values.end()) value = *found;
    }
    choices.push_back(ConfigSpace::find_choice(k, value));
  }
  return space.from_choices(choices);
}

// ---- ConfigSpace ----

void ConfigSpace::add(Knob knob) {
  if (knob.name.empty()) throw Error("a knob needs a name");
  for (const Knob& k : knobs_) {
    if (k.name == knob.name) throw Error(fmt::format("knob '{}' is defined twice", knob.name));
  }
  if (knob.values.empty())
    throw Error(fmt::format("knob '{}' ({}) has no candidates", knob.name, knob.description));
  check_distinct(knob.values, knob.name);
  uint64_t size = 0;
  if (__builtin_mul_overflow(size_, static_cast<uint64_t>(knob.values.size()), &size)) {
    throw Error(fmt::format("knob '{}' ({} candidates) makes the config space larger than 2^64",
                            knob.name, knob.values.size()));
  }
  size_ = size;
  knobs_.push_back(std::move(knob));
}

void ConfigSpace::define_split(const std::string& name, int64_t extent, const SplitPolicy& p) {
  if (extent < 1)
    throw Error(fmt::format("knob '{}': split extent must be positive, got {}", name, extent));
  if (p.num_outputs < 2) {
    throw Error(
        fmt::format("knob '{}': a split needs num_outputs >= 2, got {}", name, p.num_outputs));
  }
  if (p.max_factor < 0) throw Error(fmt::format("knob '{}': max_factor must be >= 0", name));
  if (!p.candidates.empty() && p.policy != "candidate") {
    throw Error(fmt::format("knob '{}': split candidates need policy \"candidate\", not \"{}\"",
                            name, p.policy));
  }
  Knob knob{name,
            KnobKind::kSplit,
            fmt::format("split of {} into {} ({})", extent, p.num_outputs, p.policy),
            {},
            0};
  if (p.policy == "candidate") {
    knob.values = split_candidates(name, extent, p);
  } else if (p.policy == "factors" || p.policy == "power2") {
    std::vector<int64_t> allowed =
        p.policy == "factors" ? divisors(extent) : powers_of_two_upto(extent);
    if (p.max_factor > 0) std::erase_if(allowed, [&](int64_t f) { return f > p.max_factor; });
    std::vector<int64_t> inner;
    enumerate_splits(extent, allowed, p.policy == "factors" || p.no_tail, p.num_outputs - 1, inner,
                     1, knob.values);
  } else {
    throw Error(fmt::format("knob '{}': unknown split policy \"{}\" (factors, power2, candidate)",
                            name, p.policy));
  }
  add(std::move(knob));
}

void ConfigSpace::define_reorder(const std::string& name, int num_axes, const std::string& policy,
                                 const std::vector<std::vector<int64_t>>& candidates) {
  check_num_axes(name, num_axes, "reorder");
  if (!candidates.empty() && policy != "candidate") {
    throw Error(fmt::format("knob '{}': reorder candidates need policy \"candidate\", not \"{}\"",
                            name, policy));
  }
  std::vector<int64_t> identity(num_axes);
  std::iota(identity.begin(), identity.end(), 0);
  Knob knob{
      name, KnobKind::kReorder, fmt::format("reorder of {} axes ({})", num_axes, policy), {}, 0};
  if (policy == "identity") {
    knob.values = {identity};
  } else if (policy == "all") {
    std::vector<int64_t> perm = identity;
    do {
      knob.values.push_back(perm);
    } while (std::next_permutation(perm.begin(), perm.end()));
  } else if (policy == "candidate") {
    for (const std::vector<int64_t>& c : candidates) {
      std::vector<int64_t> sorted = c;
      std::sort(sorted.begin(), sorted.end());
      if (sorted != identity) {
        throw Error(fmt::format("knob '{}': reorder candidate [{}] is not a permutation of 0..{}",
                                name, fmt::join(c, ", "), num_axes - 1));
      }
    }
    knob.values = candidates;
  } else {
    throw Error(fmt::format("knob '{}': unknown reorder policy \"{}\" (identity, all, candidate)",
                            name, policy));
  }
  add(std::move(knob));
}

void ConfigSpace::define_annotate(const std::string& name, int num_axes,
                                  const std::string& policy) {
  check_num_axes(name, num_axes, "annotate");
  const std::vector<int64_t> none_unroll{0, 1};
  Values per_axis;
  if (policy == "unroll") {
    per_axis.assign(num_axes, {static_cast<int64_t>(Annotation::kUnroll)});
  } else if (policy == "try_unroll" || policy == "try_unroll_vec") {
    per_axis.assign(num_axes, none_unroll);
    if (policy == "try_unroll_vec")
      per_axis.back().push_back(static_cast<int64_t>(Annotation::kVectorize));
  } else {
    throw Error(fmt::format(
        "knob '{}': unknown annotate policy \"{}\" (unroll, try_unroll, try_unroll_vec)", name,
        policy));
  }
  add(Knob{name, KnobKind::kAnnotate, fmt::format("annotate of {} axes ({})", num_axes, policy),
           cartesian(per_axis), 0});
}

void ConfigSpace::define_knob(const std::string& name, const std::vector<int64_t>& candidates) {
  Knob knob{name, KnobKind::kKnob, fmt::format("knob of [{}]", fmt::join(candidates, ", ")), {}, 0};
  for (int64_t c : candidates) knob.values.push_back({c});
  add(std::move(knob));
}

std::vector<uint64_t> ConfigSpace::knob_sizes() const {
  std::vector<uint64_t> out;
  for (const Knob& k : knobs_) out.push_back(k.values.size());
  return out;
}

ConfigEntity ConfigSpace::get(uint64_t index) const {
  if (index >= size_) {
    throw Error(
        fmt::format("config index {} is outside the config space of size {}", index, size_));
  }
  std::vector<uint64_t> choices;
  for (const Knob& k : knobs_) {
    choices.push_back(index % k.values.size());
    index /= k.values.size();
  }
  return from_choices(choices);
}

uint64_t ConfigSpace::index_of(const std::vector<uint64_t>& choices) const {
  TESSEL_ICHECK(choices.size() == knobs_.size())
      << choices.size() << " choices for " << knobs_.size() << " knobs";
  uint64_t index = 0;
  for (size_t i = knobs_.size(); i-- > 0;) {
    TESSEL_ICHECK(choices[i] < knobs_[i].values.size())
        << "choice " << choices[i] << " of knob " << knobs_[i].name;
    index = index * knobs_[i].values.size() + choices[i];
  }
  return index;
}

ConfigEntity ConfigSpace::from_choices(const std::vector<uint64_t>& choices) const {
  ConfigEntity e;
  e.index_ = index_of(choices);
  e.choices_ = choices;
  for (size_t i = 0; i < knobs_.size(); ++i) {
    e.values_.push_back({knobs_[i].name, knobs_[i].kind, knobs_[i].values[choices[i]]});
  }
  return e;
}

uint64_t ConfigSpace::find_choice(const Knob& knob, const std::vector<int64_t>& value) {
  auto it = std::find(knob.values.begin(), knob.values.end(), value);
  if (it == knob.values.end()) {
    throw Error(fmt::format("knob '{}': [{}] is not in the config space ({})", knob.name,
                            fmt::join(value, ", "), knob.description));
  }
  return static_cast<uint64_t>(it - knob.values.begin());
}

ConfigEntity ConfigSpace::fallback() const {
  std::vector<uint64_t> choices;
  for (const Knob& k : knobs_) choices.push_back(k.fallback);
  return from_choices(choices);
}

void ConfigSpace::set_fallback_split(const std::string& name, const std::vector<int64_t>& factors) {
  Knob& k = knobs_[find_named(knobs_, name, KnobKind::kSplit)];
  k.fallback = find_choice(k, factors);
}

void ConfigSpace::set_fallback_reorder(const std::string& name,
                                       const std::vector<int64_t>& permutation) {
  Knob& k = knobs_[find_named(knobs_, name, KnobKind::kReorder)];
  k.fallback = find_choice(k, permutation);
}

void ConfigSpace::set_fallback_annotate(const std::string& name,
                                        const std::vector<Annotation>& annotations) {
  Knob& k = knobs_[find_named(knobs_, name, KnobKind::kAnnotate)];
  std::vector<int64_t> codes;
  for (Annotation a : annotations) codes.push_back(static_cast<int64_t>(a));
  k.fallback = find_choice(k, codes);
}

void ConfigSpace::set_fallback_knob(const std::string& name, int64_t value) {
  Knob& k = knobs_[find_named(knobs_, name, KnobKind::kKnob)];
  k.fallback = find_choice(k, {value});
}

}  // namespace tessel::topi
