#include "ir/structural_equal.h"

#include <functional>
#include <unordered_map>

#include "ir/functor.h"

namespace tessel {
namespace {

class Equal {
 public:
  explicit Equal(bool map_free) : map_free_(map_free) {}

  bool bind(const Node* a, const Node* b) {
    map_[a] = b;
    return true;
  }

  bool var(const Var& a, const Var& b) {
    if (!a.defined() || !b.defined()) return a.defined() == b.defined();
    if (a.dtype() != b.dtype()) return false;
    auto it = map_.find(a.get());
    if (it != map_.end()) return it->second == b.get();
    if (a.same_as(b)) return true;
    return map_free_ && bind(a.get(), b.get());
  }

  bool buffer(const Buffer& a, const Buffer& b) {
    auto it = map_.find(a.get());
    if (it != map_.end()) return it->second == b.get();
    if (!a.same_as(b) && !map_free_) return false;
    if (a->dtype != b->dtype || a->scope != b->scope || !exprs(a->shape, b->shape) ||
        !exprs(a->strides, b->strides))
      return false;
    bind(a.get(), b.get());
    return var(a->data, b->data);
  }

  bool exprs(const std::vector<PrimExpr>& a, const std::vector<PrimExpr>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (!expr(a[i], b[i])) return false;
    }
    return true;
  }

  bool expr(const PrimExpr& a, const PrimExpr& b) {
    if (!a.defined() || !b.defined()) return a.defined() == b.defined();
    if (a.same_as(b) && !map_.count(a.get())) {
      // Shared sub-trees are equal unless they mention a remapped var; those are rare and small.
      if (map_.empty()) return true;
    }
    if (a->kind() != b->kind() || a.dtype() != b.dtype()) return false;
    switch (a->kind()) {
      case NodeKind::IntImm:
        return a.as<IntImmNode>()->value == b.as<IntImmNode>()->value;
      case NodeKind::FloatImm:
        return a.as<FloatImmNode>()->value == b.as<FloatImmNode>()->value;
      case NodeKind::Var:
        return var(Var(Ref<VarNode>(a.as<VarNode>())), Var(Ref<VarNode>(b.as<VarNode>())));
      case NodeKind::Cast:
        return expr(a.as<CastNode>()->value, b.as<CastNode>()->value);
#define TESSEL_EQ_BINARY(N)                                \
  case NodeKind::N:                                        \
    return expr(a.as<N##Node>()->a, b.as<N##Node>()->a) && \
           expr(a.as<N##Node>()->b, b.as<N##Node>()->b);
        TESSEL_BINARY_KINDS(TESSEL_EQ_BINARY)
#undef TESSEL_EQ_BINARY
      case NodeKind::Not:
        return expr(a.as<NotNode>()->a, b.as<NotNode>()->a);
      case NodeKind::Select:
        return conditional(a.as<SelectNode>(), b.as<SelectNode>());
      case NodeKind::IfThenElseExpr:
        return conditional(a.as<IfThenElseExprNode>(), b.as<IfThenElseExprNode>());
      case NodeKind::Ramp: {
        const auto *x = a.as<RampNode>(), *y = b.as<RampNode>();
        return x->lanes == y->lanes && expr(x->base, y->base) && expr(x->stride, y->stride);
      }
      case NodeKind::Broadcast: {
        const auto *x = a.as<BroadcastNode>(), *y = b.as<BroadcastNode>();
        return x->lanes == y->lanes && expr(x->value, y->value);
      }
      case NodeKind::Let: {
        const auto *x = a.as<LetNode>(), *y = b.as<LetNode>();
        return expr(x->value, y->value) && x->var.dtype() == y->var.dtype() &&
               bind(x->var.get(), y->var.get()) && expr(x->body, y->body);
      }
      case NodeKind::Call: {
        const auto *x = a.as<CallNode>(), *y = b.as<CallNode>();
        return x->op == y->op && exprs(x->args, y->args);
      }
      case NodeKind::BufferLoad: {
        const auto *x = a.as<BufferLoadNode>(), *y = b.as<BufferLoadNode>();
        return buffer(x->buffer, y->buffer) && exprs(x->indices, y->indices);
      }
        TESSEL_NON_EXPR_KINDS(TESSEL_KIND_CASE)
        TESSEL_UNREACHABLE(std::string("not an expression: ") + node_kind_name(a->kind()));
    }
    fail_non_ir_node(a->kind(), "structural_equal");
  }

  // Select and IfThenElseExpr: condition, true value, false value.
  template <class T>
  bool conditional(const T* x, const T* y) {
    return expr(x->condition, y->condition) && expr(x->true_value, y->true_value) &&
           expr(x->false_value, y->false_value);
  }

  bool stmt(const Stmt& a, const Stmt& b) {
    if (!a.defined() || !b.defined()) return a.defined() == b.defined();
    if (a->kind() != b->kind()) return false;
    switch (a->kind()) {
      case NodeKind::LetStmt: {
        const auto *x = a.as<LetStmtNode>(), *y = b.as<LetStmtNode>();
        return expr(x->value, y->value) && x->var.dtype() == y->var.dtype() &&
               bind(x->var.get(), y->var.get()) && stmt(x->body, y->body);
      }
      case NodeKind::AssertStmt: {
        const auto *x = a.as<AssertStmtNode>(), *y = b.as<AssertStmtNode>();
        return x->message == y->message && expr(x->condition, y->condition) &&
               stmt(x->body, y->body);
      }
      case NodeKind::Evaluate:
        return expr(a.as<EvaluateNode>()->value, b.as<EvaluateNode>()->value);
      case NodeKind::SeqStmt: {
        const auto *x = a.as<SeqStmtNode>(), *y = b.as<SeqStmtNode>();
        if (x->seq.size() != y->seq.size()) return false;
        for (size_t i = 0; i < x->seq.size(); ++i) {
          if (!stmt(x->seq[i], y->seq[i])) return false;
        }
        return true;
      }
      case NodeKind::IfThenElse: {
        const auto *x = a.as<IfThenElseNode>(), *y = b.as<IfThenElseNode>();
        return expr(x->condition, y->condition) && stmt(x->then_case, y->then_case) &&
               stmt(x->else_case, y->else_case);
      }
      case NodeKind::For: {
        const auto *x = a.as<ForNode>(), *y = b.as<ForNode>();
        return x->kind == y->kind && x->thread_tag == y->thread_tag && expr(x->min, y->min) &&
               expr(x->extent, y->extent) && x->loop_var.dtype() == y->loop_var.dtype() &&
               bind(x->loop_var.get(), y->loop_var.get()) && stmt(x->body, y->body);
      }
      case NodeKind::BufferStore: {
        const auto *x = a.as<BufferStoreNode>(), *y = b.as<BufferStoreNode>();
        return buffer(x->buffer, y->buffer) && expr(x->value, y->value) &&
               exprs(x->indices, y->indices);
      }
      case NodeKind::Allocate: {
        const auto *x = a.as<AllocateNode>(), *y = b.as<AllocateNode>();
        const Buffer &p = x->buffer, &q = y->buffer;
        if (p->dtype != q->dtype || p->scope != q->scope || !exprs(p->shape, q->shape))
          return false;
        bind(p.get(), q.get());
        bind(p->data.get(), q->data.get());
        return stmt(x->body, y->body);
      }
        TESSEL_NON_STMT_KINDS(TESSEL_KIND_CASE)
        TESSEL_UNREACHABLE(std::string("not a statement: ") + node_kind_name(a->kind()));
    }
    fail_non_ir_node(a->kind(), "structural_equal");
  }

 private:
  bool map_free_;
  std::unordered_map<const Node*, const Node*> map_;
};

// Hashes structure; vars hash by dtype only, so alpha-equivalent IR hashes alike.
class Hasher : public IRVisitor {
 public:
  size_t h = 0x9e3779b97f4a7c15ULL;
  void mix(size_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); }

  void visit_expr(const PrimExpr& e) override {
    mix(static_cast<size_t>(e->kind()));
    mix(std::hash<std::string>()(e.dtype().str()));
    if (const auto* i = e.as<IntImmNode>()) mix(std::hash<int64_t>()(i->value));
    if (const auto* f = e.as<FloatImmNode>()) mix(std::hash<double>()(f->value));
    if (const auto* c = e.as<CallNode>()) mix(static_cast<size_t>(c->op));
    IRVisitor::visit_expr(e);
  }
  void visit_stmt(const Stmt& s) override {
    mix(static_cast<size_t>(s->kind()));
    if (const auto* f = s.as<ForNode>()) mix(static_cast<size_t>(f->kind));
    IRVisitor::visit_stmt(s);
  }
};

}  // namespace

bool structural_equal(const PrimExpr& a, const PrimExpr& b, bool map_free_vars) {
  return Equal(map_free_vars).expr(a, b);
}
bool structural_equal(const Stmt& a, const Stmt& b, bool map_free_vars) {
  return Equal(map_free_vars).stmt(a, b);
}
bool structural_equal(const PrimFunc& a, const PrimFunc& b) {
  if (a->params.size() != b->params.size()) return false;
  Equal eq(true);
  for (size_t i = 0; i < a->params.size(); ++i) {
    if (!eq.var(a->params[i], b->params[i]) || !eq.buffer(a->buffers[i], b->buffers[i]))
      return false;
  }
  return eq.stmt(a->body, b->body);
}

size_t structural_hash(const PrimExpr& e) {
  Hasher h;
  h.visit_expr(e);
  return h.h;
}
size_t structural_hash(const Stmt& s) {
  Hasher h;
  h.visit_stmt(s);
  return h.h;
}

}  // namespace tessel
