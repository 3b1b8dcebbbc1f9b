#include "autotune/auto_schedule/features.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "ir/functor.h"
#include "te/schedule_to_tir.h"

namespace tessel::autotune {
namespace {

// A stride no affine index has: the access is irregular along the loop (floordiv, a load, ...).
constexpr double kIrregularStride = 1e6;

float log_feature(double x) { return static_cast<float>(std::log2(1 + std::max(0.0, x))); }

struct Loop {
  const VarNode* var;
  double extent;
  ForKind kind;
};

struct Access {
  Buffer buffer;
  std::vector<PrimExpr> indices;
  bool write;
};

// The coefficient of `v` in `e` when `e` is affine in it; none when it is not.
std::optional<int64_t> coefficient(const PrimExpr& e, const VarNode* v) {
  if (!uses_var(e, {v})) return 0;
  if (const auto* x = e.as<VarNode>()) return x == v ? 1 : 0;
  if (const auto* c = e.as<CastNode>()) return coefficient(c->value, v);
  auto both = [&](const PrimExpr& a, const PrimExpr& b, int64_t sign) -> std::optional<int64_t> {
    std::optional<int64_t> l = coefficient(a, v), r = coefficient(b, v);
    if (!l || !r) return std::nullopt;
    return *l + sign * *r;
  };
  if (const auto* a = e.as<AddNode>()) return both(a->a, a->b, 1);
  if (const auto* s = e.as<SubNode>()) return both(s->a, s->b, -1);
  if (const auto* m = e.as<MulNode>()) {
    const int64_t* ca = as_const_int(m->a);
    const int64_t* cb = as_const_int(m->b);
    if (ca) {
      std::optional<int64_t> r = coefficient(m->b, v);
      return r ? std::optional<int64_t>(*ca * *r) : std::nullopt;
    }
    if (cb) {
      std::optional<int64_t> l = coefficient(m->a, v);
      return l ? std::optional<int64_t>(*l * *cb) : std::nullopt;
    }
  }
  return std::nullopt;
}

// The stride of `a` along `v` in elements of its flattened (row-major) buffer.
double flat_stride(const Access& a, const VarNode* v) {
  const std::vector<PrimExpr>& shape = a.buffer->shape;
  double stride = 0, step = 1;
  for (size_t d = a.indices.size(); d-- > 0;) {
    std::optional<int64_t> c = coefficient(a.indices[d], v);
    if (!c) return kIrregularStride;
    stride += static_cast<double>(*c) * step;
    const int64_t* extent = d < shape.size() ? as_const_int(shape[d]) : nullptr;
    step *= extent ? static_cast<double>(*extent) : 1;
  }
  return std::abs(stride);
}

// Arithmetic and loads of a stored value.
class ValueScan : public IRVisitor {
 public:
  double float_ops = 0, int_ops = 0;
  std::vector<Access> loads;

 protected:
  void visit_BufferLoad(const BufferLoadNode* op, const PrimExpr& self) override {
    loads.push_back({op->buffer, op->indices, false});
    IRVisitor::visit_BufferLoad(op, self);
  }
  void visit_Call(const CallNode* op, const PrimExpr& self) override {
    count(self);
    IRVisitor::visit_Call(op, self);
  }
#define TESSEL_COUNT_OP(N)                                           \
  void visit_##N(const N##Node* op, const PrimExpr& self) override { \
    count(self);                                                     \
    IRVisitor::visit_##N(op, self);                                  \
  }
  TESSEL_COUNT_OP(Add)
  TESSEL_COUNT_OP(Sub)
  TESSEL_COUNT_OP(Mul)
  TESSEL_COUNT_OP(Div)
  TESSEL_COUNT_OP(Min)
  TESSEL_COUNT_OP(Max)
  TESSEL_COUNT_OP(FloorDiv)
  TESSEL_COUNT_OP(FloorMod)
#undef TESSEL_COUNT_OP

 private:
  void count(const PrimExpr& e) { (e.dtype().is_float() ? float_ops : int_ops) += 1; }
};

struct Statement {
  std::vector<float> features;
  double flops;
};

// Walks the loop nest, one Statement per store.
class NestScan : public IRVisitor {
 public:
  std::vector<Statement> statements;
  double allocated_bytes = 0;
  int parallel_loops = 0;

 protected:
  void visit_For(const ForNode* op, const Stmt& self) override {
    const int64_t* extent = as_const_int(op->extent);
    loops_.push_back({op->loop_var.get(), extent ? static_cast<double>(*extent) : 1.0, op->kind});
    parallel_loops += op->kind == ForKind::kParallel ? 1 : 0;
    IRVisitor::visit_For(op, self);
    loops_.pop_back();
  }
  void visit_Allocate(const AllocateNode* op, const Stmt& self) override {
    double elements = 1;
    for (const PrimExpr& d : op->buffer->shape) {
      const int64_t* e = as_const_int(d);
      elements *= e ? static_cast<double>(*e) : 1.0;
    }
    allocated_bytes += elements * op->buffer->dtype.bytes();
    IRVisitor::visit_Allocate(op, self);
  }
  void visit_BufferStore(const BufferStoreNode* op, const Stmt& self) override {
    ValueScan scan;
    scan.visit_expr(op->value);
    statements.push_back(statement(*op, scan));
    IRVisitor::visit_BufferStore(op, self);
  }

 private:
  Statement statement(const BufferStoreNode& store, ValueScan& scan) const {
    double iters = 1, vector = 1, unrolled = 1, parallel = 1;
    for (const Loop& l : loops_) {
      iters *= l.extent;
      if (l.kind == ForKind::kVectorized) vector *= l.extent;
      if (l.kind == ForKind::kUnrolled) unrolled *= l.extent;
      if (l.kind == ForKind::kParallel) parallel *= l.extent;
    }
    bool update = std::any_of(scan.loads.begin(), scan.loads.end(),
                              [&](const Access& a) { return a.buffer.same_as(store.buffer); });
    std::vector<float> f = {
        log_feature(scan.float_ops * iters),
        log_feature(scan.int_ops * iters),
        log_feature(iters),
        log_feature(vector),
        log_feature(unrolled),
        log_feature(parallel),
        static_cast<float>(loops_.size()),
        log_feature(loops_.empty() ? 0 : loops_.back().extent),
        !loops_.empty() && loops_.back().kind == ForKind::kVectorized ? 1.0f : 0.0f,
        update ? 1.0f : 0.0f,
    };
    std::vector<Access> accesses = {{store.buffer, store.indices, true}};
    std::vector<std::pair<double, Access>> loads;
    for (Access& a : scan.loads) loads.emplace_back(touched(a), std::move(a));
    std::stable_sort(loads.begin(), loads.end(),
                     [](const auto& x, const auto& y) { return x.first > y.first; });
    for (auto& [bytes, a] : loads) accesses.push_back(std::move(a));
    accesses.resize(std::min(accesses.size(), kAccessesPerStatement));
    for (const Access& a : accesses) append_access(a, iters, f);
    f.resize(kStatementFeatures + kAccessFeatures * kAccessesPerStatement, 0.0f);
    return {std::move(f), scan.float_ops * iters};
  }

  bool uses(const Access& a, const Loop& l) const {
    return std::any_of(a.indices.begin(), a.indices.end(),
                       [&](const PrimExpr& i) { return uses_var(i, {l.var}); });
  }

  // Elements of `a` the nest touches: the loops its indices use, multiplied.
  double touched(const Access& a) const {
    double elements = 1;
    for (const Loop& l : loops_) elements *= uses(a, l) ? l.extent : 1.0;
    return elements;
  }

  void append_access(const Access& a, double iters, std::vector<float>& f) const {
    double elements = touched(a);
    double stride = loops_.empty() ? 0 : flat_stride(a, loops_.back().var);
    // Iterations between two uses of one element: those of the loops inside the innermost loop
    // that the access does not move with.
    double distance = 0;
    for (size_t i = loops_.size(); i-- > 0;) {
      if (uses(a, loops_[i])) continue;
      distance = 1;
      for (size_t j = i + 1; j < loops_.size(); ++j) distance *= loops_[j].extent;
      break;
    }
    f.push_back(log_feature(elements * a.buffer->dtype.bytes()));
    f.push_back(log_feature(iters / std::max(1.0, elements)));
    f.push_back(log_feature(stride));
    f.push_back(stride == 0 ? 1.0f : 0.0f);
    f.push_back(a.buffer->scope == MemScope::kGlobal ? 0.0f : 1.0f);
    f.push_back(log_feature(distance));
  }

  std::vector<Loop> loops_;
};

}  // namespace

std::vector<float> loop_nest_features(const PrimFunc& f) {
  NestScan scan;
  scan.visit_stmt(f->body);
  std::vector<Statement>& st = scan.statements;
  std::stable_sort(st.begin(), st.end(),
                   [](const Statement& a, const Statement& b) { return a.flops > b.flops; });
  std::vector<float> out;
  double flops = 0;
  for (const Statement& s : st) flops += s.flops;
  for (size_t i = 0; i < kStatementsPerProgram; ++i) {
    if (i < st.size()) {
      out.insert(out.end(), st[i].features.begin(), st[i].features.end());
    } else {
      out.resize(out.size() + kStatementFeatures + kAccessFeatures * kAccessesPerStatement, 0.0f);
    }
  }
  out.push_back(log_feature(flops));
  out.push_back(static_cast<float>(st.size()));
  out.push_back(log_feature(scan.allocated_bytes));
  out.push_back(static_cast<float>(scan.parallel_loops));
  return out;
}

std::vector<float> program_features(const ComputeDAG& dag, const Sketch& sketch,
                                    const Program& program) {
  try {
    te::Schedule s = apply(dag, sketch, program);
    return loop_nest_features(te::schedule_to_tir(s, dag.args(), "f"));
  } catch (const std::exception&) {  // the search counts and reports such a program
    return std::vector<float>(kNumFeatures, 0.0f);
  }
}

}  // namespace tessel::autotune
