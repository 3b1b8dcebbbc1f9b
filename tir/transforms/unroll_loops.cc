#include "tir/transforms/unroll_loops.h"

#include <fmt/format.h>

#include "ir/functor.h"
#include "ir/printer.h"
#include "tir/transforms/fresh_vars.h"

namespace tessel::tir {
namespace {

bool contains_loop(const Stmt& s) {
  struct Finder : IRVisitor {
    bool found = false;
    void visit_For(const ForNode*, const Stmt&) override { found = true; }
  } finder;
  finder.visit_stmt(s);
  return finder.found;
}

class LoopUnroller : public IRMutator {
 public:
  explicit LoopUnroller(const UnrollLoopsOptions& opt) : opt_(opt) {}

 protected:
  Stmt mutate_For(const ForNode* op, const Stmt& self) override {
    Stmt s = IRMutator::mutate_For(op, self);  // inner loops first
    const auto* loop = s.as<ForNode>();
    const int64_t* extent = as_const_int(loop->extent);
    if (loop->kind == ForKind::kUnrolled) {
      if (!extent) {
        throw Error(fmt::format(
            "cannot unroll loop '{}': its extent '{}' is not a constant; unroll only loops with "
            "a constant trip count (e.g. the inner loop of a split by a constant factor)",
            loop->loop_var->name_hint, to_string(loop->extent)));
      }
      return unroll(loop, *extent);
    }
    bool auto_unroll = loop->kind == ForKind::kSerial && extent &&
                       *extent <= opt_.auto_max_extent && !contains_loop(loop->body);
    return auto_unroll ? unroll(loop, *extent) : s;
  }

 private:
  static Stmt unroll(const ForNode* loop, int64_t extent) {
    std::vector<Stmt> copies;
    for (int64_t k = 0; k < extent; ++k) {
      DataType t = loop->loop_var.dtype();
      PrimExpr value = cast(t, loop->min) + make_const(t, static_cast<double>(k));
      copies.push_back(copy_with_fresh_vars(loop->body, {{loop->loop_var, value}}));
    }
    return SeqStmtNode::make(copies);
  }

  UnrollLoopsOptions opt_;
};

}  // namespace

PrimFunc unroll_loops(const PrimFunc& f, const UnrollLoopsOptions& opt) {
  Stmt body = LoopUnroller(opt).mutate_stmt(f->body);
  return body.same_as(f->body) ? f : f.with_body(body);
}

}  // namespace tessel::tir
