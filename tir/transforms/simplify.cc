#include "tir/transforms/simplify.h"

#include <algorithm>
#include <optional>

#include "ir/functor.h"
#include "tir/arith/analyzer.h"

namespace tessel {
namespace {

Stmt no_op() { return EvaluateNode::make(0); }

class StmtSimplifier : public IRMutator {
 public:
  PrimExpr mutate_expr(const PrimExpr& e) override { return analyzer_.simplify(e); }

 protected:
  Stmt mutate_For(const ForNode* op, const Stmt& self) override {
    PrimExpr min = mutate_expr(op->min), extent = mutate_expr(op->extent);
    if (const int64_t* n = as_const_int(extent)) {
      if (*n <= 0) return no_op();
      // Thread loops keep extent 1: the launch configuration still names them.
      if (*n == 1 && op->kind != ForKind::kThreadBinding) {
        return mutate_stmt(substitute(op->body, {{op->loop_var, min}}));
      }
    }
    analyzer_.bind(op->loop_var, Range(min, extent));
    Stmt body = mutate_stmt(op->body);
    analyzer_.unbind(op->loop_var);
    if (std::optional<int64_t> n = guarded_extent(op, min, extent, body)) {
      if (*n <= 0) return no_op();
      return ForNode::make(op->loop_var, min, make_const(extent.dtype(), static_cast<double>(*n)),
                           op->kind, body.as<IfThenElseNode>()->then_case, op->thread_tag);
    }
    return ForNode::make(op->loop_var, min, extent, op->kind, body, op->thread_tag);
  }

  // `for (v, m, n) { if (v < e) S }` runs S for v in [m, min(m + n, e)): with constant bounds, the
  // extent of that shorter loop, whose body needs no guard. (The tails of partitioned loops take
  // this form once their outer index is known; as guarded loops, LLVM unrolls them into a branch
  // per iteration.) Vectorized loops keep their width.
  std::optional<int64_t> guarded_extent(const ForNode* op, const PrimExpr& min,
                                        const PrimExpr& extent, const Stmt& body) {
    const auto* branch = body.as<IfThenElseNode>();
    if (!branch || branch->else_case.defined()) return std::nullopt;
    if (op->kind != ForKind::kSerial && op->kind != ForKind::kUnrolled) return std::nullopt;
    const PrimExpr* likely_cond = likely_condition(branch->condition);
    const auto* lt = (likely_cond ? *likely_cond : branch->condition).as<LTNode>();
    if (!lt || lt->a.get() != op->loop_var.get() || uses_var(lt->b, {op->loop_var.get()}))
      return std::nullopt;
    PrimExpr prefix = analyzer_.simplify(lt->b - min);  // as_const_int points into it
    const int64_t* n = as_const_int(extent);
    const int64_t* bound = as_const_int(prefix);
    if (!n || !bound) return std::nullopt;
    return std::min(*n, *bound);
  }

  Stmt mutate_LetStmt(const LetStmtNode* op, const Stmt& self) override {
    PrimExpr value = mutate_expr(op->value);
    analyzer_.bind(op->var, value);
    Stmt body = mutate_stmt(op->body);
    analyzer_.unbind(op->var);
    return LetStmtNode::make(op->var, value, body);
  }

  Stmt mutate_IfThenElse(const IfThenElseNode* op, const Stmt& self) override {
    PrimExpr cond = mutate_expr(op->condition);
    if (const int64_t* v = as_const_int(cond)) {
      if (*v) return mutate_stmt(op->then_case);
      return op->else_case.defined() ? mutate_stmt(op->else_case) : no_op();
    }
    Stmt then_case = mutate_stmt(op->then_case);
    Stmt else_case = op->else_case.defined() ? mutate_stmt(op->else_case) : Stmt();
    return IfThenElseNode::make(cond, then_case, else_case);
  }

  Stmt mutate_AssertStmt(const AssertStmtNode* op, const Stmt& self) override {
    PrimExpr cond = mutate_expr(op->condition);
    Stmt body = mutate_stmt(op->body);
    if (is_one(cond)) return body;
    return AssertStmtNode::make(cond, op->message, body);
  }

  // Loads and stores in the body name the allocated buffer itself, so its shape stays as is.
  Stmt mutate_Allocate(const AllocateNode* op, const Stmt& self) override {
    Stmt body = mutate_stmt(op->body);
    return body.same_as(op->body) ? self : AllocateNode::make(op->buffer, body);
  }

 private:
  arith::Analyzer analyzer_;
};

}  // namespace

Stmt simplify_stmt(const Stmt& s) { return StmtSimplifier().mutate_stmt(s); }

PrimFunc simplify(const PrimFunc& f) { return f.with_body(simplify_stmt(f->body)); }

}  // namespace tessel
