#include "tir/transforms/unroll_loops.h"

#include <fmt/format.h>

#include <optional>

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

// The steps of a statement once its Unrolled loops are expanded; nullopt when it holds a loop
// that stays rolled.
class StepCounter : public IRVisitor {
 public:
  static std::optional<int64_t> of(const Stmt& s) {
    StepCounter c;
    c.visit_stmt(s);
    return c.bounded_ ? std::optional<int64_t>(c.steps_) : std::nullopt;
  }

 protected:
  void visit_For(const ForNode* op, const Stmt&) override {
    const int64_t* extent = as_const_int(op->extent);
    std::optional<int64_t> body = of(op->body);
    if (!body || !extent) {
      bounded_ = false;
    } else if (op->kind == ForKind::kUnrolled) {
      steps_ += *extent * *body;
    } else if (op->kind == ForKind::kVectorized || *extent <= 1) {
      steps_ += *body;
    } else {
      bounded_ = false;
    }
  }
  void visit_BufferStore(const BufferStoreNode*, const Stmt&) override { ++steps_; }
  void visit_Evaluate(const EvaluateNode*, const Stmt&) override { ++steps_; }

 private:
  int64_t steps_ = 0;
  bool bounded_ = true;
};

class AutoUnrollMarker : public IRMutator {
 public:
  explicit AutoUnrollMarker(int64_t max_step) : max_step_(max_step) {}

 protected:
  Stmt mutate_For(const ForNode* op, const Stmt& self) override {
    Stmt s = IRMutator::mutate_For(op, self);  // inner loops first
    const auto* loop = s.as<ForNode>();
    const int64_t* extent = as_const_int(loop->extent);
    if (loop->kind != ForKind::kSerial || !extent) return s;
    std::optional<int64_t> body = StepCounter::of(loop->body);
    if (!body || *extent * *body > max_step_) return s;
    return ForNode::make(loop->loop_var, loop->min, loop->extent, ForKind::kUnrolled, loop->body,
                         loop->thread_tag);
  }

 private:
  int64_t max_step_;
};

}  // namespace

Stmt mark_auto_unroll(const Stmt& s, int64_t max_step) {
  return max_step > 0 ? AutoUnrollMarker(max_step).mutate_stmt(s) : s;
}

PrimFunc unroll_loops(const PrimFunc& f, const UnrollLoopsOptions& opt) {
  Stmt body = LoopUnroller(opt).mutate_stmt(f->body);
  return body.same_as(f->body) ? f : f.with_body(body);
}

}  // namespace tessel::tir
