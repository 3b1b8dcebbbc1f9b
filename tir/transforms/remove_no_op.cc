#include "tir/transforms/remove_no_op.h"

#include "ir/functor.h"
#include "ir/structural_equal.h"

namespace tessel::tir {
namespace {

bool is_no_op(const Stmt& s) {
  if (!s.defined()) return true;
  const auto* ev = s.as<EvaluateNode>();
  return ev && (ev->value.is<IntImmNode>() || ev->value.is<FloatImmNode>());
}

Stmt no_op() { return EvaluateNode::make(0); }

class NoOpRemover : public IRMutator {
 protected:
  Stmt mutate_SeqStmt(const SeqStmtNode* op, const Stmt& self) override {
    std::vector<Stmt> kept;
    bool changed = false;
    for (const auto& s : op->seq) {
      Stmt m = mutate_stmt(s);
      changed |= !m.same_as(s);
      if (is_no_op(m)) {
        changed = true;
      } else {
        kept.push_back(m);
      }
    }
    return changed ? SeqStmtNode::make(kept) : self;
  }
  Stmt mutate_For(const ForNode* op, const Stmt& self) override {
    Stmt s = IRMutator::mutate_For(op, self);
    const auto* loop = s.as<ForNode>();
    const int64_t* extent = as_const_int(loop->extent);
    return is_no_op(loop->body) || (extent && *extent <= 0) ? no_op() : s;
  }
  Stmt mutate_IfThenElse(const IfThenElseNode* op, const Stmt& self) override {
    Stmt s = IRMutator::mutate_IfThenElse(op, self);
    const auto* branch = s.as<IfThenElseNode>();
    if (const int64_t* c = as_const_int(branch->condition)) {
      return *c ? branch->then_case : (branch->else_case.defined() ? branch->else_case : no_op());
    }
    bool then_empty = is_no_op(branch->then_case), else_empty = is_no_op(branch->else_case);
    if (then_empty && else_empty) return no_op();  // conditions have no side effects
    if (then_empty) return IfThenElseNode::make(!branch->condition, branch->else_case);
    if (else_empty && branch->else_case.defined()) {
      return IfThenElseNode::make(branch->condition, branch->then_case);
    }
    return s;
  }
  Stmt mutate_LetStmt(const LetStmtNode* op, const Stmt& self) override {
    Stmt s = IRMutator::mutate_LetStmt(op, self);
    return is_no_op(s.as<LetStmtNode>()->body) ? no_op() : s;
  }
  Stmt mutate_Allocate(const AllocateNode* op, const Stmt& self) override {
    Stmt s = IRMutator::mutate_Allocate(op, self);
    return is_no_op(s.as<AllocateNode>()->body) ? no_op() : s;
  }
  Stmt mutate_BufferStore(const BufferStoreNode* op, const Stmt& self) override {
    Stmt s = IRMutator::mutate_BufferStore(op, self);
    const auto* store = s.as<BufferStoreNode>();
    const auto* load = store->value.as<BufferLoadNode>();
    bool self_copy = load && load->buffer->data.same_as(store->buffer->data) &&
                     load->indices.size() == store->indices.size();
    for (size_t k = 0; self_copy && k < load->indices.size(); ++k) {
      self_copy = structural_equal(load->indices[k], store->indices[k]);
    }
    return self_copy ? no_op() : s;
  }
};

}  // namespace

PrimFunc remove_no_op(const PrimFunc& f) {
  Stmt body = NoOpRemover().mutate_stmt(f->body);
  return body.same_as(f->body) ? f : f.with_body(body);
}

}  // namespace tessel::tir
