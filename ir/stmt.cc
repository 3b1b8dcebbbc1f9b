#include "ir/stmt.h"

#include <fmt/format.h>

#include "ir/error.h"

namespace tessel {

const char* for_kind_name(ForKind kind) {
  switch (kind) {
    case ForKind::kSerial:
      return "serial";
    case ForKind::kParallel:
      return "parallel";
    case ForKind::kVectorized:
      return "vectorized";
    case ForKind::kUnrolled:
      return "unrolled";
    case ForKind::kThreadBinding:
      return "thread_binding";
  }
  return "?";
}

Stmt LetStmtNode::make(Var var, PrimExpr value, Stmt body) {
  TESSEL_ICHECK(value.dtype() == var.dtype()) << "let " << var->name_hint << ": type mismatch";
  return Stmt(new LetStmtNode(std::move(var), std::move(value), std::move(body)));
}

Stmt AssertStmtNode::make(PrimExpr condition, std::string message, Stmt body) {
  TESSEL_ICHECK(condition.dtype().is_bool()) << "assert condition must be bool";
  return Stmt(new AssertStmtNode(std::move(condition), std::move(message), std::move(body)));
}

Stmt EvaluateNode::make(PrimExpr value) { return Stmt(new EvaluateNode(std::move(value))); }

Stmt SeqStmtNode::make(std::vector<Stmt> seq) {
  std::vector<Stmt> flat;
  for (auto& s : seq) {
    if (!s.defined()) continue;
    if (const auto* inner = s.as<SeqStmtNode>()) {
      flat.insert(flat.end(), inner->seq.begin(), inner->seq.end());
    } else {
      flat.push_back(std::move(s));
    }
  }
  if (flat.empty()) return EvaluateNode::make(0);
  if (flat.size() == 1) return flat[0];
  return Stmt(new SeqStmtNode(std::move(flat)));
}

Stmt IfThenElseNode::make(PrimExpr condition, Stmt then_case, Stmt else_case) {
  TESSEL_ICHECK(condition.dtype().is_bool() && condition.dtype().is_scalar())
      << "if condition must be a scalar bool, got " << condition.dtype().str();
  TESSEL_ICHECK(then_case.defined());
  return Stmt(new IfThenElseNode(std::move(condition), std::move(then_case), std::move(else_case)));
}

Stmt ForNode::make(Var loop_var, PrimExpr min, PrimExpr extent, ForKind kind, Stmt body,
                   std::string thread_tag) {
  TESSEL_ICHECK(min.dtype().is_int() && extent.dtype().is_int()) << "loop bounds must be int";
  TESSEL_ICHECK(body.defined());
  return Stmt(new ForNode(std::move(loop_var), std::move(min), std::move(extent), kind,
                          std::move(body), std::move(thread_tag)));
}

Stmt BufferStoreNode::make(Buffer buffer, PrimExpr value, std::vector<PrimExpr> indices) {
  TESSEL_ICHECK(value.dtype().element_of() == buffer->dtype)
      << "store of " << value.dtype().str() << " into " << buffer->name << " of "
      << buffer->dtype.str();
  TESSEL_ICHECK(indices.size() == buffer->shape.size() || indices.size() == 1)
      << "store to " << buffer->name << " with " << indices.size() << " indices";
  return Stmt(new BufferStoreNode(std::move(buffer), std::move(value), std::move(indices)));
}

Stmt AllocateNode::make(Buffer buffer, Stmt body) {
  return Stmt(new AllocateNode(std::move(buffer), std::move(body)));
}

PrimFunc PrimFunc::make(std::string name, std::vector<Var> params, std::vector<Buffer> buffers,
                        Stmt body) {
  TESSEL_ICHECK(params.size() == buffers.size());
  return PrimFunc(
      new PrimFuncNode(std::move(name), std::move(params), std::move(buffers), std::move(body)));
}

PrimFunc PrimFunc::with_body(Stmt body) const {
  return make(get()->name, get()->params, get()->buffers, std::move(body));
}

}  // namespace tessel
