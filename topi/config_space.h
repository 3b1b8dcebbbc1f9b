// The knobs of a tunable schedule template and the space of their combinations (AutoTVM's
// ConfigSpace). A template defines knobs in a fixed order; a point of the space is a ConfigEntity,
// identified by a mixed-radix index (the first knob varies fastest). Entities are self-contained
// values, so they outlive the space and travel freely between tuner, measurer and records.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace tessel::topi {

enum class KnobKind { kSplit, kReorder, kAnnotate, kKnob };
// "split", "reorder", "annotate" or "knob".
const char* knob_kind_name(KnobKind kind);

// What a define_annotate knob asks for on one axis.
enum class Annotation { kNone = 0, kUnroll = 1, kVectorize = 2 };
// "none", "unroll" or "vec" (the spelling in config JSON).
const char* annotation_name(Annotation a);

// How define_split enumerates factor lists. A split entity is [outer, inner_1, ..., inner_{n-1}]
// (outermost first); outer is ceil(extent / product of the inners), so the product of all factors
// is extent exactly when the split leaves no tail.
struct SplitPolicy {
  // "factors": every exact factorization of extent into num_outputs factors.
  // "power2": inner factors are powers of two (the outer loop covers the remainder with a tail).
  // "candidate": exactly the factor lists in `candidates` (an outer of -1 is computed).
  std::string policy = "factors";
  int num_outputs = 2;
  int64_t max_factor = 0;  // > 0: bound on every inner factor; 0: no bound
  bool no_tail = false;    // power2: keep only splits that divide extent exactly
  std::vector<std::vector<int64_t>> candidates = {};
};

class ConfigSpace;

// One point of a ConfigSpace: a value per knob, in definition order.
class ConfigEntity {
 public:
  // The mixed-radix index of this point in its space.
  uint64_t index() const { return index_; }
  // The per-knob choice (position in the knob's candidate list), in definition order.
  const std::vector<uint64_t>& choices() const { return choices_; }

  // Typed accessors; each throws tessel::Error naming the knob when it is missing or of another
  // kind. split: [outer, inner..., innermost]; reorder: a permutation of 0..n-1 (new position ->
  // axis).
  const std::vector<int64_t>& split(const std::string& name) const;
  const std::vector<int64_t>& reorder(const std::string& name) const;
  std::vector<Annotation> annotate(const std::string& name) const;
  int64_t knob(const std::string& name) const;

  // Each knob's name, kind and value (as features() flattens it), by position in definition order.
  size_t num_knobs() const { return values_.size(); }
  const std::string& knob_name(size_t i) const { return values_.at(i).name; }
  KnobKind knob_kind(size_t i) const { return values_.at(i).kind; }
  const std::vector<int64_t>& knob_value(size_t i) const { return values_.at(i).ints; }

  // Every knob's value flattened in definition order (split factors, permutation, annotation
  // codes, knob value); the length is the same for every entity of a space.
  std::vector<double> features() const;

  // A compact JSON object, knob name -> value: splits and reorders are integer arrays,
  // annotations arrays of "none"/"unroll"/"vec", knobs integers.
  std::string to_json() const;
  // Parses to_json's output. Throws tessel::Error for invalid JSON, and naming the knob for a
  // missing or unknown knob or a value that is not in `space`. With match_split_inners, a split
  // matches the candidate with the same inner factors whatever its outer one: a config of the
  // same template for another shape (transfer learning).
  static ConfigEntity from_json(const ConfigSpace& space, const std::string& json,
                                bool match_split_inners = false);

 private:
  friend class ConfigSpace;
  struct Value {
    std::string name;
    KnobKind kind;
    std::vector<int64_t> ints;  // annotations as their codes; a knob as one element
  };
  const Value& find(const std::string& name, KnobKind kind) const;

  uint64_t index_ = 0;
  std::vector<uint64_t> choices_;
  std::vector<Value> values_;
};

// The knobs of one template. Defining a knob twice, an empty knob, or a space whose size would
// overflow 64 bits is a tessel::Error naming the knob.
class ConfigSpace {
 public:
  // Splits a loop of `extent` iterations into policy.num_outputs nested loops.
  void define_split(const std::string& name, int64_t extent, const SplitPolicy& policy = {});
  // Orders `num_axes` loops. policy "identity" (only 0..n-1), "all" (every permutation, n <= 8, in
  // lexicographic order) or "candidate" (the given permutations).
  void define_reorder(const std::string& name, int num_axes, const std::string& policy,
                      const std::vector<std::vector<int64_t>>& candidates = {});
  // Annotates `num_axes` loops. policy "unroll" (all unrolled), "try_unroll" (each axis none or
  // unroll) or "try_unroll_vec" (as try_unroll, and the innermost axis may also be vectorized).
  void define_annotate(const std::string& name, int num_axes, const std::string& policy);
  // A free integer knob over `candidates` (distinct values).
  void define_knob(const std::string& name, const std::vector<int64_t>& candidates);

  // The number of points: the product of the knob sizes (1 with no knobs).
  uint64_t size() const { return size_; }
  size_t num_knobs() const { return knobs_.size(); }
  // Each knob's number of candidates, in definition order.
  std::vector<uint64_t> knob_sizes() const;

  // The point at `index` (< size()); the first knob is the least significant digit.
  ConfigEntity get(uint64_t index) const;
  // The index of the point with these per-knob choices (as ConfigEntity::choices()).
  uint64_t index_of(const std::vector<uint64_t>& choices) const;

  // The fallback: what an untuned compile uses. A knob's fallback is the value set below, or its
  // first candidate. Setting a value that is not among the knob's candidates is an Error naming it.
  ConfigEntity fallback() const;
  void set_fallback_split(const std::string& name, const std::vector<int64_t>& factors);
  void set_fallback_reorder(const std::string& name, const std::vector<int64_t>& permutation);
  void set_fallback_annotate(const std::string& name, const std::vector<Annotation>& annotations);
  void set_fallback_knob(const std::string& name, int64_t value);

  // A rule across knobs that the space cannot express by itself (e.g. a register tile of rows x
  // columns must fit the register file): `check` returns "" for a config the template can
  // schedule, else why not. Tuning skips the configs it rejects without building them.
  void set_constraint(std::function<std::string(const ConfigEntity&)> check) {
    constraint_ = std::move(check);
  }
  // "" when the config satisfies the constraint (or there is none), else the reason.
  std::string invalid_reason(const ConfigEntity& config) const {
    return constraint_ ? constraint_(config) : "";
  }

 private:
  friend class ConfigEntity;
  struct Knob {
    std::string name;
    KnobKind kind;
    std::string description;  // for error messages, e.g. "split of 12 into 2 (factors)"
    std::vector<std::vector<int64_t>> values;
    uint64_t fallback = 0;
  };
  void add(Knob knob);
  // The position of `value` among the knob's candidates; an Error naming the knob when absent.
  static uint64_t find_choice(const Knob& knob, const std::vector<int64_t>& value);
  ConfigEntity from_choices(const std::vector<uint64_t>& choices) const;

  std::vector<Knob> knobs_;
  std::function<std::string(const ConfigEntity&)> constraint_;
  uint64_t size_ = 1;
};

}  // namespace tessel::topi
