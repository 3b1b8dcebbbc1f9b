#include "tir/transforms/verify.h"

#include <fmt/format.h>

#include <unordered_set>

#include "ir/functor.h"

namespace tessel::tir {
namespace {

class Verifier : public IRVisitor {
 public:
  Verifier(const PrimFunc& f, const VerifyOptions& opt) : func_(f), opt_(opt) {}

  void run() {
    for (size_t i = 0; i < func_->params.size(); ++i) {
      define(func_->params[i]);
      define(func_->buffers[i]->data);
      for (const auto* dims : {&func_->buffers[i]->shape, &func_->buffers[i]->strides}) {
        for (const auto& e : *dims) {
          if (const auto* v = e.as<VarNode>()) defined_.insert(v);
        }
      }
    }
    for (const auto& b : func_->buffers) {
      for (const auto& e : b->shape) visit_expr(e);
      for (const auto& e : b->strides) visit_expr(e);
    }
    visit_stmt(func_->body);
  }

 protected:
  void visit_Var(const VarNode* op, const PrimExpr&) override { use(op); }
  void visit_Let(const LetNode* op, const PrimExpr&) override {
    visit_expr(op->value);
    scoped(op->var, [&] { visit_expr(op->body); });
  }
  void visit_BufferLoad(const BufferLoadNode* op, const PrimExpr& self) override {
    check_access(op->buffer, op->indices, self.dtype(), "load from");
    IRVisitor::visit_BufferLoad(op, self);
  }
  void visit_non_ir_expr(const PrimExpr& e) override {
    fail(fmt::format("a te node (kind #{}) is left", static_cast<int>(e->kind())));
  }

  void visit_LetStmt(const LetStmtNode* op, const Stmt&) override {
    visit_expr(op->value);
    scoped(op->var, [&] { visit_stmt(op->body); });
  }
  void visit_For(const ForNode* op, const Stmt&) override {
    if (opt_.require_no_vectorized_loops && op->kind == ForKind::kVectorized) {
      fail(fmt::format("vectorized loop '{}' is left", op->loop_var->name_hint));
    }
    visit_expr(op->min);
    visit_expr(op->extent);
    scoped(op->loop_var, [&] { visit_stmt(op->body); });
  }
  void visit_BufferStore(const BufferStoreNode* op, const Stmt& self) override {
    check_access(op->buffer, op->indices, op->value.dtype(), "store into");
    IRVisitor::visit_BufferStore(op, self);
  }
  void visit_Allocate(const AllocateNode* op, const Stmt&) override {
    for (const auto& e : op->buffer->shape) visit_expr(e);
    if (opt_.require_flat && op->buffer->shape.size() != 1) {
      fail(fmt::format("allocation of '{}' is not 1-d", op->buffer->name));
    }
    scoped(op->buffer->data, [&] { visit_stmt(op->body); });
  }

 private:
  [[noreturn]] void fail(const std::string& problem) const {
    throw InternalError(fmt::format("IR verification after pass '{}' failed in function '{}': {}",
                                    opt_.after_pass, func_->name, problem));
  }
  void define(const Var& v) { defined_.insert(v.get()); }
  void use(const VarNode* v) const {
    if (!defined_.count(v)) fail(fmt::format("var '{}' is used but not defined", v->name_hint));
  }
  template <class Fn>
  void scoped(const Var& v, Fn fn) {
    bool fresh = defined_.insert(v.get()).second;
    fn();
    if (fresh) defined_.erase(v.get());
  }
  void check_access(const Buffer& b, const std::vector<PrimExpr>& idx, DataType value,
                    const char* what) const {
    use(b->data.get());
    if (opt_.require_flat && idx.size() != 1) {
      fail(fmt::format("{} '{}' has {} indices after flattening", what, b->name, idx.size()));
    }
    if (value.element_of() != b->dtype) {
      fail(fmt::format("{} '{}' of dtype {} has a value of dtype {}", what, b->name, b->dtype.str(),
                       value.str()));
    }
    int index_lanes = idx.empty() ? 1 : idx.back().dtype().lanes();  // a 0-d access has no index
    if (value.lanes() != index_lanes) {
      fail(fmt::format("{} '{}' has a {} value at an index of {} lanes", what, b->name, value.str(),
                       index_lanes));
    }
  }

  PrimFunc func_;
  const VerifyOptions& opt_;
  std::unordered_set<const VarNode*> defined_;
};

}  // namespace

void verify(const PrimFunc& f, const VerifyOptions& opt) { Verifier(f, opt).run(); }

}  // namespace tessel::tir
