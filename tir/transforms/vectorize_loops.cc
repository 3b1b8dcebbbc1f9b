#include "tir/transforms/vectorize_loops.h"

#include <fmt/format.h>

#include <unordered_map>
#include <unordered_set>

#include "ir/functor.h"
#include "ir/printer.h"
#include "ir/structural_equal.h"

namespace tessel::tir {
namespace {

constexpr const char* kHint =
    "choose a split factor that divides the extent, or keep loop_partition on";

[[noreturn]] void fail(const Var& loop_var, const std::string& why, const char* hint = kHint) {
  throw Error(fmt::format("cannot vectorize loop '{}': {}; {}", loop_var->name_hint, why, hint));
}

int lanes_of(const PrimExpr& e) { return e.dtype().lanes(); }

PrimExpr widen(const PrimExpr& e, int lanes) {
  if (lanes_of(e) == lanes) return e;
  TESSEL_ICHECK(lanes_of(e) == 1) << "mixing " << lanes_of(e) << " and " << lanes << " lanes";
  return BroadcastNode::make(e, lanes);
}

// A scalar operand, seen through a Broadcast.
PrimExpr as_scalar(const PrimExpr& e) {
  if (const auto* b = e.as<BroadcastNode>()) return b->value;
  return lanes_of(e) == 1 ? e : PrimExpr();
}

// Index arithmetic on ramps stays a ramp, so that codegen sees contiguous or strided accesses.
PrimExpr fold_ramp(NodeKind kind, const PrimExpr& a, const PrimExpr& b) {
  const auto* ra = a.as<RampNode>();
  const auto* rb = b.as<RampNode>();
  PrimExpr sa = as_scalar(a), sb = as_scalar(b);
  switch (kind) {
    case NodeKind::Add:
      if (ra && rb) return RampNode::make(ra->base + rb->base, ra->stride + rb->stride, ra->lanes);
      if (ra && sb.defined()) return RampNode::make(ra->base + sb, ra->stride, ra->lanes);
      if (rb && sa.defined()) return RampNode::make(sa + rb->base, rb->stride, rb->lanes);
      break;
    case NodeKind::Sub:
      if (ra && rb) return RampNode::make(ra->base - rb->base, ra->stride - rb->stride, ra->lanes);
      if (ra && sb.defined()) return RampNode::make(ra->base - sb, ra->stride, ra->lanes);
      if (rb && sa.defined()) return RampNode::make(sa - rb->base, -rb->stride, rb->lanes);
      break;
    case NodeKind::Mul:
      if (ra && sb.defined()) return RampNode::make(ra->base * sb, ra->stride * sb, ra->lanes);
      if (rb && sa.defined()) return RampNode::make(sa * rb->base, sa * rb->stride, rb->lanes);
      break;
    case NodeKind::Div:
    case NodeKind::FloorDiv:
    case NodeKind::FloorMod:
    case NodeKind::Min:
    case NodeKind::Max:
      TESSEL_COMPARE_KINDS(TESSEL_KIND_CASE)
      TESSEL_LOGIC_KINDS(TESSEL_KIND_CASE)
      break;
      TESSEL_NON_BINARY_KINDS(TESSEL_KIND_CASE)
      TESSEL_UNREACHABLE(std::string("not a binary kind: ") + node_kind_name(kind));
  }
  return PrimExpr();
}

bool is_injective_index(const PrimExpr& index) {
  const auto* ramp = index.as<RampNode>();
  return ramp && as_const_int(ramp->stride) && !is_zero(ramp->stride);
}

// Checks that the iterations of the vectorized loop are independent: every access to a buffer
// that the loop writes uses the same indices. Records which written buffers are also read.
class DependenceChecker : public IRVisitor {
 public:
  explicit DependenceChecker(const Var& loop_var) : loop_var_(loop_var) {}
  std::unordered_set<const VarNode*> read_modify_write;

  void check(const Stmt& body) {
    struct StoreFinder : IRVisitor {
      std::unordered_set<const VarNode*> written;
      void visit_BufferStore(const BufferStoreNode* op, const Stmt& s) override {
        written.insert(op->buffer->data.get());
        IRVisitor::visit_BufferStore(op, s);
      }
    } stores;
    stores.visit_stmt(body);
    written_ = std::move(stores.written);
    visit_stmt(body);
  }

 protected:
  void visit_BufferLoad(const BufferLoadNode* op, const PrimExpr& self) override {
    access(op->buffer, op->indices);
    if (written_.count(op->buffer->data.get())) read_modify_write.insert(op->buffer->data.get());
    IRVisitor::visit_BufferLoad(op, self);
  }
  void visit_BufferStore(const BufferStoreNode* op, const Stmt& self) override {
    access(op->buffer, op->indices);
    IRVisitor::visit_BufferStore(op, self);
  }

 private:
  void access(const Buffer& buffer, const std::vector<PrimExpr>& indices) {
    const VarNode* data = buffer->data.get();
    if (!written_.count(data)) return;
    auto [it, first] = first_access_.emplace(data, &indices);
    if (first) return;
    const auto& seen = *it->second;
    bool same = seen.size() == indices.size();
    for (size_t k = 0; same && k < seen.size(); ++k) same = structural_equal(seen[k], indices[k]);
    if (!same) {
      fail(loop_var_,
           fmt::format("buffer '{}' is accessed at different positions inside it ([{}] and [{}]), "
                       "so its iterations are not independent",
                       buffer->name, join(seen), join(indices)),
           "vectorize a loop whose iterations write distinct elements");
    }
  }
  static std::string join(const std::vector<PrimExpr>& v) {
    std::string s;
    for (const auto& e : v) s += (s.empty() ? "" : ", ") + to_string(e);
    return s;
  }

  Var loop_var_;
  std::unordered_set<const VarNode*> written_;
  std::unordered_map<const VarNode*, const std::vector<PrimExpr>*> first_access_;
};

// Rewrites the body of one vectorized loop into vector code.
class Vectorizer : public IRMutator {
 public:
  Vectorizer(const ForNode* loop, int lanes, std::unordered_set<const VarNode*> read_modify_write)
      : loop_var_(loop->loop_var), read_modify_write_(std::move(read_modify_write)) {
    DataType t = loop_var_.dtype();
    vars_[loop_var_.get()] = RampNode::make(cast(t, loop->min), make_const(t, 1), lanes);
  }

 protected:
  PrimExpr mutate_Var(const VarNode* op, const PrimExpr& self) override {
    auto it = vars_.find(op);
    return it == vars_.end() ? self : it->second;
  }

#define TESSEL_VECTORIZE_BINARY(N)                                        \
  PrimExpr mutate_##N(const N##Node* op, const PrimExpr& self) override { \
    PrimExpr a = mutate_expr(op->a), b = mutate_expr(op->b);              \
    if (a.same_as(op->a) && b.same_as(op->b)) return self;                \
    if (PrimExpr r = fold_ramp(NodeKind::N, a, b)) return r;              \
    int lanes = std::max(lanes_of(a), lanes_of(b));                       \
    return N##Node::make(widen(a, lanes), widen(b, lanes));               \
  }
  TESSEL_BINARY_KINDS(TESSEL_VECTORIZE_BINARY)
#undef TESSEL_VECTORIZE_BINARY

  PrimExpr mutate_Cast(const CastNode* op, const PrimExpr& self) override {
    PrimExpr v = mutate_expr(op->value);
    if (v.same_as(op->value)) return self;
    // A ramp cast to a signed integer of the same width or wider is still a ramp (an int32 lane
    // index into a buffer indexed in int64), so that the access stays contiguous; as fold_ramp,
    // this takes the lanes' values not to overflow.
    const auto* ramp = v.as<RampNode>();
    DataType from = op->value.dtype();
    if (ramp && op->dtype.is_int() && from.is_int() && op->dtype.bits() >= from.bits()) {
      DataType to = op->dtype.with_lanes(1);
      return RampNode::make(cast(to, ramp->base), cast(to, ramp->stride), ramp->lanes);
    }
    return CastNode::make(op->dtype.with_lanes(lanes_of(v)), v);
  }
  PrimExpr mutate_Select(const SelectNode* op, const PrimExpr& self) override {
    PrimExpr c = mutate_expr(op->condition), t = mutate_expr(op->true_value),
             f = mutate_expr(op->false_value);
    if (c.same_as(op->condition) && t.same_as(op->true_value) && f.same_as(op->false_value)) {
      return self;
    }
    int lanes = std::max({lanes_of(c), lanes_of(t), lanes_of(f)});
    return SelectNode::make(widen(c, lanes), widen(t, lanes), widen(f, lanes));
  }
  // A condition that stays scalar stays a branch; a vector one guards each lane (codegen masks
  // the loads of each value with the lanes that take it).
  PrimExpr mutate_IfThenElseExpr(const IfThenElseExprNode* op, const PrimExpr& self) override {
    PrimExpr c = mutate_expr(op->condition), t = mutate_expr(op->true_value),
             f = mutate_expr(op->false_value);
    if (c.same_as(op->condition) && t.same_as(op->true_value) && f.same_as(op->false_value)) {
      return self;
    }
    int lanes = std::max({lanes_of(c), lanes_of(t), lanes_of(f)});
    return IfThenElseExprNode::make(lanes_of(c) == 1 ? c : widen(c, lanes), widen(t, lanes),
                                    widen(f, lanes));
  }
  PrimExpr mutate_Call(const CallNode* op, const PrimExpr& self) override {
    std::vector<PrimExpr> args;
    if (!mutate_exprs(op->args, &args)) return self;
    int lanes = 1;
    for (const auto& a : args) lanes = std::max(lanes, lanes_of(a));
    for (auto& a : args) a = widen(a, lanes);
    return CallNode::make(op->dtype.with_lanes(lanes), op->op, args);
  }
  PrimExpr mutate_Let(const LetNode* op, const PrimExpr& self) override {
    PrimExpr value = mutate_expr(op->value);
    Var v = bind_let(op->var, value);
    PrimExpr body = mutate_expr(op->body);
    if (value.same_as(op->value) && body.same_as(op->body)) return self;
    return LetNode::make(v, value, body);
  }
  PrimExpr mutate_Ramp(const RampNode* op, const PrimExpr& self) override {
    return nested_vector(self);
  }
  PrimExpr mutate_Broadcast(const BroadcastNode* op, const PrimExpr& self) override {
    return nested_vector(self);
  }
  PrimExpr mutate_BufferLoad(const BufferLoadNode* op, const PrimExpr& self) override {
    std::vector<PrimExpr> idx;
    if (!mutate_exprs(op->indices, &idx)) return self;
    require_flat(op->buffer, idx);
    return BufferLoadNode::make(op->buffer, idx);
  }

  Stmt mutate_BufferStore(const BufferStoreNode* op, const Stmt& self) override {
    PrimExpr value = mutate_expr(op->value);
    std::vector<PrimExpr> idx;
    bool changed = mutate_exprs(op->indices, &idx);
    if (!changed && value.same_as(op->value)) return self;
    require_flat(op->buffer, idx);
    int index_lanes = lanes_of(idx.back());
    if (index_lanes == 1 && lanes_of(value) > 1) {
      fail(loop_var_,
           fmt::format("the store to '{}' at [{}] does not depend on it but the stored "
                       "value does (a reduction over a vectorized loop)",
                       op->buffer->name, to_string(idx.back())),
           "vectorize a data-parallel loop instead");
    }
    if (read_modify_write_.count(op->buffer->data.get()) &&
        (index_lanes == 1 || !is_injective_index(idx.back()))) {
      fail(loop_var_,
           fmt::format("buffer '{}' is read and written at [{}], which does not give "
                       "each iteration its own element",
                       op->buffer->name, to_string(idx.back())),
           "vectorize a loop whose iterations write distinct elements");
    }
    return BufferStoreNode::make(op->buffer, widen(value, index_lanes), idx);
  }
  Stmt mutate_IfThenElse(const IfThenElseNode* op, const Stmt& self) override {
    PrimExpr c = mutate_expr(op->condition);
    if (lanes_of(c) > 1) {
      fail(loop_var_, fmt::format("it contains the guard 'if ({})' that depends on its loop var",
                                  to_string(op->condition)));
    }
    return IRMutator::mutate_IfThenElse(op, self);
  }
  Stmt mutate_AssertStmt(const AssertStmtNode* op, const Stmt& self) override {
    if (lanes_of(mutate_expr(op->condition)) > 1) {
      fail(loop_var_, fmt::format("it contains the assertion '{}' that depends on its loop var",
                                  to_string(op->condition)));
    }
    return IRMutator::mutate_AssertStmt(op, self);
  }
  Stmt mutate_For(const ForNode* op, const Stmt& self) override {
    if (op->kind == ForKind::kVectorized) {
      fail(loop_var_,
           fmt::format("it contains another vectorized loop '{}'", op->loop_var->name_hint),
           "vectorize only the innermost loop");
    }
    if (lanes_of(mutate_expr(op->min)) > 1 || lanes_of(mutate_expr(op->extent)) > 1) {
      fail(loop_var_,
           fmt::format("the bounds of the inner loop '{}' depend on it", op->loop_var->name_hint),
           "vectorize a loop that does not shape the loops inside it");
    }
    return IRMutator::mutate_For(op, self);
  }
  Stmt mutate_LetStmt(const LetStmtNode* op, const Stmt& self) override {
    PrimExpr value = mutate_expr(op->value);
    Var v = bind_let(op->var, value);
    Stmt body = mutate_stmt(op->body);
    if (value.same_as(op->value) && body.same_as(op->body)) return self;
    return LetStmtNode::make(v, value, body);
  }
  Stmt mutate_Allocate(const AllocateNode* op, const Stmt& self) override {
    for (const auto& dim : op->buffer->shape) {
      if (lanes_of(mutate_expr(dim)) > 1) {
        fail(loop_var_,
             fmt::format("the size of the allocation '{}' depends on it", op->buffer->name),
             "allocate outside the vectorized loop");
      }
    }
    return IRMutator::mutate_Allocate(op, self);
  }

 private:
  // A let whose value became a vector binds a new vector var.
  Var bind_let(const Var& var, const PrimExpr& value) {
    if (lanes_of(value) == lanes_of(var)) return var;
    Var v(var->name_hint, value.dtype());
    vars_[var.get()] = v;
    return v;
  }
  PrimExpr nested_vector(const PrimExpr& e) {
    if (uses_var(e, {loop_var_.get()})) {
      fail(loop_var_, "it is nested inside vector code that uses its var",
           "vectorize only the innermost loop");
    }
    return e;
  }
  void require_flat(const Buffer& buffer, const std::vector<PrimExpr>& idx) {
    for (size_t k = 0; k + 1 < idx.size(); ++k) {
      TESSEL_ICHECK(lanes_of(idx[k]) == 1)
          << "vectorize_loops needs flattened accesses; buffer " << buffer->name << " is not";
    }
  }

  Var loop_var_;
  std::unordered_set<const VarNode*> read_modify_write_;
  std::unordered_map<const VarNode*, PrimExpr> vars_;
};

class LoopVectorizer : public IRMutator {
 protected:
  Stmt mutate_For(const ForNode* op, const Stmt& self) override {
    if (op->kind != ForKind::kVectorized) return IRMutator::mutate_For(op, self);
    const int64_t* extent = as_const_int(op->extent);
    if (!extent) {
      fail(op->loop_var, fmt::format("its extent '{}' is not a constant", to_string(op->extent)));
    }
    if (*extent < 1) return EvaluateNode::make(0);
    if (*extent == 1) {
      return mutate_stmt(
          substitute(op->body, {{op->loop_var, cast(op->loop_var.dtype(), op->min)}}));
    }
    DependenceChecker deps(op->loop_var);
    deps.check(op->body);
    // Inner vectorized loops are an error inside Vectorizer, so the body needs no pass of ours.
    return Vectorizer(op, static_cast<int>(*extent), std::move(deps.read_modify_write))
        .mutate_stmt(op->body);
  }
};

}  // namespace

PrimFunc vectorize_loops(const PrimFunc& f) {
  Stmt body = LoopVectorizer().mutate_stmt(f->body);
  return body.same_as(f->body) ? f : f.with_body(body);
}

}  // namespace tessel::tir
