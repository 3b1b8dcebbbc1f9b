#include "test_util.h"

#include <algorithm>
#include <cmath>

namespace tessel::tir::testing {
namespace {

double round_to(DataType t, double v) {
  if (t.is_float()) return t.bits() == 32 ? static_cast<double>(static_cast<float>(v)) : v;
  if (t.is_bool()) return v != 0;
  return std::trunc(v);
}

Lanes broadcast_to(const Lanes& v, size_t n) { return v.size() == n ? v : Lanes(n, v[0]); }

template <class Fn>
Lanes zip(DataType t, const Lanes& a, const Lanes& b, Fn fn) {
  size_t n = std::max(a.size(), b.size());
  Lanes x = broadcast_to(a, n), y = broadcast_to(b, n), out(n);
  for (size_t i = 0; i < n; ++i) out[i] = round_to(t, fn(x[i], y[i]));
  return out;
}

double call(Intrinsic op, const std::vector<double>& a) {
  switch (op) {
    case Intrinsic::exp:
      return std::exp(a[0]);
    case Intrinsic::exp2:
      return std::exp2(a[0]);
    case Intrinsic::log:
      return std::log(a[0]);
    case Intrinsic::log2:
      return std::log2(a[0]);
    case Intrinsic::sqrt:
      return std::sqrt(a[0]);
    case Intrinsic::rsqrt:
      return 1 / std::sqrt(a[0]);
    case Intrinsic::tanh:
      return std::tanh(a[0]);
    case Intrinsic::sigmoid:
      return 1 / (1 + std::exp(-a[0]));
    case Intrinsic::erf:
      return std::erf(a[0]);
    case Intrinsic::pow:
      return std::pow(a[0], a[1]);
    case Intrinsic::fabs:
      return std::fabs(a[0]);
    case Intrinsic::floor:
      return std::floor(a[0]);
    case Intrinsic::ceil:
      return std::ceil(a[0]);
    case Intrinsic::round:
      return std::nearbyint(a[0]);
    case Intrinsic::trunc:
      return std::trunc(a[0]);
    case Intrinsic::sin:
      return std::sin(a[0]);
    case Intrinsic::cos:
      return std::cos(a[0]);
    case Intrinsic::fma:
      return a[0] * a[1] + a[2];
    case Intrinsic::isnan:
      return std::isnan(a[0]);
    case Intrinsic::likely:
      return a[0];
  }
  return 0;
}

}  // namespace

void Interpreter::run(const PrimFunc& f, const std::vector<std::vector<double>*>& data,
                      const std::vector<std::pair<Var, int64_t>>& scalars) {
  for (const auto& [v, value] : scalars) env[v.get()] = {static_cast<double>(value)};
  for (size_t i = 0; i < f->params.size(); ++i) memory_[f->buffers[i]->data.get()] = data[i];
  exec(f->body);
}

size_t Interpreter::position(const Buffer& b, const std::vector<PrimExpr>& idx, int lane) {
  double pos = 0;
  for (size_t k = 0; k < idx.size(); ++k) {
    Lanes i = eval(idx[k]);
    double ik = i.size() == 1 ? i[0] : i[lane];
    if (!b->strides.empty()) {
      pos += ik * eval(b->strides[k])[0];
    } else {
      pos = pos * (k ? eval(b->shape[k])[0] : 1) + ik;
    }
  }
  std::vector<double>* mem = memory_.at(b->data.get());
  EXPECT_TRUE(pos >= 0 && pos < static_cast<double>(mem->size()))
      << "out of bounds access " << pos << " of " << b->name;
  return static_cast<size_t>(pos);
}

Lanes Interpreter::eval(const PrimExpr& e) {
  DataType t = e.dtype();
  switch (e->kind()) {
    case NodeKind::IntImm:
      return {static_cast<double>(e.as<IntImmNode>()->value)};
    case NodeKind::FloatImm:
      return {round_to(t, e.as<FloatImmNode>()->value)};
    case NodeKind::Var:
      return env.at(e.as<VarNode>());
    case NodeKind::Cast: {
      Lanes v = eval(e.as<CastNode>()->value);
      for (auto& x : v) x = round_to(t, x);
      return v;
    }
#define TESSEL_INTERP_BINARY(N, expr)                                                  \
  case NodeKind::N: {                                                                  \
    const auto* op = e.as<N##Node>();                                                  \
    return zip(t, eval(op->a), eval(op->b), [&](double a, double b) { return expr; }); \
  }
      TESSEL_INTERP_BINARY(Add, a + b)
      TESSEL_INTERP_BINARY(Sub, a - b)
      TESSEL_INTERP_BINARY(Mul, a * b)
      TESSEL_INTERP_BINARY(Div, t.is_float() ? a / b : std::trunc(a / b))
      TESSEL_INTERP_BINARY(FloorDiv, std::floor(a / b))
      TESSEL_INTERP_BINARY(FloorMod, a - std::floor(a / b) * b)
      TESSEL_INTERP_BINARY(Min, std::min(a, b))
      TESSEL_INTERP_BINARY(Max, std::max(a, b))
      TESSEL_INTERP_BINARY(EQ, a == b)
      TESSEL_INTERP_BINARY(NE, a != b)
      TESSEL_INTERP_BINARY(LT, a < b)
      TESSEL_INTERP_BINARY(LE, a <= b)
      TESSEL_INTERP_BINARY(GT, a > b)
      TESSEL_INTERP_BINARY(GE, a >= b)
      TESSEL_INTERP_BINARY(And, a && b)
      TESSEL_INTERP_BINARY(Or, a || b)
#undef TESSEL_INTERP_BINARY
    case NodeKind::Not: {
      Lanes v = eval(e.as<NotNode>()->a);
      for (auto& x : v) x = !x;
      return v;
    }
    case NodeKind::Select: {
      const auto* op = e.as<SelectNode>();
      Lanes c = eval(op->condition), a = eval(op->true_value), b = eval(op->false_value);
      size_t n = t.lanes();
      c = broadcast_to(c, n), a = broadcast_to(a, n), b = broadcast_to(b, n);
      for (size_t i = 0; i < n; ++i) a[i] = c[i] ? a[i] : b[i];
      return a;
    }
    case NodeKind::IfThenElseExpr: {
      const auto* op = e.as<IfThenElseExprNode>();
      Lanes c = broadcast_to(eval(op->condition), t.lanes());
      Lanes a = eval_taken(op->true_value, c, true), b = eval_taken(op->false_value, c, false);
      for (int i = 0; i < t.lanes(); ++i) a[i] = c[i] ? a[i] : b[i];
      return a;
    }
    case NodeKind::Ramp: {
      const auto* op = e.as<RampNode>();
      double base = eval(op->base)[0], stride = eval(op->stride)[0];
      Lanes v(op->lanes);
      for (int i = 0; i < op->lanes; ++i) v[i] = base + i * stride;
      return v;
    }
    case NodeKind::Broadcast: {
      const auto* op = e.as<BroadcastNode>();
      return Lanes(op->lanes, eval(op->value)[0]);
    }
    case NodeKind::Let: {
      const auto* op = e.as<LetNode>();
      env[op->var.get()] = eval(op->value);
      return eval(op->body);
    }
    case NodeKind::Call: {
      const auto* op = e.as<CallNode>();
      std::vector<Lanes> args;
      for (const auto& a : op->args) args.push_back(broadcast_to(eval(a), t.lanes()));
      Lanes out(t.lanes());
      for (int i = 0; i < t.lanes(); ++i) {
        std::vector<double> lane;
        for (const auto& a : args) lane.push_back(a[i]);
        out[i] = round_to(t, call(op->op, lane));
      }
      return out;
    }
    case NodeKind::BufferLoad: {
      const auto* op = e.as<BufferLoadNode>();
      Lanes out(t.lanes());
      for (int i = 0; i < t.lanes(); ++i) {
        if (!lane_active(t.is_scalar() ? -1 : i)) continue;
        out[i] = (*memory_.at(op->buffer->data.get()))[position(op->buffer, op->indices, i)];
      }
      return out;
    }
    default:
      ADD_FAILURE() << "cannot interpret " << to_string(e);
      return {0};
  }
}

Lanes Interpreter::eval_taken(const PrimExpr& e, const Lanes& cond, bool taken) {
  std::vector<bool> inner(cond.size());
  for (size_t i = 0; i < cond.size(); ++i) {
    int lane = cond.size() == 1 ? -1 : static_cast<int>(i);
    inner[i] = lane_active(lane) && (cond[i] != 0) == taken;
  }
  std::swap(active_, inner);
  Lanes v = broadcast_to(eval(e), cond.size());
  std::swap(active_, inner);
  return v;
}

// Lane -1: a scalar, active when any lane is.
bool Interpreter::lane_active(int lane) const {
  if (active_.empty()) return true;
  if (lane < 0 || active_.size() == 1) {
    return std::find(active_.begin(), active_.end(), true) != active_.end();
  }
  return active_[static_cast<size_t>(lane)];
}

void Interpreter::exec(const Stmt& s) {
  switch (s->kind()) {
    case NodeKind::LetStmt: {
      const auto* op = s.as<LetStmtNode>();
      env[op->var.get()] = eval(op->value);
      return exec(op->body);
    }
    case NodeKind::AssertStmt: {
      const auto* op = s.as<AssertStmtNode>();
      EXPECT_TRUE(eval(op->condition)[0]) << op->message;
      return exec(op->body);
    }
    case NodeKind::Evaluate:
      eval(s.as<EvaluateNode>()->value);
      return;
    case NodeKind::SeqStmt:
      for (const auto& x : s.as<SeqStmtNode>()->seq) exec(x);
      return;
    case NodeKind::IfThenElse: {
      const auto* op = s.as<IfThenElseNode>();
      if (eval(op->condition)[0]) {
        exec(op->then_case);
      } else if (op->else_case.defined()) {
        exec(op->else_case);
      }
      return;
    }
    case NodeKind::For: {
      const auto* op = s.as<ForNode>();
      double mn = eval(op->min)[0], ext = eval(op->extent)[0];
      for (double i = mn; i < mn + ext; ++i) {
        env[op->loop_var.get()] = {i};
        exec(op->body);
      }
      return;
    }
    case NodeKind::BufferStore: {
      const auto* op = s.as<BufferStoreNode>();
      int lanes = op->indices.back().dtype().lanes();
      Lanes v = broadcast_to(eval(op->value), lanes);
      for (int i = 0; i < lanes; ++i) {
        (*memory_.at(op->buffer->data.get()))[position(op->buffer, op->indices, i)] = v[i];
      }
      return;
    }
    case NodeKind::Allocate: {
      const auto* op = s.as<AllocateNode>();
      double size = 1;
      for (const auto& d : op->buffer->shape) size *= eval(d)[0];
      allocations_.emplace_back(static_cast<size_t>(size), 0.0);
      memory_[op->buffer->data.get()] = &allocations_.back();
      return exec(op->body);
    }
    default:
      ADD_FAILURE() << "cannot interpret " << to_string(s);
  }
}

}  // namespace tessel::tir::testing
