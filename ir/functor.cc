#include "ir/functor.h"

#include <algorithm>

namespace tessel {

// ---------------- IRVisitor ----------------
void IRVisitor::visit_expr(const PrimExpr& e) {
  switch (e->kind()) {
#define TESSEL_DISPATCH(N) \
  case NodeKind::N:        \
    return visit_##N(static_cast<const N##Node*>(static_cast<const Node*>(e.get())), e);
    TESSEL_EXPR_KINDS(TESSEL_DISPATCH)
#undef TESSEL_DISPATCH
    TESSEL_NON_EXPR_KINDS(TESSEL_KIND_CASE)
    TESSEL_UNREACHABLE(std::string("not an expression: ") + node_kind_name(e->kind()));
  }
  visit_non_ir_expr(e);
}

void IRVisitor::visit_stmt(const Stmt& s) {
  switch (s->kind()) {
#define TESSEL_DISPATCH(N) \
  case NodeKind::N:        \
    return visit_##N(static_cast<const N##Node*>(static_cast<const Node*>(s.get())), s);
    TESSEL_STMT_KINDS(TESSEL_DISPATCH)
#undef TESSEL_DISPATCH
    TESSEL_NON_STMT_KINDS(TESSEL_KIND_CASE)
    TESSEL_UNREACHABLE(std::string("not a statement: ") + node_kind_name(s->kind()));
  }
  fail_non_ir_node(s->kind(), "IRVisitor::visit_stmt");
}

void IRVisitor::visit_non_ir_expr(const PrimExpr& e) {
  fail_non_ir_node(e->kind(), "an ir IRVisitor");
}

void IRVisitor::visit_IntImm(const IntImmNode*, const PrimExpr&) {}
void IRVisitor::visit_FloatImm(const FloatImmNode*, const PrimExpr&) {}
void IRVisitor::visit_Var(const VarNode*, const PrimExpr&) {}
void IRVisitor::visit_Cast(const CastNode* op, const PrimExpr&) { visit_expr(op->value); }
#define TESSEL_VISIT_BINARY(N)                                    \
  void IRVisitor::visit_##N(const N##Node* op, const PrimExpr&) { \
    visit_expr(op->a);                                            \
    visit_expr(op->b);                                            \
  }
TESSEL_BINARY_KINDS(TESSEL_VISIT_BINARY)
#undef TESSEL_VISIT_BINARY
void IRVisitor::visit_Not(const NotNode* op, const PrimExpr&) { visit_expr(op->a); }
void IRVisitor::visit_Select(const SelectNode* op, const PrimExpr&) {
  visit_expr(op->condition);
  visit_expr(op->true_value);
  visit_expr(op->false_value);
}
void IRVisitor::visit_IfThenElseExpr(const IfThenElseExprNode* op, const PrimExpr&) {
  visit_expr(op->condition);
  visit_expr(op->true_value);
  visit_expr(op->false_value);
}
void IRVisitor::visit_Ramp(const RampNode* op, const PrimExpr&) {
  visit_expr(op->base);
  visit_expr(op->stride);
}
void IRVisitor::visit_Broadcast(const BroadcastNode* op, const PrimExpr&) { visit_expr(op->value); }
void IRVisitor::visit_Let(const LetNode* op, const PrimExpr&) {
  visit_expr(op->value);
  visit_expr(op->body);
}
void IRVisitor::visit_Call(const CallNode* op, const PrimExpr&) {
  for (const auto& a : op->args) visit_expr(a);
}
void IRVisitor::visit_BufferLoad(const BufferLoadNode* op, const PrimExpr&) {
  for (const auto& i : op->indices) visit_expr(i);
}

void IRVisitor::visit_LetStmt(const LetStmtNode* op, const Stmt&) {
  visit_expr(op->value);
  visit_stmt(op->body);
}
void IRVisitor::visit_AssertStmt(const AssertStmtNode* op, const Stmt&) {
  visit_expr(op->condition);
  visit_stmt(op->body);
}
void IRVisitor::visit_Evaluate(const EvaluateNode* op, const Stmt&) { visit_expr(op->value); }
void IRVisitor::visit_SeqStmt(const SeqStmtNode* op, const Stmt&) {
  for (const auto& s : op->seq) visit_stmt(s);
}
void IRVisitor::visit_IfThenElse(const IfThenElseNode* op, const Stmt&) {
  visit_expr(op->condition);
  visit_stmt(op->then_case);
  if (op->else_case.defined()) visit_stmt(op->else_case);
}
void IRVisitor::visit_For(const ForNode* op, const Stmt&) {
  visit_expr(op->min);
  visit_expr(op->extent);
  visit_stmt(op->body);
}
void IRVisitor::visit_BufferStore(const BufferStoreNode* op, const Stmt&) {
  visit_expr(op->value);
  for (const auto& i : op->indices) visit_expr(i);
}
void IRVisitor::visit_Allocate(const AllocateNode* op, const Stmt&) {
  for (const auto& e : op->buffer->shape) visit_expr(e);
  visit_stmt(op->body);
}

// ---------------- IRMutator ----------------
PrimExpr IRMutator::mutate_expr(const PrimExpr& e) {
  switch (e->kind()) {
#define TESSEL_DISPATCH(N) \
  case NodeKind::N:        \
    return mutate_##N(static_cast<const N##Node*>(static_cast<const Node*>(e.get())), e);
    TESSEL_EXPR_KINDS(TESSEL_DISPATCH)
#undef TESSEL_DISPATCH
    TESSEL_NON_EXPR_KINDS(TESSEL_KIND_CASE)
    TESSEL_UNREACHABLE(std::string("not an expression: ") + node_kind_name(e->kind()));
  }
  return mutate_non_ir_expr(e);
}

Stmt IRMutator::mutate_stmt(const Stmt& s) {
  switch (s->kind()) {
#define TESSEL_DISPATCH(N) \
  case NodeKind::N:        \
    return mutate_##N(static_cast<const N##Node*>(static_cast<const Node*>(s.get())), s);
    TESSEL_STMT_KINDS(TESSEL_DISPATCH)
#undef TESSEL_DISPATCH
    TESSEL_NON_STMT_KINDS(TESSEL_KIND_CASE)
    TESSEL_UNREACHABLE(std::string("not a statement: ") + node_kind_name(s->kind()));
  }
  fail_non_ir_node(s->kind(), "IRMutator::mutate_stmt");
}

bool IRMutator::mutate_exprs(const std::vector<PrimExpr>& in, std::vector<PrimExpr>* out) {
  bool changed = false;
  out->clear();
  out->reserve(in.size());
  for (const auto& e : in) {
    out->push_back(mutate_expr(e));
    changed |= !out->back().same_as(e);
  }
  return changed;
}

Buffer IRMutator::mutate_buffer_shape(const Buffer& b) {
  std::vector<PrimExpr> shape;
  if (!mutate_exprs(b->shape, &shape)) return b;
  return make_node<BufferNode>(b->data, b->dtype, shape, b->strides, b->name, b->scope);
}

PrimExpr IRMutator::mutate_non_ir_expr(const PrimExpr& e) {
  fail_non_ir_node(e->kind(), "an ir IRMutator");
}

PrimExpr IRMutator::mutate_IntImm(const IntImmNode*, const PrimExpr& self) { return self; }
PrimExpr IRMutator::mutate_FloatImm(const FloatImmNode*, const PrimExpr& self) { return self; }
PrimExpr IRMutator::mutate_Var(const VarNode*, const PrimExpr& self) { return self; }
PrimExpr IRMutator::mutate_Cast(const CastNode* op, const PrimExpr& self) {
  PrimExpr v = mutate_expr(op->value);
  return v.same_as(op->value) ? self : CastNode::make(op->dtype, v);
}
#define TESSEL_MUTATE_BINARY(N)                                             \
  PrimExpr IRMutator::mutate_##N(const N##Node* op, const PrimExpr& self) { \
    PrimExpr a = mutate_expr(op->a), b = mutate_expr(op->b);                \
    if (a.same_as(op->a) && b.same_as(op->b)) return self;                  \
    return N##Node::make(a, b);                                             \
  }
TESSEL_BINARY_KINDS(TESSEL_MUTATE_BINARY)
#undef TESSEL_MUTATE_BINARY
PrimExpr IRMutator::mutate_Not(const NotNode* op, const PrimExpr& self) {
  PrimExpr a = mutate_expr(op->a);
  return a.same_as(op->a) ? self : NotNode::make(a);
}
PrimExpr IRMutator::mutate_Select(const SelectNode* op, const PrimExpr& self) {
  PrimExpr c = mutate_expr(op->condition), t = mutate_expr(op->true_value),
           f = mutate_expr(op->false_value);
  if (c.same_as(op->condition) && t.same_as(op->true_value) && f.same_as(op->false_value))
    return self;
  return SelectNode::make(c, t, f);
}
PrimExpr IRMutator::mutate_IfThenElseExpr(const IfThenElseExprNode* op, const PrimExpr& self) {
  PrimExpr c = mutate_expr(op->condition), t = mutate_expr(op->true_value),
           f = mutate_expr(op->false_value);
  if (c.same_as(op->condition) && t.same_as(op->true_value) && f.same_as(op->false_value))
    return self;
  return IfThenElseExprNode::make(c, t, f);
}
PrimExpr IRMutator::mutate_Ramp(const RampNode* op, const PrimExpr& self) {
  PrimExpr b = mutate_expr(op->base), s = mutate_expr(op->stride);
  if (b.same_as(op->base) && s.same_as(op->stride)) return self;
  return RampNode::make(b, s, op->lanes);
}
PrimExpr IRMutator::mutate_Broadcast(const BroadcastNode* op, const PrimExpr& self) {
  PrimExpr v = mutate_expr(op->value);
  return v.same_as(op->value) ? self : BroadcastNode::make(v, op->lanes);
}
PrimExpr IRMutator::mutate_Let(const LetNode* op, const PrimExpr& self) {
  PrimExpr v = mutate_expr(op->value), b = mutate_expr(op->body);
  if (v.same_as(op->value) && b.same_as(op->body)) return self;
  return LetNode::make(op->var, v, b);
}
PrimExpr IRMutator::mutate_Call(const CallNode* op, const PrimExpr& self) {
  std::vector<PrimExpr> args;
  if (!mutate_exprs(op->args, &args)) return self;
  return CallNode::make(op->dtype, op->op, args);
}
PrimExpr IRMutator::mutate_BufferLoad(const BufferLoadNode* op, const PrimExpr& self) {
  std::vector<PrimExpr> idx;
  if (!mutate_exprs(op->indices, &idx)) return self;
  return BufferLoadNode::make(op->buffer, idx);
}

Stmt IRMutator::mutate_LetStmt(const LetStmtNode* op, const Stmt& self) {
  PrimExpr v = mutate_expr(op->value);
  Stmt b = mutate_stmt(op->body);
  if (v.same_as(op->value) && b.same_as(op->body)) return self;
  return LetStmtNode::make(op->var, v, b);
}
Stmt IRMutator::mutate_AssertStmt(const AssertStmtNode* op, const Stmt& self) {
  PrimExpr c = mutate_expr(op->condition);
  Stmt b = mutate_stmt(op->body);
  if (c.same_as(op->condition) && b.same_as(op->body)) return self;
  return AssertStmtNode::make(c, op->message, b);
}
Stmt IRMutator::mutate_Evaluate(const EvaluateNode* op, const Stmt& self) {
  PrimExpr v = mutate_expr(op->value);
  return v.same_as(op->value) ? self : EvaluateNode::make(v);
}
Stmt IRMutator::mutate_SeqStmt(const SeqStmtNode* op, const Stmt& self) {
  std::vector<Stmt> seq;
  bool changed = false;
  for (const auto& s : op->seq) {
    seq.push_back(mutate_stmt(s));
    changed |= !seq.back().same_as(s);
  }
  return changed ? SeqStmtNode::make(seq) : self;
}
Stmt IRMutator::mutate_IfThenElse(const IfThenElseNode* op, const Stmt& self) {
  PrimExpr c = mutate_expr(op->condition);
  Stmt t = mutate_stmt(op->then_case);
  Stmt e = op->else_case.defined() ? mutate_stmt(op->else_case) : op->else_case;
  if (c.same_as(op->condition) && t.same_as(op->then_case) && e.same_as(op->else_case)) return self;
  return IfThenElseNode::make(c, t, e);
}
Stmt IRMutator::mutate_For(const ForNode* op, const Stmt& self) {
  PrimExpr mn = mutate_expr(op->min), ext = mutate_expr(op->extent);
  Stmt b = mutate_stmt(op->body);
  if (mn.same_as(op->min) && ext.same_as(op->extent) && b.same_as(op->body)) return self;
  return ForNode::make(op->loop_var, mn, ext, op->kind, b, op->thread_tag);
}
Stmt IRMutator::mutate_BufferStore(const BufferStoreNode* op, const Stmt& self) {
  PrimExpr v = mutate_expr(op->value);
  std::vector<PrimExpr> idx;
  bool changed = mutate_exprs(op->indices, &idx);
  if (!changed && v.same_as(op->value)) return self;
  return BufferStoreNode::make(op->buffer, v, idx);
}
Stmt IRMutator::mutate_Allocate(const AllocateNode* op, const Stmt& self) {
  Buffer buf = mutate_buffer_shape(op->buffer);
  Stmt b = mutate_stmt(op->body);
  if (buf.same_as(op->buffer) && b.same_as(op->body)) return self;
  return AllocateNode::make(buf, b);
}

// ---------------- helpers ----------------
namespace {
class VarUseFinder : public IRVisitor {
 public:
  explicit VarUseFinder(const std::vector<const VarNode*>& vars) : vars_(vars) {}
  bool found = false;

 protected:
  void visit_Var(const VarNode* op, const PrimExpr&) override {
    found |= std::find(vars_.begin(), vars_.end(), op) != vars_.end();
  }
  void visit_BufferLoad(const BufferLoadNode* op, const PrimExpr& self) override {
    found |= std::find(vars_.begin(), vars_.end(), op->buffer->data.get()) != vars_.end();
    IRVisitor::visit_BufferLoad(op, self);
  }

 private:
  const std::vector<const VarNode*>& vars_;
};
}  // namespace

PrimExpr substitute(const PrimExpr& e, const std::vector<std::pair<Var, PrimExpr>>& map) {
  if (map.empty()) return e;
  return VarSubstituter<IRMutator>(map).mutate_expr(e);
}
Stmt substitute(const Stmt& s, const std::vector<std::pair<Var, PrimExpr>>& map) {
  if (map.empty()) return s;
  return VarSubstituter<IRMutator>(map).mutate_stmt(s);
}

bool uses_var(const PrimExpr& e, const std::vector<const VarNode*>& vars) {
  VarUseFinder f(vars);
  f.visit_expr(e);
  return f.found;
}

}  // namespace tessel
