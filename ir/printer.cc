#include "ir/printer.h"

#include <fmt/format.h>

#include <ostream>

namespace tessel {

void IRPrinter::print_expr(const PrimExpr& e, int ctx) {
  if (!e.defined()) {
    os_ << "<undefined>";
    return;
  }
  visit_expr(e, ctx);
}

const std::string& IRPrinter::name_of(const Node* key, const std::string& hint) {
  auto it = names_.find(key);
  if (it != names_.end()) return it->second;
  if (canonical_names_) return names_[key] = fmt::format("%{}{}", names_.size(), hint);
  std::string base = hint.empty() ? "v" : hint, name = base;
  for (int i = 1; used_.count(name); ++i) name = fmt::format("{}_{}", base, i);
  used_.insert(name);
  return names_[key] = name;
}

// Canonical var names carry the var's type, which the text shows nowhere else.
const std::string& IRPrinter::var_name(const Var& v) {
  return name_of(v.get(), canonical_names_ ? ":" + v.dtype().str() : v->name_hint);
}

const std::string& IRPrinter::buffer_name(const Buffer& b) {
  return name_of(b->data.get(), canonical_names_ ? "" : b->name);
}

void IRPrinter::print_list(const std::vector<PrimExpr>& es) {
  for (size_t i = 0; i < es.size(); ++i) {
    if (i) os_ << ", ";
    print_expr(es[i]);
  }
}

void IRPrinter::infix(const PrimExpr& a, const char* sym, const PrimExpr& b, int prec, int ctx) {
  if (ctx > prec) os_ << "(";
  print_expr(a, prec);
  os_ << sym;
  print_expr(b, prec + 1);  // left-associative
  if (ctx > prec) os_ << ")";
}

void IRPrinter::call(const char* name, const std::vector<PrimExpr>& args) {
  os_ << name << "(";
  print_list(args);
  os_ << ")";
}

void IRPrinter::visit_non_ir_expr(const PrimExpr& e, int) {
  os_ << "<" << node_kind_name(e->kind()) << ">";
}

void IRPrinter::visit_IntImm(const IntImmNode* op, const PrimExpr&, int) {
  if (op->dtype.is_bool()) {
    os_ << (op->value ? "True" : "False");
  } else if (op->dtype == DataType::i32()) {
    os_ << op->value;
  } else {
    os_ << op->value << "_" << op->dtype.str();
  }
}
void IRPrinter::visit_FloatImm(const FloatImmNode* op, const PrimExpr&, int) {
  os_ << fmt::format("{}", op->value)
      << (op->dtype == DataType::f32() ? "f" : "_" + op->dtype.str());
}
void IRPrinter::visit_Var(const VarNode*, const PrimExpr& e, int) {
  os_ << var_name(Var(Ref<VarNode>(static_cast<const VarNode*>(e.get()))));
}
void IRPrinter::visit_Cast(const CastNode* op, const PrimExpr&, int) {
  os_ << op->dtype.str() << "(";
  print_expr(op->value);
  os_ << ")";
}

// Infix binary kinds: symbol and precedence (min and max print as calls).
#define TESSEL_INFIX_KINDS(X)  \
  X(Add, " + ", kAddSub)       \
  X(Sub, " - ", kAddSub)       \
  X(Mul, "*", kMulDiv)         \
  X(Div, "/", kMulDiv)         \
  X(FloorDiv, " // ", kMulDiv) \
  X(FloorMod, " % ", kMulDiv)  \
  X(EQ, " == ", kCmp)          \
  X(NE, " != ", kCmp)          \
  X(LT, " < ", kCmp)           \
  X(LE, " <= ", kCmp)          \
  X(GT, " > ", kCmp)           \
  X(GE, " >= ", kCmp)          \
  X(And, " && ", kAnd)         \
  X(Or, " || ", kOr)
#define TESSEL_PRINT_INFIX(N, symbol, prec)                                \
  void IRPrinter::visit_##N(const N##Node* op, const PrimExpr&, int ctx) { \
    infix(op->a, symbol, op->b, prec, ctx);                                \
  }
TESSEL_INFIX_KINDS(TESSEL_PRINT_INFIX)
#undef TESSEL_PRINT_INFIX
#undef TESSEL_INFIX_KINDS

void IRPrinter::visit_Min(const MinNode* op, const PrimExpr&, int) { call("min", {op->a, op->b}); }
void IRPrinter::visit_Max(const MaxNode* op, const PrimExpr&, int) { call("max", {op->a, op->b}); }
void IRPrinter::visit_Not(const NotNode* op, const PrimExpr&, int) {
  os_ << "!";
  print_expr(op->a, kUnary);
}
void IRPrinter::visit_Select(const SelectNode* op, const PrimExpr&, int) {
  call("select", {op->condition, op->true_value, op->false_value});
}
void IRPrinter::visit_IfThenElseExpr(const IfThenElseExprNode* op, const PrimExpr&, int) {
  call("if_then_else", {op->condition, op->true_value, op->false_value});
}
void IRPrinter::visit_Ramp(const RampNode* op, const PrimExpr&, int) {
  call("ramp", {op->base, op->stride, op->lanes});
}
void IRPrinter::visit_Broadcast(const BroadcastNode* op, const PrimExpr&, int) {
  call("broadcast", {op->value, op->lanes});
}
void IRPrinter::visit_Let(const LetNode* op, const PrimExpr&, int) {
  os_ << "(let " << var_name(op->var) << " = ";
  print_expr(op->value);
  os_ << " in ";
  print_expr(op->body);
  os_ << ")";
}
void IRPrinter::visit_Call(const CallNode* op, const PrimExpr&, int) {
  call(intrinsic_name(op->op), op->args);
}
void IRPrinter::visit_BufferLoad(const BufferLoadNode* op, const PrimExpr&, int) {
  os_ << buffer_name(op->buffer) << "[";
  print_list(op->indices);
  os_ << "]";
}

void IRPrinter::print_stmt(const Stmt& s, int indent) {
  std::string pad(indent * 2, ' ');
  auto block = [&](const Stmt& body) {
    os_ << " {\n";
    print_stmt(body, indent + 1);
    os_ << pad << "}\n";
  };
  switch (s->kind()) {
    case NodeKind::LetStmt: {
      const auto* op = s.as<LetStmtNode>();
      os_ << pad << "let " << var_name(op->var) << " = ";
      print_expr(op->value);
      os_ << "\n";
      print_stmt(op->body, indent);
      return;
    }
    case NodeKind::AssertStmt: {
      const auto* op = s.as<AssertStmtNode>();
      os_ << pad << "assert(";
      print_expr(op->condition);
      os_ << ", \"" << op->message << "\")\n";
      print_stmt(op->body, indent);
      return;
    }
    case NodeKind::Evaluate:
      os_ << pad;
      print_expr(s.as<EvaluateNode>()->value);
      os_ << "\n";
      return;
    case NodeKind::SeqStmt:
      for (const auto& c : s.as<SeqStmtNode>()->seq) print_stmt(c, indent);
      return;
    case NodeKind::IfThenElse: {
      const auto* op = s.as<IfThenElseNode>();
      os_ << pad << "if (";
      print_expr(op->condition);
      os_ << ")";
      block(op->then_case);
      if (op->else_case.defined()) {
        os_ << pad << "else";
        block(op->else_case);
      }
      return;
    }
    case NodeKind::For: {
      const auto* op = s.as<ForNode>();
      os_ << pad;
      if (op->kind == ForKind::kThreadBinding) {
        os_ << "bind " << op->thread_tag << " ";
      } else if (op->kind != ForKind::kSerial) {
        os_ << for_kind_name(op->kind) << " ";
      }
      os_ << "for (" << var_name(op->loop_var) << ", ";
      print_expr(op->min);
      os_ << ", ";
      print_expr(op->extent);
      os_ << ")";
      block(op->body);
      return;
    }
    case NodeKind::BufferStore: {
      const auto* op = s.as<BufferStoreNode>();
      os_ << pad << buffer_name(op->buffer) << "[";
      print_list(op->indices);
      os_ << "] = ";
      print_expr(op->value);
      os_ << "\n";
      return;
    }
    case NodeKind::Allocate: {
      const auto* op = s.as<AllocateNode>();
      os_ << pad << "allocate " << buffer_name(op->buffer) << ": " << op->buffer->dtype.str()
          << "[";
      print_list(op->buffer->shape);
      os_ << "], " << mem_scope_name(op->buffer->scope) << "\n";
      print_stmt(op->body, indent);
      return;
    }
      TESSEL_NON_STMT_KINDS(TESSEL_KIND_CASE)
      break;
  }
  os_ << pad << "<" << node_kind_name(s->kind()) << ">\n";
}

void IRPrinter::print_func(const PrimFunc& f) {
  os_ << "primfn " << (canonical_names_ ? "" : f->name) << "(";
  for (size_t i = 0; i < f->params.size(); ++i) {
    const Buffer& b = f->buffers[i];
    if (i) os_ << ", ";
    if (!b.defined()) {  // a scalar argument
      os_ << var_name(f->params[i]) << ": " << f->params[i].dtype().str();
      continue;
    }
    os_ << buffer_name(b) << ": " << b->dtype.str() << "[";
    print_list(b->shape);
    os_ << "]";
  }
  os_ << ") {\n";
  print_stmt(f->body, 1);
  os_ << "}\n";
}

std::string to_string(const PrimExpr& e) {
  IRPrinter p;
  p.print_expr(e);
  return p.str();
}
std::string to_string(const Stmt& s) {
  IRPrinter p;
  p.print_stmt(s, 0);
  return p.str();
}
std::string to_string(const PrimFunc& f) {
  IRPrinter p;
  p.print_func(f);
  return p.str();
}

std::string canonical_text(const PrimFunc& f) {
  IRPrinter p(true);
  p.print_func(f);
  return p.str();
}

std::ostream& operator<<(std::ostream& os, const PrimExpr& e) { return os << to_string(e); }
std::ostream& operator<<(std::ostream& os, const Stmt& s) { return os << to_string(s); }
std::ostream& operator<<(std::ostream& os, const PrimFunc& f) { return os << to_string(f); }

}  // namespace tessel
