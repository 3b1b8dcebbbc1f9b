// Schedules: one Stage per operation, with its leaf loops, split/fuse relations, loop
// annotations and attach point. Every primitive validates at once (ScheduleError naming the
// stage and axis) and appends a replayable step to the schedule's trace.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include "ir/stmt.h"
#include "te/operation.h"

namespace tessel::te {

struct SplitRelation {
  IterVar parent, outer, inner;
  PrimExpr factor;  // inner extent; undefined when split by nparts
  PrimExpr nparts;  // outer extent; undefined when split by factor
};
struct FuseRelation {
  IterVar outer, inner, fused;
};
using Relation = std::variant<SplitRelation, FuseRelation>;

enum class AttachKind { kRoot, kInline, kScope };

struct LoopAnnotation {
  ForKind kind = ForKind::kSerial;
  std::string thread_tag;
  // pragma auto_unroll_max_step: the serial loops inside this one that run at most this many
  // steps, their nested loops unrolled, are unrolled (0: none).
  int64_t auto_unroll_max_step = 0;
};

class StageNode;

// An axis that a step takes: its position in its stage's all_iter_vars, which replaying the same
// steps on the same computation reproduces. The name is a hint for the reader (two axes may share
// one, e.g. a reduce axis and a data axis both named 'i'); traces written before positions name
// the axis only (position -1).
struct AxisRef {
  int64_t position = -1;
  std::string name;
};
// `iv`, an axis of `stage`, as a step refers to it.
AxisRef axis_ref(const StageNode& stage, const IterVar& iv);

// One primitive as applied; stage names and axis positions identify what it applies to, so a
// trace replays on a fresh schedule of the same computation.
struct Step {
  std::string primitive;          // "split", "fuse", "reorder", "compute_at", ...
  std::string stage;              // stage the primitive applies to
  std::vector<AxisRef> axes;      // axes it takes (compute_at: the parent stage's)
  std::vector<int64_t> ints;      // factors
  std::vector<std::string> strs;  // other stage names, scopes, thread tags
};

class Trace {
 public:
  const std::vector<Step>& steps() const { return steps_; }
  void append(Step s) { steps_.push_back(std::move(s)); }
  // One line per step, `split C [0:i] [32] []` (primitive, stage, [position:name of each axis],
  // [ints], [strs]), readable and parseable by parse(). parse() also reads the older form that
  // names axes only (`split C [i] [32] []`).
  std::string str() const;
  static Trace parse(const std::string& text);

 private:
  std::vector<Step> steps_;
};

class ScheduleNode;

class StageNode {
 public:
  Operation op;         // current operation (cache primitives rewrite it)
  Operation origin_op;  // the operation the user created this stage for
  std::string name;
  std::vector<IterVar> root_iter_vars;  // op axes then reduce axes
  std::vector<IterVar> all_iter_vars;   // root vars plus those made by split/fuse
  std::vector<IterVar> leaf_iter_vars;  // current loop order, outermost first
  std::vector<Relation> relations;
  std::unordered_map<const IterVarNode*, LoopAnnotation> annotations;
  AttachKind attach = AttachKind::kRoot;
  std::weak_ptr<StageNode> attach_stage;
  IterVar attach_ivar;
  MemScope scope = MemScope::kGlobal;
  bool is_output = false;
  ScheduleNode* schedule = nullptr;  // the owner; stages live as long as their schedule
};

class Stage {
 public:
  Stage() = default;
  explicit Stage(std::shared_ptr<StageNode> n) : node_(std::move(n)) {}
  StageNode* operator->() const { return node_.get(); }
  const std::shared_ptr<StageNode>& node() const { return node_; }
  bool defined() const { return static_cast<bool>(node_); }
  const std::string& name() const { return node_->name; }

  // Axes of this stage's current operation (after cache_write they differ from the tensor's).
  IterVar axis(int i) const;
  IterVar reduce_axis(int i) const;
  const std::vector<IterVar>& leaf_iter_vars() const { return node_->leaf_iter_vars; }

  // Splits `parent` into (outer, inner) with inner extent `factor`.
  std::pair<IterVar, IterVar> split(const IterVar& parent, int64_t factor);
  // Splits `parent` into (outer, inner) with outer extent `nparts`.
  std::pair<IterVar, IterVar> split_nparts(const IterVar& parent, int64_t nparts);
  // split x and y, then order (x.outer, y.outer, x.inner, y.inner).
  std::tuple<IterVar, IterVar, IterVar, IterVar> tile(const IterVar& x, const IterVar& y,
                                                      int64_t x_factor, int64_t y_factor);
  IterVar fuse(const IterVar& outer, const IterVar& inner);
  void reorder(const std::vector<IterVar>& order);
  void vectorize(const IterVar& iv);
  void parallel(const IterVar& iv);
  void unroll(const IterVar& iv);
  void bind(const IterVar& iv, const std::string& thread_tag);
  // A loop pragma. "auto_unroll_max_step" (value >= 0): every serial loop nested inside `iv`
  // whose iterations times the steps of its body (each store one step, inner loops unrolled,
  // vector loops one step per iteration of what they hold) come to at most `value` is unrolled,
  // innermost first. Combines with any other annotation of `iv` (usually parallel).
  void pragma(const IterVar& iv, const std::string& key, int64_t value);
  void compute_at(const Stage& parent, const IterVar& scope);
  void compute_inline();
  void compute_root();

 private:
  std::shared_ptr<StageNode> node_;
};

class ScheduleNode {
 public:
  std::vector<Stage> stages;  // topological order: producers before consumers
  std::vector<Operation> outputs;
  Trace trace;
  // The stage for an operation, matched by current or original op; nullptr when absent.
  StageNode* find(const Operation& op) const;
  StageNode* find(const std::string& name) const;
  // Stages whose current op reads `op`.
  std::vector<StageNode*> consumers_of(const Operation& op) const;
};

class Schedule {
 public:
  Schedule() = default;
  explicit Schedule(std::shared_ptr<ScheduleNode> n) : node_(std::move(n)) {}
  ScheduleNode* operator->() const { return node_.get(); }

  Stage operator[](const Tensor& t) const;
  Stage operator[](const Operation& op) const;
  Stage operator[](const std::string& stage_name) const;
  const std::vector<Stage>& stages() const { return node_->stages; }
  const Trace& trace() const { return node_->trace; }

  // A new stage computing a copy of `t` in `scope` that the `readers` read instead of `t`.
  Tensor cache_read(const Tensor& t, MemScope scope, const std::vector<Tensor>& readers);
  // A new stage `<t>.<scope>` computing t's body; t's stage becomes a copy out of it.
  Tensor cache_write(const Tensor& t, MemScope scope);
  // Factors t's reduction over its reduce axis `k` into a new stage `<t>.rf` whose last axis
  // (extent `factor`) holds partial results: rf[..., i] reduces the points k = k.min + o * factor
  // + i over o (and t's other reduce axes), and t becomes the reduction of rf over that last
  // axis. Vectorizing rf's last axis turns a reduction along a contiguous axis into vector
  // accumulators. When factor does not divide k's extent, rf skips the points past it. Must come
  // before t's other primitives; returns rf.
  Tensor rfactor(const Tensor& t, const IterVar& k, int64_t factor);

  // Applies a trace's steps to this schedule: stages by name, axes by position (Error when the
  // position's axis has another name than the trace's hint). An axis named only (an older trace)
  // is found by name, and is an Error when the stage has no axis or several of that name.
  void replay(const Trace& trace);

 private:
  std::shared_ptr<ScheduleNode> node_;
};

// A schedule over every operation that `outputs` depend on, all at root, in default loop order.
Schedule create_schedule(const std::vector<Tensor>& outputs);

// Operations read by an operation's body, in first-read order.
std::vector<Operation> input_ops(const Operation& op);

}  // namespace tessel::te
