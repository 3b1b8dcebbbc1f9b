// Readable text for expressions, statements and functions. Distinct vars that share a name hint
// get distinct names (i, i_1, ...). Integer division prints as // and % with floor semantics.
#pragma once

#include <iosfwd>
#include <sstream>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "ir/functor.h"
#include "ir/stmt.h"

namespace tessel {

std::string to_string(const PrimExpr& e);
std::string to_string(const Stmt& s);
std::string to_string(const PrimFunc& f);
// The function without its name and with every var and buffer named by its position of first use
// ("%0:int32", "%1", ...): equal text for functions that differ only in names, and different text
// wherever the code differs (the kernel cache's key, codegen/kernel_cache.h).
std::string canonical_text(const PrimFunc& f);

std::ostream& operator<<(std::ostream& os, const PrimExpr& e);
std::ostream& operator<<(std::ostream& os, const Stmt& s);
std::ostream& operator<<(std::ostream& os, const PrimFunc& f);

// The printer behind to_string. te's printer (te/printer.h) derives from it to print te's nodes;
// this one prints a te node as <non-ir node>.
class IRPrinter : public ExprFunctor<void, int> {
 public:
  IRPrinter() = default;
  explicit IRPrinter(bool canonical_names) : canonical_names_(canonical_names) {}
  // `ctx` is the precedence of the context, which decides the parentheses.
  void print_expr(const PrimExpr& e, int ctx = 0);
  void print_stmt(const Stmt& s, int indent);
  void print_func(const PrimFunc& f);
  std::string str() const { return os_.str(); }

 protected:
  const std::string& var_name(const Var& v);
  // Comma-separated expressions.
  void print_list(const std::vector<PrimExpr>& es);

  void visit_non_ir_expr(const PrimExpr& e, int ctx) override;
#define TESSEL_DECLARE_VISIT(N) \
  void visit_##N(const N##Node* op, const PrimExpr& self, int ctx) override;
  TESSEL_EXPR_KINDS(TESSEL_DECLARE_VISIT)
#undef TESSEL_DECLARE_VISIT

  std::ostringstream os_;

 private:
  // Operator precedence: higher binds tighter.
  enum Prec : int { kOr = 1, kAnd, kCmp, kAddSub, kMulDiv, kUnary };

  const std::string& name_of(const Node* key, const std::string& hint);
  // Keyed by the data var: a flattened view of a buffer prints under the same name.
  const std::string& buffer_name(const Buffer& b);
  void infix(const PrimExpr& a, const char* sym, const PrimExpr& b, int prec, int ctx);
  void call(const char* name, const std::vector<PrimExpr>& args);

  bool canonical_names_ = false;
  std::unordered_map<const Node*, std::string> names_;
  std::unordered_set<std::string> used_;
};

}  // namespace tessel
