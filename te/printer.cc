#include "te/printer.h"

#include "ir/printer.h"
#include "te/expr.h"

namespace tessel::te {
namespace {

class TePrinter : public IRPrinter {
 protected:
  void visit_non_ir_expr(const PrimExpr& e, int) override {
    switch (te_kind(e->kind())) {
      case TeKind::ProducerLoad:
        return print_load(e.as<ProducerLoadNode>());
      case TeKind::Reduce:
        return print_reduce(e.as<ReduceNode>());
        TESSEL_TE_OTHER_KINDS(TESSEL_TE_KIND_CASE)
        break;
    }
    TESSEL_UNREACHABLE(std::string("not an expression: ") + te_kind_name(te_kind(e->kind())));
  }

 private:
  void print_load(const ProducerLoadNode* op) {
    os_ << op->op->name;
    if (op->op->num_outputs() > 1) os_ << ".v" << op->value_index;
    os_ << "(";
    print_list(op->indices);
    os_ << ")";
  }
  void print_reduce(const ReduceNode* op) {
    os_ << op->combiner->name << "(";
    print_expr(op->source);
    os_ << ", axis=[";
    for (size_t i = 0; i < op->axis.size(); ++i) {
      if (i) os_ << ", ";
      os_ << var_name(op->axis[i]->var);
    }
    os_ << "]";
    if (op->condition.defined() && !is_one(op->condition)) {
      os_ << ", where=";
      print_expr(op->condition);
    }
    os_ << ")";
  }
};

}  // namespace

std::string body_to_string(const PrimExpr& e) {
  TePrinter p;
  p.print_expr(e);
  return p.str();
}

}  // namespace tessel::te
