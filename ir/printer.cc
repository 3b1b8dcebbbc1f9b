#include "ir/printer.h"

#include <fmt/format.h>

#include <ostream>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "ir/functor.h"

namespace tessel {
namespace {

// Higher binds tighter.
enum Prec : int { kOr = 1, kAnd, kCmp, kAddSub, kMulDiv, kUnary, kAtom };

class Printer : public ExprFunctor<void, int> {
 public:
  std::ostringstream os;

  void print_expr(const PrimExpr& e, int ctx = 0) {
    if (!e.defined()) {
      os << "<undefined>";
      return;
    }
    visit_expr(e, ctx);
  }

  const std::string& name_of(const Node* key, const std::string& hint) {
    auto it = names_.find(key);
    if (it != names_.end()) return it->second;
    std::string base = hint.empty() ? "v" : hint, name = base;
    for (int i = 1; used_.count(name); ++i) name = fmt::format("{}_{}", base, i);
    used_.insert(name);
    return names_[key] = name;
  }
  const std::string& var_name(const Var& v) { return name_of(v.get(), v->name_hint); }
  // Keyed by the data var: a flattened view of a buffer prints under the same name.
  const std::string& buffer_name(const Buffer& b) { return name_of(b->data.get(), b->name); }

  void print_stmt(const Stmt& s, int indent);
  void print_func(const PrimFunc& f);

 protected:
  void visit_IntImm(const IntImmNode* op, const PrimExpr&, int) override {
    if (op->dtype.is_bool()) {
      os << (op->value ? "True" : "False");
    } else if (op->dtype == DataType::i32()) {
      os << op->value;
    } else {
      os << op->value << "_" << op->dtype.str();
    }
  }
  void visit_FloatImm(const FloatImmNode* op, const PrimExpr&, int) override {
    os << fmt::format("{}", op->value)
       << (op->dtype == DataType::f32() ? "f" : "_" + op->dtype.str());
  }
  void visit_Var(const VarNode*, const PrimExpr& e, int) override {
    os << var_name(Var(Ref<VarNode>(static_cast<const VarNode*>(e.get()))));
  }
  void visit_Cast(const CastNode* op, const PrimExpr&, int) override {
    os << op->dtype.str() << "(";
    print_expr(op->value);
    os << ")";
  }
  void infix(const PrimExpr& a, const char* sym, const PrimExpr& b, int prec, int ctx) {
    if (ctx > prec) os << "(";
    print_expr(a, prec);
    os << sym;
    print_expr(b, prec + 1);  // left-associative
    if (ctx > prec) os << ")";
  }
  void call(const char* name, const std::vector<PrimExpr>& args) {
    os << name << "(";
    for (size_t i = 0; i < args.size(); ++i) {
      if (i) os << ", ";
      print_expr(args[i]);
    }
    os << ")";
  }
  void visit_Add(const AddNode* op, const PrimExpr&, int c) override {
    infix(op->a, " + ", op->b, kAddSub, c);
  }
  void visit_Sub(const SubNode* op, const PrimExpr&, int c) override {
    infix(op->a, " - ", op->b, kAddSub, c);
  }
  void visit_Mul(const MulNode* op, const PrimExpr&, int c) override {
    infix(op->a, "*", op->b, kMulDiv, c);
  }
  void visit_Div(const DivNode* op, const PrimExpr&, int c) override {
    infix(op->a, "/", op->b, kMulDiv, c);
  }
  void visit_FloorDiv(const FloorDivNode* op, const PrimExpr&, int c) override {
    infix(op->a, " // ", op->b, kMulDiv, c);
  }
  void visit_FloorMod(const FloorModNode* op, const PrimExpr&, int c) override {
    infix(op->a, " % ", op->b, kMulDiv, c);
  }
  void visit_Min(const MinNode* op, const PrimExpr&, int) override { call("min", {op->a, op->b}); }
  void visit_Max(const MaxNode* op, const PrimExpr&, int) override { call("max", {op->a, op->b}); }
  void visit_EQ(const EQNode* op, const PrimExpr&, int c) override {
    infix(op->a, " == ", op->b, kCmp, c);
  }
  void visit_NE(const NENode* op, const PrimExpr&, int c) override {
    infix(op->a, " != ", op->b, kCmp, c);
  }
  void visit_LT(const LTNode* op, const PrimExpr&, int c) override {
    infix(op->a, " < ", op->b, kCmp, c);
  }
  void visit_LE(const LENode* op, const PrimExpr&, int c) override {
    infix(op->a, " <= ", op->b, kCmp, c);
  }
  void visit_GT(const GTNode* op, const PrimExpr&, int c) override {
    infix(op->a, " > ", op->b, kCmp, c);
  }
  void visit_GE(const GENode* op, const PrimExpr&, int c) override {
    infix(op->a, " >= ", op->b, kCmp, c);
  }
  void visit_And(const AndNode* op, const PrimExpr&, int c) override {
    infix(op->a, " && ", op->b, kAnd, c);
  }
  void visit_Or(const OrNode* op, const PrimExpr&, int c) override {
    infix(op->a, " || ", op->b, kOr, c);
  }
  void visit_Not(const NotNode* op, const PrimExpr&, int) override {
    os << "!";
    print_expr(op->a, kUnary);
  }
  void visit_Select(const SelectNode* op, const PrimExpr&, int) override {
    call("select", {op->condition, op->true_value, op->false_value});
  }
  void visit_IfThenElseExpr(const IfThenElseExprNode* op, const PrimExpr&, int) override {
    call("if_then_else", {op->condition, op->true_value, op->false_value});
  }
  void visit_Ramp(const RampNode* op, const PrimExpr&, int) override {
    call("ramp", {op->base, op->stride, op->lanes});
  }
  void visit_Broadcast(const BroadcastNode* op, const PrimExpr&, int) override {
    call("broadcast", {op->value, op->lanes});
  }
  void visit_Let(const LetNode* op, const PrimExpr&, int) override {
    os << "(let " << var_name(op->var) << " = ";
    print_expr(op->value);
    os << " in ";
    print_expr(op->body);
    os << ")";
  }
  void visit_Call(const CallNode* op, const PrimExpr&, int) override {
    call(intrinsic_name(op->op), op->args);
  }
  void indices(const std::vector<PrimExpr>& idx) {
    for (size_t i = 0; i < idx.size(); ++i) {
      if (i) os << ", ";
      print_expr(idx[i]);
    }
  }
  void visit_BufferLoad(const BufferLoadNode* op, const PrimExpr&, int) override {
    os << buffer_name(op->buffer) << "[";
    indices(op->indices);
    os << "]";
  }
  void visit_ProducerLoad(const ProducerLoadNode* op, const PrimExpr&, int) override {
    os << op->op->name;
    if (op->op->num_outputs() > 1) os << ".v" << op->value_index;
    os << "(";
    indices(op->indices);
    os << ")";
  }
  void visit_Reduce(const ReduceNode* op, const PrimExpr&, int) override {
    os << op->combiner->name << "(";
    print_expr(op->source);
    os << ", axis=[";
    for (size_t i = 0; i < op->axis.size(); ++i) {
      if (i) os << ", ";
      os << var_name(op->axis[i]->var);
    }
    os << "]";
    if (op->condition.defined() && !is_one(op->condition)) {
      os << ", where=";
      print_expr(op->condition);
    }
    os << ")";
  }

 private:
  std::unordered_map<const Node*, std::string> names_;
  std::unordered_set<std::string> used_;
};

void Printer::print_stmt(const Stmt& s, int indent) {
  std::string pad(indent * 2, ' ');
  auto block = [&](const Stmt& body) {
    os << " {\n";
    print_stmt(body, indent + 1);
    os << pad << "}\n";
  };
  switch (s->kind()) {
    case NodeKind::LetStmt: {
      const auto* op = s.as<LetStmtNode>();
      os << pad << "let " << var_name(op->var) << " = ";
      print_expr(op->value);
      os << "\n";
      print_stmt(op->body, indent);
      break;
    }
    case NodeKind::AssertStmt: {
      const auto* op = s.as<AssertStmtNode>();
      os << pad << "assert(";
      print_expr(op->condition);
      os << ", \"" << op->message << "\")\n";
      print_stmt(op->body, indent);
      break;
    }
    case NodeKind::Evaluate:
      os << pad;
      print_expr(s.as<EvaluateNode>()->value);
      os << "\n";
      break;
    case NodeKind::SeqStmt:
      for (const auto& c : s.as<SeqStmtNode>()->seq) print_stmt(c, indent);
      break;
    case NodeKind::IfThenElse: {
      const auto* op = s.as<IfThenElseNode>();
      os << pad << "if (";
      print_expr(op->condition);
      os << ")";
      block(op->then_case);
      if (op->else_case.defined()) {
        os << pad << "else";
        block(op->else_case);
      }
      break;
    }
    case NodeKind::For: {
      const auto* op = s.as<ForNode>();
      os << pad;
      if (op->kind == ForKind::kThreadBinding) {
        os << "bind " << op->thread_tag << " ";
      } else if (op->kind != ForKind::kSerial) {
        os << for_kind_name(op->kind) << " ";
      }
      os << "for (" << var_name(op->loop_var) << ", ";
      print_expr(op->min);
      os << ", ";
      print_expr(op->extent);
      os << ")";
      block(op->body);
      break;
    }
    case NodeKind::BufferStore: {
      const auto* op = s.as<BufferStoreNode>();
      os << pad << buffer_name(op->buffer) << "[";
      indices(op->indices);
      os << "] = ";
      print_expr(op->value);
      os << "\n";
      break;
    }
    case NodeKind::Allocate: {
      const auto* op = s.as<AllocateNode>();
      os << pad << "allocate " << buffer_name(op->buffer) << ": " << op->buffer->dtype.str() << "[";
      indices(op->buffer->shape);
      os << "], " << mem_scope_name(op->buffer->scope) << "\n";
      print_stmt(op->body, indent);
      break;
    }
    default:
      os << pad << "<" << node_kind_name(s->kind()) << ">\n";
  }
}

void Printer::print_func(const PrimFunc& f) {
  os << "primfn " << f->name << "(";
  for (size_t i = 0; i < f->params.size(); ++i) {
    const Buffer& b = f->buffers[i];
    if (i) os << ", ";
    os << buffer_name(b) << ": " << b->dtype.str() << "[";
    indices(b->shape);
    os << "]";
  }
  os << ") {\n";
  print_stmt(f->body, 1);
  os << "}\n";
}

}  // namespace

std::string to_string(const PrimExpr& e) {
  Printer p;
  p.print_expr(e);
  return p.os.str();
}
std::string to_string(const Stmt& s) {
  Printer p;
  p.print_stmt(s, 0);
  return p.os.str();
}
std::string to_string(const PrimFunc& f) {
  Printer p;
  p.print_func(f);
  return p.os.str();
}

std::ostream& operator<<(std::ostream& os, const PrimExpr& e) { return os << to_string(e); }
std::ostream& operator<<(std::ostream& os, const Stmt& s) { return os << to_string(s); }
std::ostream& operator<<(std::ostream& os, const PrimFunc& f) { return os << to_string(f); }

}  // namespace tessel
