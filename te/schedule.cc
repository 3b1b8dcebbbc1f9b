#include "te/schedule.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <unordered_set>

#include "ir/error.h"
#include "te/functor.h"

namespace tessel::te {
namespace {

std::string join_names(const std::vector<IterVar>& ivs) {
  std::string s;
  for (const auto& iv : ivs) s += (s.empty() ? "" : ", ") + iv.name();
  return s;
}

[[noreturn]] void fail(const std::string& primitive, const StageNode& stage,
                       const std::string& brief, const std::string& detail) {
  throw ScheduleError(fmt::format("{}: {}", primitive, brief),
                      fmt::format("{} on stage '{}': {}", primitive, stage.name, detail));
}

size_t leaf_index(const StageNode& s, const IterVar& iv, const std::string& primitive) {
  if (!iv.defined()) fail(primitive, s, "undefined axis", "the axis is undefined");
  auto it = std::find_if(s.leaf_iter_vars.begin(), s.leaf_iter_vars.end(),
                         [&](const IterVar& l) { return l.same_as(iv); });
  if (it != s.leaf_iter_vars.end()) return it - s.leaf_iter_vars.begin();
  bool known = std::any_of(s.all_iter_vars.begin(), s.all_iter_vars.end(),
                           [&](const IterVar& a) { return a.same_as(iv); });
  std::string why = known ? "it was already split or fused; use the axes that produced"
                          : "it belongs to another stage";
  fail(primitive, s, "axis is not a leaf",
       fmt::format("axis '{}' is not a leaf of this stage ({}). Leaves: {}", iv.name(), why,
                   join_names(s.leaf_iter_vars)));
}

std::string unique_axis_name(const StageNode& s, const std::string& base) {
  auto taken = [&](const std::string& n) {
    return std::any_of(s.all_iter_vars.begin(), s.all_iter_vars.end(),
                       [&](const IterVar& a) { return a.name() == n; });
  };
  std::string name = base;
  for (int i = 1; taken(name); ++i) name = fmt::format("{}_{}", base, i);
  return name;
}

// A new axis of `parent`'s index type: an int64 axis splits into int64 loops.
IterVar derived_axis(const StageNode& s, const std::string& base, const IterVar& parent) {
  return IterVar::make(Range(), Var(unique_axis_name(s, base), parent->var.dtype()),
                       parent->iter_type);
}

void record(StageNode& s, Step step) {
  step.stage = s.name;
  s.schedule->trace.append(std::move(step));
}

// Rewrites reads of operations in `map` (keyed by node) into reads of their replacements.
class LoadReplacer : public TeMutator {
 public:
  explicit LoadReplacer(const std::unordered_map<const Node*, Operation>& map) : map_(map) {}

 protected:
  PrimExpr mutate_ProducerLoad(const ProducerLoadNode* op, const PrimExpr& self) override {
    PrimExpr e = TeMutator::mutate_ProducerLoad(op, self);
    const auto* load = e.as<ProducerLoadNode>();
    auto it = map_.find(load->op.get());
    if (it == map_.end()) return e;
    return ProducerLoadNode::make(it->second, load->value_index, load->indices);
  }

 private:
  const std::unordered_map<const Node*, Operation>& map_;
};

void check_annotation(StageNode& s, const IterVar& iv, const char* primitive) {
  leaf_index(s, iv, primitive);
  if (s.annotations.count(iv.get()) && s.annotations[iv.get()].kind != ForKind::kSerial) {
    fail(primitive, s, "axis already annotated",
         fmt::format("axis '{}' is already {}", iv.name(),
                     for_kind_name(s.annotations[iv.get()].kind)));
  }
}

}  // namespace

std::vector<Operation> input_ops(const Operation& op) {
  std::vector<Operation> out;
  const auto* c = op.as<ComputeOpNode>();
  if (!c) return out;
  struct Collector : TeVisitor {
    std::vector<Operation>* out;
    void visit_ProducerLoad(const ProducerLoadNode* l, const PrimExpr& self) override {
      if (std::none_of(out->begin(), out->end(),
                       [&](const Operation& o) { return o.same_as(l->op); })) {
        out->push_back(l->op);
      }
      TeVisitor::visit_ProducerLoad(l, self);
    }
  } collector;
  collector.out = &out;
  collector.visit_expr(c->body);
  return out;
}

// ---------------- Stage primitives ----------------
IterVar Stage::axis(int i) const {
  const auto* c = node_->op.as<ComputeOpNode>();
  if (!c || i < 0 || i >= static_cast<int>(c->axis.size())) {
    throw Error(fmt::format("stage '{}' has no axis {}", name(), i));
  }
  return c->axis[i];
}

IterVar Stage::reduce_axis(int i) const {
  const auto* c = node_->op.as<ComputeOpNode>();
  if (!c || i < 0 || i >= static_cast<int>(c->reduce_axis.size())) {
    throw Error(fmt::format("stage '{}' has no reduce axis {}", name(), i));
  }
  return c->reduce_axis[i];
}

namespace {
std::pair<IterVar, IterVar> split_impl(StageNode& s, const IterVar& parent, int64_t value,
                                       bool by_nparts) {
  const char* primitive = by_nparts ? "split_nparts" : "split";
  size_t pos = leaf_index(s, parent, primitive);
  if (value <= 0) {
    fail(primitive, s, "factor must be positive",
         fmt::format("axis '{}' split with {} {}; it must be positive", parent.name(),
                     by_nparts ? "nparts" : "factor", value));
  }
  IterVar outer = derived_axis(s, parent.name() + ".outer", parent);
  IterVar inner = derived_axis(s, parent.name() + ".inner", parent);
  SplitRelation rel{parent, outer, inner, PrimExpr(), PrimExpr()};
  (by_nparts ? rel.nparts : rel.factor) =
      make_const(parent->var.dtype(), static_cast<double>(value));
  s.relations.push_back(rel);
  s.all_iter_vars.push_back(outer);
  s.all_iter_vars.push_back(inner);
  s.leaf_iter_vars[pos] = outer;
  s.leaf_iter_vars.insert(s.leaf_iter_vars.begin() + pos + 1, inner);
  record(s, Step{primitive, "", {axis_ref(s, parent)}, {value}, {}});
  return {outer, inner};
}
}  // namespace

std::pair<IterVar, IterVar> Stage::split(const IterVar& parent, int64_t factor) {
  return split_impl(*node_, parent, factor, false);
}

std::pair<IterVar, IterVar> Stage::split_nparts(const IterVar& parent, int64_t nparts) {
  return split_impl(*node_, parent, nparts, true);
}

std::tuple<IterVar, IterVar, IterVar, IterVar> Stage::tile(const IterVar& x, const IterVar& y,
                                                           int64_t x_factor, int64_t y_factor) {
  auto [xo, xi] = split(x, x_factor);
  auto [yo, yi] = split(y, y_factor);
  reorder({xo, yo, xi, yi});
  return {xo, yo, xi, yi};
}

IterVar Stage::fuse(const IterVar& outer, const IterVar& inner) {
  StageNode& s = *node_;
  size_t po = leaf_index(s, outer, "fuse"), pi = leaf_index(s, inner, "fuse");
  if (pi != po + 1) {
    fail("fuse", s, "axes are not adjacent",
         fmt::format("axes '{}' and '{}' are not adjacent leaves with '{}' outside; leaf order: {}",
                     outer.name(), inner.name(), outer.name(), join_names(s.leaf_iter_vars)));
  }
  if (outer->iter_type != inner->iter_type) {
    fail("fuse", s, "cannot fuse a reduction axis with a data-parallel axis",
         fmt::format("axes '{}' and '{}' mix a reduction axis with a data-parallel axis",
                     outer.name(), inner.name()));
  }
  if (outer->var.dtype() != inner->var.dtype()) {
    fail("fuse", s, "axes of different index types",
         fmt::format("axes '{}' ({}) and '{}' ({}) have different index types", outer.name(),
                     outer->var.dtype().str(), inner.name(), inner->var.dtype().str()));
  }
  IterVar fused = derived_axis(s, outer.name() + "." + inner.name() + ".fused", outer);
  s.relations.push_back(FuseRelation{outer, inner, fused});
  s.all_iter_vars.push_back(fused);
  s.leaf_iter_vars[po] = fused;
  s.leaf_iter_vars.erase(s.leaf_iter_vars.begin() + pi);
  record(s, Step{"fuse", "", {axis_ref(s, outer), axis_ref(s, inner)}, {}, {}});
  return fused;
}

void Stage::reorder(const std::vector<IterVar>& order) {
  StageNode& s = *node_;
  std::vector<size_t> slots;
  for (const auto& iv : order) {
    size_t p = leaf_index(s, iv, "reorder");
    if (std::find(slots.begin(), slots.end(), p) != slots.end()) {
      fail("reorder", s, "axis given twice", fmt::format("axis '{}' appears twice", iv.name()));
    }
    slots.push_back(p);
  }
  std::vector<size_t> sorted = slots;
  std::sort(sorted.begin(), sorted.end());
  std::vector<IterVar> leaves = s.leaf_iter_vars;
  for (size_t i = 0; i < order.size(); ++i) leaves[sorted[i]] = order[i];
  s.leaf_iter_vars = leaves;
  std::vector<AxisRef> axes;
  for (const auto& iv : order) axes.push_back(axis_ref(s, iv));
  record(s, Step{"reorder", "", axes, {}, {}});
}

void Stage::vectorize(const IterVar& iv) {
  check_annotation(*node_, iv, "vectorize");
  if (iv->iter_type == IterVarType::kCommReduce) {
    fail("vectorize", *node_, "cannot vectorize a reduction axis",
         fmt::format("axis '{}' is a reduction axis; vectorize a data-parallel axis instead",
                     iv.name()));
  }
  node_->annotations[iv.get()].kind = ForKind::kVectorized;
  record(*node_, Step{"vectorize", "", {axis_ref(*node_, iv)}, {}, {}});
}

void Stage::parallel(const IterVar& iv) {
  check_annotation(*node_, iv, "parallel");
  if (iv->iter_type == IterVarType::kCommReduce) {
    fail("parallel", *node_, "cannot parallelize a reduction axis",
         fmt::format("axis '{}' is a reduction axis; its iterations update the same element",
                     iv.name()));
  }
  node_->annotations[iv.get()].kind = ForKind::kParallel;
  record(*node_, Step{"parallel", "", {axis_ref(*node_, iv)}, {}, {}});
}

void Stage::unroll(const IterVar& iv) {
  check_annotation(*node_, iv, "unroll");
  node_->annotations[iv.get()].kind = ForKind::kUnrolled;
  record(*node_, Step{"unroll", "", {axis_ref(*node_, iv)}, {}, {}});
}

void Stage::bind(const IterVar& iv, const std::string& thread_tag) {
  check_annotation(*node_, iv, "bind");
  static const std::unordered_set<std::string> tags = {"blockIdx.x",  "blockIdx.y",  "blockIdx.z",
                                                       "threadIdx.x", "threadIdx.y", "threadIdx.z",
                                                       "vthread"};
  if (!tags.count(thread_tag)) {
    fail("bind", *node_, "unknown thread tag",
         fmt::format("axis '{}' bound to unknown thread tag '{}'; expected blockIdx.x/y/z, "
                     "threadIdx.x/y/z or vthread",
                     iv.name(), thread_tag));
  }
  node_->annotations[iv.get()].kind = ForKind::kThreadBinding;
  node_->annotations[iv.get()].thread_tag = thread_tag;
  record(*node_, Step{"bind", "", {axis_ref(*node_, iv)}, {}, {thread_tag}});
}

void Stage::pragma(const IterVar& iv, const std::string& key, int64_t value) {
  leaf_index(*node_, iv, "pragma");
  if (key != "auto_unroll_max_step") {
    fail("pragma", *node_, "unknown pragma",
         fmt::format("pragma '{}' on axis '{}' is unknown; the pragmas are: auto_unroll_max_step",
                     key, iv.name()));
  }
  if (value < 0) {
    fail("pragma", *node_, "negative step count",
         fmt::format("auto_unroll_max_step on axis '{}' is {}; it must be at least 0", iv.name(),
                     value));
  }
  node_->annotations[iv.get()].auto_unroll_max_step = value;
  record(*node_, Step{"pragma", "", {axis_ref(*node_, iv)}, {value}, {key}});
}

void Stage::compute_at(const Stage& parent, const IterVar& scope) {
  StageNode& s = *node_;
  if (!parent.defined()) fail("compute_at", s, "undefined parent", "the parent stage is undefined");
  if (!s.op.is<ComputeOpNode>())
    fail("compute_at", s, "not a compute stage", "placeholders have no loops");
  if (s.is_output) {
    fail("compute_at", s, "output stage",
         "an output of the schedule must stay at root; compute_at its producers instead");
  }
  size_t scope_at = leaf_index(*parent.node(), scope, "compute_at");
  // The parent must read this stage, directly or through inlined stages.
  std::function<bool(const StageNode&)> reads = [&](const StageNode& consumer) {
    for (const auto& in : input_ops(consumer.op)) {
      if (in.same_as(s.op)) return true;
      StageNode* mid = s.schedule->find(in);
      if (mid && mid->attach == AttachKind::kInline && reads(*mid)) return true;
    }
    return false;
  };
  // Or through a stage computed inside the parent at `scope` or a loop inside it (a padded input
  // per row of tiles, read by the tile's accumulator stage computed at the parent's inner loop).
  auto reads_through_attached = [&] {
    const auto& leaves = parent.node()->leaf_iter_vars;
    for (const auto& st : s.schedule->stages) {
      if (st->attach != AttachKind::kScope || st->attach_stage.lock() != parent.node() ||
          st.node().get() == &s || !reads(*st.node())) {
        continue;
      }
      auto at = std::find_if(leaves.begin(), leaves.end(),
                             [&](const IterVar& l) { return l.same_as(st->attach_ivar); });
      if (at != leaves.end() && static_cast<size_t>(at - leaves.begin()) >= scope_at) return true;
    }
    return false;
  };
  if (!reads(*parent.node()) && !reads_through_attached()) {
    std::string consumers;
    for (StageNode* c : s.schedule->consumers_of(s.op))
      consumers += (consumers.empty() ? "" : ", ") + c->name;
    fail("compute_at", s, "parent does not consume this stage",
         fmt::format("stage '{}' does not read '{}' (its consumers: {})", parent.name(), s.name,
                     consumers.empty() ? "none" : consumers));
  }
  for (auto p = parent.node(); p;
       p = p->attach == AttachKind::kScope ? p->attach_stage.lock() : nullptr) {
    if (p.get() == &s) {
      fail("compute_at", s, "cycle",
           fmt::format("stage '{}' is already computed inside '{}'", parent.name(), s.name));
    }
  }
  s.attach = AttachKind::kScope;
  s.attach_stage = parent.node();
  s.attach_ivar = scope;
  record(s, Step{"compute_at", "", {axis_ref(*parent.node(), scope)}, {}, {parent.name()}});
}

void Stage::compute_inline() {
  StageNode& s = *node_;
  const auto* c = s.op.as<ComputeOpNode>();
  if (!c) fail("compute_inline", s, "not a compute stage", "placeholders cannot be inlined");
  if (!c->reduce_axis.empty()) {
    fail("compute_inline", s, "cannot inline a reduction",
         "a reduction cannot be inlined into its consumers; use compute_at");
  }
  if (s.is_output)
    fail("compute_inline", s, "output stage", "an output of the schedule cannot be inlined");
  s.attach = AttachKind::kInline;
  record(s, Step{"compute_inline", "", {}, {}, {}});
}

void Stage::compute_root() {
  if (!node_->op.is<ComputeOpNode>())
    fail("compute_root", *node_, "not a compute stage", "placeholders have no loops");
  node_->attach = AttachKind::kRoot;
  node_->attach_stage.reset();
  node_->attach_ivar = IterVar();
  record(*node_, Step{"compute_root", "", {}, {}, {}});
}

// ---------------- Schedule ----------------
StageNode* ScheduleNode::find(const Operation& op) const {
  for (const auto& s : stages) {
    if (s->op.same_as(op) || s->origin_op.same_as(op)) return s.node().get();
  }
  return nullptr;
}

StageNode* ScheduleNode::find(const std::string& name) const {
  for (const auto& s : stages) {
    if (s->name == name) return s.node().get();
  }
  return nullptr;
}

std::vector<StageNode*> ScheduleNode::consumers_of(const Operation& op) const {
  std::vector<StageNode*> out;
  for (const auto& s : stages) {
    for (const auto& in : input_ops(s->op)) {
      if (in.same_as(op)) {
        out.push_back(s.node().get());
        break;
      }
    }
  }
  return out;
}

namespace {
std::shared_ptr<StageNode> make_stage(ScheduleNode* sch, const Operation& op, std::string name) {
  auto s = std::make_shared<StageNode>();
  s->op = s->origin_op = op;
  s->name = std::move(name);
  s->schedule = sch;
  if (const auto* c = op.as<ComputeOpNode>()) {
    s->root_iter_vars = c->axis;
    s->root_iter_vars.insert(s->root_iter_vars.end(), c->reduce_axis.begin(), c->reduce_axis.end());
  }
  s->all_iter_vars = s->leaf_iter_vars = s->root_iter_vars;
  return s;
}

std::string unique_stage_name(const ScheduleNode& sch, const std::string& base) {
  std::string name = base;
  for (int i = 1; sch.find(name); ++i) name = fmt::format("{}_{}", base, i);
  return name;
}

// Replaces `old_op` by `new_op` in every stage body that reads it (in the stages `only`, when
// given). A rewritten stage is a new op, so the stages after it (the stages are in dataflow
// order) read that one instead: an inlined reader of a cached stage keeps its own readers.
void replace_op_everywhere(ScheduleNode& sch, const Operation& old_op, const Operation& new_op,
                           const std::vector<StageNode*>& only = {}) {
  std::unordered_map<const Node*, Operation> rewritten;
  for (auto& st : sch.stages) {
    StageNode* s = st.node().get();
    const auto* c = s->op.as<ComputeOpNode>();
    if (!c) continue;
    std::unordered_map<const Node*, Operation> map = rewritten;
    if (only.empty() || std::find(only.begin(), only.end(), s) != only.end())
      map.emplace(old_op.get(), new_op);
    PrimExpr body = LoadReplacer(map).mutate_expr(c->body);
    if (body.same_as(c->body)) continue;
    Operation replaced(new ComputeOpNode(c->name, c->axis, c->reduce_axis, body));
    rewritten.emplace(s->op.get(), replaced);
    s->op = replaced;
  }
}
}  // namespace

Schedule create_schedule(const std::vector<Tensor>& outputs) {
  auto sch = std::make_shared<ScheduleNode>();
  std::unordered_set<const Node*> visited;
  std::function<void(const Operation&)> visit = [&](const Operation& op) {
    if (!visited.insert(op.get()).second) return;
    for (const auto& in : input_ops(op)) visit(in);
    sch->stages.emplace_back(make_stage(sch.get(), op, unique_stage_name(*sch, op->name)));
  };
  for (const auto& t : outputs) {
    if (!t.defined()) throw Error("create_schedule: an output tensor is undefined");
    visit(t.op());
    sch->outputs.push_back(t.op());
  }
  for (const auto& t : outputs) sch->find(t.op())->is_output = true;
  return Schedule(sch);
}

Stage Schedule::operator[](const Operation& op) const {
  for (const auto& s : node_->stages) {
    if (s->op.same_as(op) || s->origin_op.same_as(op)) return s;
  }
  throw Error(fmt::format("tensor '{}' is not part of this schedule", op->name));
}

Stage Schedule::operator[](const Tensor& t) const { return (*this)[t.op()]; }

Stage Schedule::operator[](const std::string& stage_name) const {
  for (const auto& s : node_->stages) {
    if (s->name == stage_name) return s;
  }
  throw Error(fmt::format("schedule has no stage named '{}'", stage_name));
}

Tensor Schedule::cache_read(const Tensor& t, MemScope scope, const std::vector<Tensor>& readers) {
  StageNode* producer = node_->find(t.op());
  if (!producer)
    throw Error(fmt::format("cache_read: tensor '{}' is not part of this schedule", t.name()));
  std::vector<StageNode*> reader_stages;
  std::vector<std::string> names{mem_scope_name(scope)};
  for (const auto& r : readers) {
    StageNode* rs = node_->find(r.op());
    if (!rs)
      throw Error(fmt::format("cache_read: reader '{}' is not part of this schedule", r.name()));
    auto ins = input_ops(rs->op);
    if (std::none_of(ins.begin(), ins.end(),
                     [&](const Operation& o) { return o.same_as(producer->op); })) {
      throw ScheduleError(
          "cache_read: reader does not read the tensor",
          fmt::format("cache_read of '{}': stage '{}' does not read it", t.name(), rs->name));
    }
    reader_stages.push_back(rs);
    names.push_back(rs->name);
  }
  Tensor src(producer->op);
  std::string name =
      unique_stage_name(*node_, fmt::format("{}.{}", t.name(), mem_scope_name(scope)));
  Tensor cache = compute(
      src.shape(),
      [&](const std::vector<Var>& v) { return src(std::vector<PrimExpr>(v.begin(), v.end())); },
      name);
  replace_op_everywhere(*node_, producer->op, cache.op(), reader_stages);
  auto stage = make_stage(node_.get(), cache.op(), name);
  stage->scope = scope;
  auto pos = std::find_if(node_->stages.begin(), node_->stages.end(),
                          [&](const Stage& s) { return s.node().get() == producer; });
  node_->stages.insert(pos + 1, Stage(stage));
  node_->trace.append(Step{"cache_read", t.name(), {}, {}, names});
  return cache;
}

Tensor Schedule::cache_write(const Tensor& t, MemScope scope) {
  StageNode* s = node_->find(t.op());
  if (!s)
    throw Error(fmt::format("cache_write: tensor '{}' is not part of this schedule", t.name()));
  const auto* c = s->op.as<ComputeOpNode>();
  if (!c)
    throw ScheduleError("cache_write: not a compute stage",
                        fmt::format("cache_write of placeholder '{}'", t.name()));
  if (!s->relations.empty() || s->attach != AttachKind::kRoot) {
    throw ScheduleError(
        "cache_write: stage already scheduled",
        fmt::format("cache_write on stage '{}' must come before its other primitives", s->name));
  }
  // The cache stage takes the body (and the reduce axes, so schedules keep using them); the
  // original stage keeps its data-parallel axes and copies the result out.
  std::vector<std::string> axis_names;
  std::vector<std::pair<Var, PrimExpr>> rename;
  std::vector<PrimExpr> shape;
  for (const auto& iv : c->axis) {
    axis_names.push_back(iv.name() + ".c");
    shape.push_back(iv->dom.extent);
  }
  std::string name =
      unique_stage_name(*node_, fmt::format("{}.{}", s->name, mem_scope_name(scope)));
  PrimExpr body = c->body;
  Tensor cache = compute(
      shape,
      [&](const std::vector<Var>& v) {
        for (size_t d = 0; d < v.size(); ++d) rename.emplace_back(c->axis[d]->var, v[d]);
        return substitute_body(body, rename);
      },
      name, axis_names);
  std::vector<PrimExpr> idx;
  for (const auto& iv : c->axis) idx.push_back(iv->var);
  Operation old_op = s->op;
  Operation copy_out(new ComputeOpNode(c->name, c->axis, {}, cache(idx)));
  s->op = copy_out;
  s->root_iter_vars = s->all_iter_vars = s->leaf_iter_vars = c->axis;
  s->annotations.clear();
  replace_op_everywhere(*node_, old_op, copy_out);
  auto stage = make_stage(node_.get(), cache.op(), name);
  stage->scope = scope;
  auto pos = std::find_if(node_->stages.begin(), node_->stages.end(),
                          [&](const Stage& st) { return st.node().get() == s; });
  node_->stages.insert(pos, Stage(stage));
  node_->trace.append(Step{"cache_write", s->name, {}, {}, {mem_scope_name(scope)}});
  return cache;
}

Tensor Schedule::rfactor(const Tensor& t, const IterVar& k, int64_t factor) {
  StageNode* s = node_->find(t.op());
  if (!s) throw Error(fmt::format("rfactor: tensor '{}' is not part of this schedule", t.name()));
  const auto* c = s->op.as<ComputeOpNode>();
  const auto* red = c ? c->body.as<ReduceNode>() : nullptr;
  if (!red) fail("rfactor", *s, "not a reduction", "the stage computes no reduction");
  bool hosts_stages = std::any_of(node_->stages.begin(), node_->stages.end(), [&](const Stage& st) {
    return st->attach == AttachKind::kScope && st->attach_stage.lock().get() == s;
  });
  if (!s->relations.empty() || s->attach != AttachKind::kRoot || !s->annotations.empty() ||
      hosts_stages) {
    fail("rfactor", *s, "stage already scheduled",
         "rfactor must come before the stage's other primitives and before any compute_at into "
         "it");
  }
  auto k_at = std::find_if(red->axis.begin(), red->axis.end(),
                           [&](const IterVar& r) { return r.same_as(k); });
  if (!k.defined() || k_at == red->axis.end()) {
    fail("rfactor", *s, "not a reduce axis of the stage",
         fmt::format("axis '{}' is not one of its reduce axes ({})",
                     k.defined() ? k.name() : "undefined", join_names(red->axis)));
  }
  const int64_t* extent = as_const_int(k->dom.extent);
  if (factor < 2 || (extent && factor > *extent)) {
    fail("rfactor", *s, "bad factor",
         fmt::format("factor {} for axis '{}' must be at least 2 and at most its extent{}", factor,
                     k.name(), extent ? fmt::format(" {}", *extent) : ""));
  }
  Step step{"rfactor", s->name, {axis_ref(*s, k)}, {factor}, {}};

  // rf: t's axes plus the factored part of k, reducing over the rest of k and the other axes.
  DataType kt = k->var.dtype();
  PrimExpr f = make_const(kt, static_cast<double>(factor));
  std::vector<PrimExpr> shape = c->shape;
  shape.push_back(f);
  std::vector<std::string> names;
  for (const auto& iv : c->axis) names.push_back(iv.name());
  names.push_back(k.name() + ".inner");
  std::string rf_name = unique_stage_name(*node_, s->name + ".rf");
  Tensor rf = compute(
      shape,
      [&](const std::vector<Var>& v) {
        IterVar outer = reduce_axis(make_zero(kt), ceildiv(k->dom.extent, f), k.name() + ".outer");
        PrimExpr point = k->dom.min + outer * f + v.back();
        std::vector<std::pair<Var, PrimExpr>> map{{k->var, point}};
        for (size_t d = 0; d < c->axis.size(); ++d) map.emplace_back(c->axis[d]->var, v[d]);
        std::vector<IterVar> axes = red->axis;
        axes[k_at - red->axis.begin()] = outer;
        PrimExpr cond = substitute_body(red->condition, map);
        if (!extent || *extent % factor != 0) cond = cond && point < k->dom.min + k->dom.extent;
        return ReduceNode::make(red->combiner, substitute_body(red->source, map), axes, cond);
      },
      rf_name, names);

  // t: the reduction of rf over its last axis.
  IterVar inner = reduce_axis(make_zero(kt), f, k.name() + ".rf");
  std::vector<PrimExpr> at;
  for (const auto& iv : c->axis) at.push_back(iv->var);
  at.push_back(inner);
  Operation old_op = s->op;
  s->op = Operation(new ComputeOpNode(
      c->name, c->axis, {inner},
      ReduceNode::make(red->combiner, rf(at), {inner}, make_const(DataType::boolean(), 1))));
  s->root_iter_vars = c->axis;
  s->root_iter_vars.push_back(inner);
  s->all_iter_vars = s->leaf_iter_vars = s->root_iter_vars;
  replace_op_everywhere(*node_, old_op, s->op);
  auto pos = std::find_if(node_->stages.begin(), node_->stages.end(),
                          [&](const Stage& st) { return st.node().get() == s; });
  node_->stages.insert(pos, Stage(make_stage(node_.get(), rf.op(), rf_name)));
  node_->trace.append(std::move(step));
  return rf;
}

}  // namespace tessel::te
