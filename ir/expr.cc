#include "ir/expr.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <optional>

#include "ir/error.h"

namespace tessel {

const char* node_kind_name(NodeKind kind) {
  switch (kind) {
#define TESSEL_KIND_NAME(N) \
  case NodeKind::N:         \
    return #N;
    TESSEL_EXPR_KINDS(TESSEL_KIND_NAME)
    TESSEL_STMT_KINDS(TESSEL_KIND_NAME)
    TESSEL_OTHER_KINDS(TESSEL_KIND_NAME)
#undef TESSEL_KIND_NAME
  }
  return "non-ir node";
}

void fail_non_ir_node(NodeKind kind, const char* where) {
  throw InternalError(
      fmt::format("Internal error: a te node (kind #{}) reached {}, which is ir "
                  "code: schedule_to_tir must lower every te node",
                  static_cast<int>(kind), where));
}

const char* intrinsic_name(Intrinsic op) {
  switch (op) {
#define TESSEL_INTRIN_NAME(N, Arity) \
  case Intrinsic::N:                 \
    return #N;
    TESSEL_INTRINSICS(TESSEL_INTRIN_NAME)
#undef TESSEL_INTRIN_NAME
  }
  return "?";
}

int intrinsic_arity(Intrinsic op) {
  switch (op) {
#define TESSEL_INTRIN_ARITY(N, Arity) \
  case Intrinsic::N:                  \
    return Arity;
    TESSEL_INTRINSICS(TESSEL_INTRIN_ARITY)
#undef TESSEL_INTRIN_ARITY
  }
  TESSEL_UNREACHABLE("unknown intrinsic");
}

const char* mem_scope_name(MemScope s) {
  switch (s) {
    case MemScope::kGlobal:
      return "global";
    case MemScope::kShared:
      return "shared";
    case MemScope::kLocal:
      return "local";
  }
  return "?";
}

PrimExpr::PrimExpr(int value) : PrimExpr(IntImmNode::make(DataType::i32(), value)) {}
PrimExpr::PrimExpr(int64_t value) : PrimExpr(IntImmNode::make(DataType::i64(), value)) {}
PrimExpr::PrimExpr(float value) : PrimExpr(FloatImmNode::make(DataType::f32(), value)) {}
PrimExpr::PrimExpr(double value) : PrimExpr(FloatImmNode::make(DataType::f32(), value)) {}

// ---------------- node factories ----------------
PrimExpr IntImmNode::make(DataType t, int64_t value) {
  TESSEL_ICHECK(t.is_integer() && t.is_scalar()) << "IntImm of type " << t.str();
  if (t.is_bool()) value = value != 0;
  return PrimExpr(new IntImmNode(t, value));
}

PrimExpr FloatImmNode::make(DataType t, double value) {
  TESSEL_ICHECK(t.is_float() && t.is_scalar()) << "FloatImm of type " << t.str();
  return PrimExpr(new FloatImmNode(t, value));
}

Var::Var(std::string name, DataType t) : PrimExpr(new VarNode(t, std::move(name))) {}

Var Var::copy_with_suffix(const std::string& suffix) const {
  return Var(get()->name_hint + suffix, dtype());
}

PrimExpr CastNode::make(DataType t, PrimExpr value) {
  TESSEL_ICHECK(t.lanes() == value.dtype().lanes()) << "cast changes lanes";
  return PrimExpr(new CastNode(t, std::move(value)));
}

namespace {
constexpr bool is_compare_or_logic(NodeKind k) {
  return k == NodeKind::EQ || k == NodeKind::NE || k == NodeKind::LT || k == NodeKind::LE ||
         k == NodeKind::GT || k == NodeKind::GE || k == NodeKind::And || k == NodeKind::Or;
}
}  // namespace

template <NodeKind K>
PrimExpr BinaryNode<K>::make(PrimExpr a, PrimExpr b) {
  TESSEL_ICHECK(a.defined() && b.defined()) << node_kind_name(K) << " of undefined operand";
  TESSEL_ICHECK(a.dtype() == b.dtype()) << node_kind_name(K) << " of mismatched types "
                                        << a.dtype().str() << " and " << b.dtype().str();
  if constexpr (K == NodeKind::And || K == NodeKind::Or) {
    TESSEL_ICHECK(a.dtype().is_bool()) << node_kind_name(K) << " needs bool operands";
  }
  DataType t = is_compare_or_logic(K) ? DataType::boolean(a.dtype().lanes()) : a.dtype();
  return PrimExpr(new BinaryNode<K>(t, std::move(a), std::move(b)));
}
#define TESSEL_INSTANTIATE_BINARY(N) template class BinaryNode<NodeKind::N>;
TESSEL_BINARY_KINDS(TESSEL_INSTANTIATE_BINARY)
#undef TESSEL_INSTANTIATE_BINARY

PrimExpr NotNode::make(PrimExpr a) {
  TESSEL_ICHECK(a.dtype().is_bool()) << "Not of " << a.dtype().str();
  DataType t = a.dtype();
  return PrimExpr(new NotNode(t, std::move(a)));
}

PrimExpr SelectNode::make(PrimExpr cond, PrimExpr t, PrimExpr f) {
  TESSEL_ICHECK(cond.dtype().is_bool()) << "select condition of " << cond.dtype().str();
  TESSEL_ICHECK(t.dtype() == f.dtype())
      << "select branches of " << t.dtype().str() << " and " << f.dtype().str();
  DataType dt = t.dtype();
  return PrimExpr(new SelectNode(dt, std::move(cond), std::move(t), std::move(f)));
}

PrimExpr IfThenElseExprNode::make(PrimExpr cond, PrimExpr t, PrimExpr f) {
  TESSEL_ICHECK(cond.dtype().is_bool()) << "if_then_else condition of " << cond.dtype().str();
  TESSEL_ICHECK(t.dtype() == f.dtype())
      << "if_then_else values of " << t.dtype().str() << " and " << f.dtype().str();
  TESSEL_ICHECK(cond.dtype().is_scalar() || cond.dtype().lanes() == t.dtype().lanes())
      << "if_then_else condition of " << cond.dtype().str() << " for " << t.dtype().str();
  DataType dt = t.dtype();
  return PrimExpr(new IfThenElseExprNode(dt, std::move(cond), std::move(t), std::move(f)));
}

PrimExpr RampNode::make(PrimExpr base, PrimExpr stride, int lanes) {
  TESSEL_ICHECK(base.dtype().is_scalar() && base.dtype() == stride.dtype() && lanes > 1)
      << "bad ramp";
  DataType t = base.dtype().with_lanes(lanes);
  return PrimExpr(new RampNode(t, std::move(base), std::move(stride), lanes));
}

PrimExpr BroadcastNode::make(PrimExpr value, int lanes) {
  TESSEL_ICHECK(value.dtype().is_scalar() && lanes > 1) << "bad broadcast";
  DataType t = value.dtype().with_lanes(lanes);
  return PrimExpr(new BroadcastNode(t, std::move(value), lanes));
}

PrimExpr LetNode::make(Var var, PrimExpr value, PrimExpr body) {
  TESSEL_ICHECK(var.dtype() == value.dtype()) << "let " << var->name_hint << ": type mismatch";
  DataType t = body.dtype();
  return PrimExpr(new LetNode(t, std::move(var), std::move(value), std::move(body)));
}

PrimExpr CallNode::make(DataType t, Intrinsic op, std::vector<PrimExpr> args) {
  TESSEL_ICHECK(static_cast<int>(args.size()) == intrinsic_arity(op))
      << intrinsic_name(op) << " takes " << intrinsic_arity(op) << " arguments";
  return PrimExpr(new CallNode(t, op, std::move(args)));
}

Buffer Buffer::make(std::string name, DataType dtype, std::vector<PrimExpr> shape, MemScope scope,
                    std::vector<PrimExpr> strides) {
  TESSEL_ICHECK(strides.empty() || strides.size() == shape.size()) << "strides of " << name;
  Var data(name, DataType::handle());
  return Buffer(new BufferNode(std::move(data), dtype, std::move(shape), std::move(strides),
                               std::move(name), scope));
}

PrimExpr BufferLoadNode::make(Buffer buffer, std::vector<PrimExpr> indices) {
  TESSEL_ICHECK(indices.size() == buffer->shape.size() || indices.size() == 1)
      << "load of " << buffer->name << " with " << indices.size() << " indices";
  DataType t = buffer->dtype.with_lanes(indices.empty() ? 1 : indices.back().dtype().lanes());
  return PrimExpr(new BufferLoadNode(t, std::move(buffer), std::move(indices)));
}

// ---------------- constants ----------------
PrimExpr make_const(DataType t, double value) {
  PrimExpr scalar = t.is_float() ? FloatImmNode::make(t.element_of(), value)
                                 : IntImmNode::make(t.element_of(), static_cast<int64_t>(value));
  return t.is_scalar() ? scalar : BroadcastNode::make(scalar, t.lanes());
}

PrimExpr make_zero(DataType t) { return make_const(t, 0); }

const int64_t* as_const_int(const PrimExpr& e) {
  if (!e.defined()) return nullptr;
  if (const auto* imm = e.as<IntImmNode>()) return &imm->value;
  if (const auto* b = e.as<BroadcastNode>()) return as_const_int(b->value);
  return nullptr;
}

bool is_const_int(const PrimExpr& e, int64_t value) {
  const int64_t* v = as_const_int(e);
  return v && *v == value;
}
bool is_one(const PrimExpr& e) { return is_const_int(e, 1); }
bool is_zero(const PrimExpr& e) { return is_const_int(e, 0); }

PrimExpr max_value(DataType t) {
  if (t.is_bool()) return make_const(t, 1);
  if (t.is_int()) {
    return IntImmNode::make(t, t.bits() == 64 ? std::numeric_limits<int64_t>::max()
                                              : (int64_t{1} << (t.bits() - 1)) - 1);
  }
  if (t.is_uint()) {
    return IntImmNode::make(
        t, t.bits() == 64 ? std::numeric_limits<int64_t>::max() : (int64_t{1} << t.bits()) - 1);
  }
  return FloatImmNode::make(t, t.bits() == 64 ? std::numeric_limits<double>::infinity()
                                              : std::numeric_limits<float>::infinity());
}

PrimExpr min_value(DataType t) {
  if (t.is_int()) {
    return IntImmNode::make(
        t, t.bits() == 64 ? std::numeric_limits<int64_t>::min() : -(int64_t{1} << (t.bits() - 1)));
  }
  if (t.is_integer()) return IntImmNode::make(t, 0);
  return FloatImmNode::make(t, -std::numeric_limits<double>::infinity());
}

// ---------------- operators ----------------
namespace {

bool is_imm(const PrimExpr& e) { return e.is<IntImmNode>() || e.is<FloatImmNode>(); }

PrimExpr convert_imm(const PrimExpr& imm, DataType t) {
  if (const auto* i = imm.as<IntImmNode>()) return make_const(t, static_cast<double>(i->value));
  const auto* f = imm.as<FloatImmNode>();
  return make_const(t, f->value);
}

// Brings both operands to one type: constants adopt the other side's type, narrower ints widen,
// ints meet floats as floats, and scalars broadcast to the other side's lanes.
void promote(PrimExpr& a, PrimExpr& b, const char* op) {
  if (!a.defined() || !b.defined()) throw Error(fmt::format("'{}' of an undefined expression", op));
  DataType ta = a.dtype(), tb = b.dtype();
  if (ta == tb) return;
  if (ta.lanes() != tb.lanes()) {
    if (ta.is_scalar()) {
      a = BroadcastNode::make(a, tb.lanes());
    } else if (tb.is_scalar()) {
      b = BroadcastNode::make(b, ta.lanes());
    } else {
      throw Error(
          fmt::format("'{}' of vectors with different lanes: {} and {}", op, ta.str(), tb.str()));
    }
    promote(a, b, op);
    return;
  }
  bool ia = is_imm(a), ib = is_imm(b);
  if (ia && !ib && !(ta.is_float() && tb.is_integer())) {
    a = convert_imm(a, tb);
  } else if (ib && !ia && !(tb.is_float() && ta.is_integer())) {
    b = convert_imm(b, ta);
  } else if (ta.is_float() != tb.is_float()) {
    if (ta.is_float())
      b = cast(ta, b);
    else
      a = cast(tb, a);
  } else if (ta.code() == tb.code() || (ta.is_integer() && tb.is_integer())) {
    if (ta.bits() >= tb.bits())
      b = cast(ta, b);
    else
      a = cast(tb, a);
  } else {
    throw Error(fmt::format("'{}' of incompatible types {} and {}", op, ta.str(), tb.str()));
  }
}

const int64_t* int_imm(const PrimExpr& e) {
  const auto* i = e.as<IntImmNode>();
  return i ? &i->value : nullptr;
}
const double* float_imm(const PrimExpr& e) {
  const auto* f = e.as<FloatImmNode>();
  return f ? &f->value : nullptr;
}

int64_t floordiv_i(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
int64_t floormod_i(int64_t a, int64_t b) { return a - floordiv_i(a, b) * b; }

void require_int(const PrimExpr& a, const char* op) {
  if (!a.dtype().is_int() && !a.dtype().is_uint()) {
    throw Error(fmt::format("'{}' needs integer operands, got {}", op, a.dtype().str()));
  }
}

void require_bool(const PrimExpr& a, const char* op) {
  if (!a.dtype().is_bool()) {
    throw Error(fmt::format("'{}' needs bool operands, got {}", op, a.dtype().str()));
  }
}

template <class IntFn, class FloatFn>
PrimExpr fold_or(PrimExpr a, PrimExpr b, IntFn ifn, FloatFn ffn) {
  if (const int64_t* x = int_imm(a)) {
    if (const int64_t* y = int_imm(b)) {
      if (auto r = ifn(*x, *y)) return make_const(a.dtype(), static_cast<double>(*r));
    }
  }
  if (const double* x = float_imm(a)) {
    if (const double* y = float_imm(b)) return make_const(a.dtype(), ffn(*x, *y));
  }
  return PrimExpr();
}

template <class T>
std::optional<int64_t> some(T v) {
  return static_cast<int64_t>(v);
}

}  // namespace

PrimExpr operator+(PrimExpr a, PrimExpr b) {
  promote(a, b, "+");
  if (auto r = fold_or(
          a, b, [](int64_t x, int64_t y) { return some(x + y); },
          [](double x, double y) { return x + y; }))
    return r;
  if (is_zero(b) && a.dtype().is_integer()) return a;
  if (is_zero(a) && a.dtype().is_integer()) return b;
  return AddNode::make(a, b);
}

PrimExpr operator-(PrimExpr a, PrimExpr b) {
  promote(a, b, "-");
  if (auto r = fold_or(
          a, b, [](int64_t x, int64_t y) { return some(x - y); },
          [](double x, double y) { return x - y; }))
    return r;
  if (is_zero(b) && a.dtype().is_integer()) return a;
  return SubNode::make(a, b);
}

PrimExpr operator-(PrimExpr a) {
  if (const int64_t* x = int_imm(a)) return make_const(a.dtype(), static_cast<double>(-*x));
  if (const double* x = float_imm(a)) return make_const(a.dtype(), -*x);
  return make_zero(a.dtype()) - a;
}

PrimExpr operator*(PrimExpr a, PrimExpr b) {
  promote(a, b, "*");
  if (auto r = fold_or(
          a, b, [](int64_t x, int64_t y) { return some(x * y); },
          [](double x, double y) { return x * y; }))
    return r;
  if (a.dtype().is_integer()) {
    if (is_one(b)) return a;
    if (is_one(a)) return b;
    if (is_zero(a) || is_zero(b)) return make_zero(a.dtype());
  }
  return MulNode::make(a, b);
}

PrimExpr operator/(PrimExpr a, PrimExpr b) {
  promote(a, b, "/");
  if (a.dtype().is_integer()) return floordiv(a, b);
  if (auto r = fold_or(
          a, b, [](int64_t, int64_t) { return std::optional<int64_t>(); },
          [](double x, double y) { return x / y; }))
    return r;
  return DivNode::make(a, b);
}

PrimExpr operator%(PrimExpr a, PrimExpr b) { return floormod(std::move(a), std::move(b)); }

PrimExpr floordiv(PrimExpr a, PrimExpr b) {
  promote(a, b, "floordiv");
  require_int(a, "floordiv");
  if (is_zero(b)) throw Error("integer division by constant zero");
  if (auto r = fold_or(
          a, b, [](int64_t x, int64_t y) { return some(floordiv_i(x, y)); },
          [](double x, double y) { return std::floor(x / y); }))
    return r;
  if (is_one(b)) return a;
  return FloorDivNode::make(a, b);
}

PrimExpr floormod(PrimExpr a, PrimExpr b) {
  promote(a, b, "floormod");
  require_int(a, "floormod");
  if (is_zero(b)) throw Error("integer modulo by constant zero");
  if (auto r = fold_or(
          a, b, [](int64_t x, int64_t y) { return some(floormod_i(x, y)); },
          [](double x, double y) { return x - std::floor(x / y) * y; }))
    return r;
  if (is_one(b)) return make_zero(a.dtype());
  return FloorModNode::make(a, b);
}

PrimExpr ceildiv(PrimExpr a, PrimExpr b) {
  promote(a, b, "ceildiv");
  return floordiv(a + b - 1, b);
}

PrimExpr min(PrimExpr a, PrimExpr b) {
  promote(a, b, "min");
  if (auto r = fold_or(
          a, b, [](int64_t x, int64_t y) { return some(std::min(x, y)); },
          [](double x, double y) { return std::fmin(x, y); }))
    return r;
  return MinNode::make(a, b);
}

PrimExpr max(PrimExpr a, PrimExpr b) {
  promote(a, b, "max");
  if (auto r = fold_or(
          a, b, [](int64_t x, int64_t y) { return some(std::max(x, y)); },
          [](double x, double y) { return std::fmax(x, y); }))
    return r;
  return MaxNode::make(a, b);
}

#define TESSEL_DEFINE_COMPARE(Op, Node, Fn)                                                  \
  PrimExpr operator Op(PrimExpr a, PrimExpr b) {                                             \
    promote(a, b, #Op);                                                                      \
    if (const int64_t* x = int_imm(a))                                                       \
      if (const int64_t* y = int_imm(b)) return make_const(DataType::boolean(), *x Op * y);  \
    if (const double* x = float_imm(a))                                                      \
      if (const double* y = float_imm(b)) return make_const(DataType::boolean(), *x Op * y); \
    return Node::make(a, b);                                                                 \
  }
TESSEL_DEFINE_COMPARE(==, EQNode, eq)
TESSEL_DEFINE_COMPARE(!=, NENode, ne)
TESSEL_DEFINE_COMPARE(<, LTNode, lt)
TESSEL_DEFINE_COMPARE(<=, LENode, le)
TESSEL_DEFINE_COMPARE(>, GTNode, gt)
TESSEL_DEFINE_COMPARE(>=, GENode, ge)
#undef TESSEL_DEFINE_COMPARE

PrimExpr operator&&(PrimExpr a, PrimExpr b) {
  promote(a, b, "&&");
  require_bool(a, "&&");
  if (const int64_t* x = int_imm(a)) return *x ? b : a;
  if (const int64_t* y = int_imm(b)) return *y ? a : b;
  return AndNode::make(a, b);
}

PrimExpr operator||(PrimExpr a, PrimExpr b) {
  promote(a, b, "||");
  require_bool(a, "||");
  if (const int64_t* x = int_imm(a)) return *x ? a : b;
  if (const int64_t* y = int_imm(b)) return *y ? b : a;
  return OrNode::make(a, b);
}

PrimExpr operator!(PrimExpr a) {
  require_bool(a, "!");
  if (const int64_t* x = int_imm(a)) return make_const(a.dtype(), !*x);
  return NotNode::make(a);
}

PrimExpr select(PrimExpr cond, PrimExpr t, PrimExpr f) {
  require_bool(cond, "select");
  promote(t, f, "select");
  if (cond.dtype().is_scalar() && t.dtype().is_vector()) {
    cond = BroadcastNode::make(cond, t.dtype().lanes());
  }
  return SelectNode::make(cond, t, f);
}

PrimExpr if_then_else(PrimExpr cond, PrimExpr t, PrimExpr f) {
  require_bool(cond, "if_then_else");
  promote(t, f, "if_then_else");
  // A decided condition leaves nothing to guard.
  if (const int64_t* c = int_imm(cond)) return *c ? t : f;
  // A scalar condition stays scalar (a branch); values follow a vector condition's lanes.
  if (t.dtype().is_scalar() && cond.dtype().is_vector()) {
    t = BroadcastNode::make(t, cond.dtype().lanes());
    f = BroadcastNode::make(f, cond.dtype().lanes());
  }
  return IfThenElseExprNode::make(cond, t, f);
}

PrimExpr cast(DataType t, PrimExpr value) {
  if (value.dtype() == t) return value;
  if (value.dtype().is_vector() && t.is_scalar()) t = t.with_lanes(value.dtype().lanes());
  if (value.dtype() == t) return value;
  if (is_imm(value)) {
    double v = int_imm(value) ? static_cast<double>(*int_imm(value)) : *float_imm(value);
    if (t.is_integer() && !t.is_bool() && float_imm(value)) v = std::trunc(v);
    return make_const(t, v);
  }
  return CastNode::make(t, value);
}

PrimExpr likely(PrimExpr cond) {
  require_bool(cond, "likely");
  if (is_imm(cond)) return cond;
  return CallNode::make(cond.dtype(), Intrinsic::likely, {cond});
}

const PrimExpr* likely_condition(const PrimExpr& e) {
  const auto* call = e.as<CallNode>();
  return call && call->op == Intrinsic::likely ? &call->args[0] : nullptr;
}

namespace {
PrimExpr float_call(Intrinsic op, std::vector<PrimExpr> args) {
  for (const auto& a : args) {
    if (!a.dtype().is_float()) {
      throw Error(fmt::format("{} needs a floating-point argument, got {}", intrinsic_name(op),
                              a.dtype().str()));
    }
  }
  DataType t = args[0].dtype();
  return CallNode::make(t, op, std::move(args));
}
}  // namespace

#define TESSEL_DEFINE_UNARY_INTRIN(Name, Op) \
  PrimExpr Name(PrimExpr x) { return float_call(Intrinsic::Op, {std::move(x)}); }
TESSEL_DEFINE_UNARY_INTRIN(exp, exp)
TESSEL_DEFINE_UNARY_INTRIN(exp2, exp2)
TESSEL_DEFINE_UNARY_INTRIN(log, log)
TESSEL_DEFINE_UNARY_INTRIN(log2, log2)
TESSEL_DEFINE_UNARY_INTRIN(sqrt, sqrt)
TESSEL_DEFINE_UNARY_INTRIN(rsqrt, rsqrt)
TESSEL_DEFINE_UNARY_INTRIN(tanh, tanh)
TESSEL_DEFINE_UNARY_INTRIN(sigmoid, sigmoid)
TESSEL_DEFINE_UNARY_INTRIN(erf, erf)
TESSEL_DEFINE_UNARY_INTRIN(floor, floor)
TESSEL_DEFINE_UNARY_INTRIN(ceil, ceil)
TESSEL_DEFINE_UNARY_INTRIN(round, round)
TESSEL_DEFINE_UNARY_INTRIN(trunc, trunc)
TESSEL_DEFINE_UNARY_INTRIN(sin, sin)
TESSEL_DEFINE_UNARY_INTRIN(cos, cos)
#undef TESSEL_DEFINE_UNARY_INTRIN

PrimExpr abs(PrimExpr x) {
  if (x.dtype().is_float()) return float_call(Intrinsic::fabs, {std::move(x)});
  if (x.dtype().is_uint() || x.dtype().is_bool()) return x;
  return select(x < 0, -x, x);
}

PrimExpr isnan(PrimExpr x) {
  DataType t = DataType::boolean(x.dtype().lanes());
  if (!x.dtype().is_float()) return make_const(t, 0);
  return CallNode::make(t, Intrinsic::isnan, {std::move(x)});
}

PrimExpr pow(PrimExpr x, PrimExpr y) {
  promote(x, y, "pow");
  return float_call(Intrinsic::pow, {std::move(x), std::move(y)});
}

PrimExpr fma(PrimExpr a, PrimExpr b, PrimExpr c) {
  promote(a, b, "fma");
  promote(a, c, "fma");
  promote(b, c, "fma");
  return float_call(Intrinsic::fma, {std::move(a), std::move(b), std::move(c)});
}

}  // namespace tessel
