#include "tir/transforms/guard_padded_reads.h"

#include <algorithm>
#include <optional>

#include "ir/functor.h"
#include "ir/structural_equal.h"

namespace tessel::tir {
namespace {

bool is_float_zero(const PrimExpr& e) {
  if (const auto* b = e.as<BroadcastNode>()) return is_float_zero(b->value);
  const auto* f = e.as<FloatImmNode>();
  return f && f->value == 0.0;
}

// A read of a zero-filled window: its condition and the value read inside it.
struct PaddedRead {
  PrimExpr condition, value;
};

std::optional<PaddedRead> padded_read(const PrimExpr& e) {
  const auto* ite = e.as<IfThenElseExprNode>();
  if (!ite || !ite->condition.dtype().is_scalar() || !is_float_zero(ite->false_value))
    return std::nullopt;
  return PaddedRead{ite->condition, ite->true_value};
}

// `term` as a padded read, alone or times a factor: the condition and the term without it.
std::optional<PaddedRead> padded_term(const PrimExpr& term) {
  if (auto read = padded_read(term)) return read;
  const auto* mul = term.as<MulNode>();
  if (!mul) return std::nullopt;
  if (auto read = padded_read(mul->a)) return PaddedRead{read->condition, read->value * mul->b};
  if (auto read = padded_read(mul->b)) return PaddedRead{read->condition, mul->a * read->value};
  return std::nullopt;
}

bool reads_stored_element(const PrimExpr& e, const BufferStoreNode* store) {
  const auto* load = e.as<BufferLoadNode>();
  if (!load || !load->buffer.same_as(store->buffer) ||
      load->indices.size() != store->indices.size())
    return false;
  for (size_t i = 0; i < load->indices.size(); ++i) {
    if (!structural_equal(load->indices[i], store->indices[i])) return false;
  }
  return true;
}

// The most copies of a guarded update that unrolled loops around it may make. Partitioning copies
// a loop's body once per part, and the loops around an update may each be split: a register tile
// (at most 16 accumulators in the packed conv's fallback) stays well inside, where an
// auto-scheduler program unrolled up to 512 steps took more than 10 s to build under ASan so.
constexpr int64_t kMaxUnrolledUpdates = 64;

class PaddedReadGuard : public IRMutator {
 protected:
  Stmt mutate_For(const ForNode* op, const Stmt& self) override {
    bool vector = op->kind == ForKind::kVectorized;
    if (vector) vector_vars_.push_back(op->loop_var.get());
    int64_t saved = unrolled_;
    if (op->kind == ForKind::kUnrolled) {
      const int64_t* extent = as_const_int(op->extent);
      unrolled_ = extent ? unrolled_ * std::max<int64_t>(*extent, 1) : kMaxUnrolledUpdates + 1;
    }
    Stmt s = IRMutator::mutate_For(op, self);
    unrolled_ = saved;
    if (vector) vector_vars_.pop_back();
    return s;
  }
  Stmt mutate_BufferStore(const BufferStoreNode* op, const Stmt& self) override {
    const auto* add = op->value.as<AddNode>();
    if (!add || !op->value.dtype().is_float()) return self;
    for (auto [acc, term] : {std::pair{add->a, add->b}, std::pair{add->b, add->a}}) {
      if (!reads_stored_element(acc, op)) continue;
      auto read = padded_term(term);
      // A condition on a vector's lanes stays a select (masked lanes): a branch would need its
      // loop split or run serially.
      if (read && !uses_var(read->condition, vector_vars_) && unrolled_ <= kMaxUnrolledUpdates) {
        Stmt update = BufferStoreNode::make(op->buffer, acc + read->value, op->indices);
        return IfThenElseNode::make(likely(read->condition), update);
      }
    }
    return self;
  }

 private:
  std::vector<const VarNode*> vector_vars_;  // the vectorized loops around the statement
  int64_t unrolled_ = 1;                     // the iterations of the unrolled loops around it
};

}  // namespace

PrimFunc guard_padded_reads(const PrimFunc& f) {
  Stmt body = PaddedReadGuard().mutate_stmt(f->body);
  return body.same_as(f->body) ? f : f.with_body(body);
}

}  // namespace tessel::tir
