// Scalar expression nodes shared by te and tir, their handles, and the operators users write. te's
// own nodes (tensor reads, reductions, iteration axes) are in te/expr.h.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/dtype.h"
#include "ir/node.h"

namespace tessel {

class ExprNode : public Node {
 public:
  ExprNode(NodeKind kind, DataType t) : Node(kind), dtype(t) {}
  DataType dtype;
};

class PrimExpr : public Ref<ExprNode> {
 public:
  using Ref<ExprNode>::Ref;
  PrimExpr() = default;
  PrimExpr(const Ref<ExprNode>& r) : Ref<ExprNode>(r) {}  // NOLINT
  PrimExpr(int value);                                    // NOLINT: an int32 constant
  PrimExpr(int64_t value);                                // NOLINT: an int64 constant
  PrimExpr(float value);                                  // NOLINT: a float32 constant
  PrimExpr(double value);  // NOLINT: a float32 constant; cast for float64
  DataType dtype() const { return get()->dtype; }
};

// ---- constants and variables ----
class IntImmNode : public ExprNode {
 public:
  static constexpr NodeKind kKind = NodeKind::IntImm;
  IntImmNode(DataType t, int64_t v) : ExprNode(kKind, t), value(v) {}
  int64_t value;
  static PrimExpr make(DataType t, int64_t value);
};

class FloatImmNode : public ExprNode {
 public:
  static constexpr NodeKind kKind = NodeKind::FloatImm;
  FloatImmNode(DataType t, double v) : ExprNode(kKind, t), value(v) {}
  double value;
  static PrimExpr make(DataType t, double value);
};

class VarNode : public ExprNode {
 public:
  static constexpr NodeKind kKind = NodeKind::Var;
  VarNode(DataType t, std::string name) : ExprNode(kKind, t), name_hint(std::move(name)) {}
  std::string name_hint;  // only a printing hint: a Var is its pointer
};

class Var : public PrimExpr {
 public:
  Var() = default;
  explicit Var(std::string name, DataType t = DataType::i32());
  explicit Var(const Ref<VarNode>& r) : PrimExpr(r) {}
  const VarNode* get() const { return static_cast<const VarNode*>(PrimExpr::get()); }
  const VarNode* operator->() const { return get(); }
  // A fresh var with the same type and a derived name.
  Var copy_with_suffix(const std::string& suffix) const;
};

class CastNode : public ExprNode {
 public:
  static constexpr NodeKind kKind = NodeKind::Cast;
  CastNode(DataType t, PrimExpr v) : ExprNode(kKind, t), value(std::move(v)) {}
  PrimExpr value;
  static PrimExpr make(DataType t, PrimExpr value);
};

// Binary arithmetic (Add ... Max) and comparisons (EQ ... GE) share one layout.
template <NodeKind K>
class BinaryNode : public ExprNode {
 public:
  static constexpr NodeKind kKind = K;
  BinaryNode(DataType t, PrimExpr a_, PrimExpr b_)
      : ExprNode(K, t), a(std::move(a_)), b(std::move(b_)) {}
  PrimExpr a, b;
  // Both sides must have the same dtype; comparisons and logic yield bool.
  static PrimExpr make(PrimExpr a, PrimExpr b);
};
using AddNode = BinaryNode<NodeKind::Add>;
using SubNode = BinaryNode<NodeKind::Sub>;
using MulNode = BinaryNode<NodeKind::Mul>;
using DivNode = BinaryNode<NodeKind::Div>;  // float division; truncating for ints known >= 0
using FloorDivNode = BinaryNode<NodeKind::FloorDiv>;
using FloorModNode = BinaryNode<NodeKind::FloorMod>;
using MinNode = BinaryNode<NodeKind::Min>;
using MaxNode = BinaryNode<NodeKind::Max>;
using EQNode = BinaryNode<NodeKind::EQ>;
using NENode = BinaryNode<NodeKind::NE>;
using LTNode = BinaryNode<NodeKind::LT>;
using LENode = BinaryNode<NodeKind::LE>;
using GTNode = BinaryNode<NodeKind::GT>;
using GENode = BinaryNode<NodeKind::GE>;
using AndNode = BinaryNode<NodeKind::And>;
using OrNode = BinaryNode<NodeKind::Or>;

class NotNode : public ExprNode {
 public:
  static constexpr NodeKind kKind = NodeKind::Not;
  NotNode(DataType t, PrimExpr a_) : ExprNode(kKind, t), a(std::move(a_)) {}
  PrimExpr a;
  static PrimExpr make(PrimExpr a);
};

// Evaluates both values, then picks one per lane: for values, never to guard a load.
class SelectNode : public ExprNode {
 public:
  static constexpr NodeKind kKind = NodeKind::Select;
  SelectNode(DataType t, PrimExpr c, PrimExpr tv, PrimExpr fv)
      : ExprNode(kKind, t),
        condition(std::move(c)),
        true_value(std::move(tv)),
        false_value(std::move(fv)) {}
  PrimExpr condition, true_value, false_value;
  static PrimExpr make(PrimExpr cond, PrimExpr t, PrimExpr f);
};

// Evaluates only the value its condition picks (per lane for a vector condition): a load in
// the untaken value is never performed. Codegen branches on a scalar condition and masks the
// loads of each value with a vector one. No pass may turn it into a Select.
class IfThenElseExprNode : public ExprNode {
 public:
  static constexpr NodeKind kKind = NodeKind::IfThenElseExpr;
  IfThenElseExprNode(DataType t, PrimExpr c, PrimExpr tv, PrimExpr fv)
      : ExprNode(kKind, t),
        condition(std::move(c)),
        true_value(std::move(tv)),
        false_value(std::move(fv)) {}
  PrimExpr condition, true_value, false_value;
  // The condition is scalar or has the values' lanes.
  static PrimExpr make(PrimExpr cond, PrimExpr t, PrimExpr f);
};

// ---- vectors ----
class RampNode : public ExprNode {
 public:
  static constexpr NodeKind kKind = NodeKind::Ramp;
  RampNode(DataType t, PrimExpr b, PrimExpr s, int l)
      : ExprNode(kKind, t), base(std::move(b)), stride(std::move(s)), lanes(l) {}
  PrimExpr base, stride;
  int lanes;
  static PrimExpr make(PrimExpr base, PrimExpr stride, int lanes);
};

class BroadcastNode : public ExprNode {
 public:
  static constexpr NodeKind kKind = NodeKind::Broadcast;
  BroadcastNode(DataType t, PrimExpr v, int l)
      : ExprNode(kKind, t), value(std::move(v)), lanes(l) {}
  PrimExpr value;
  int lanes;
  static PrimExpr make(PrimExpr value, int lanes);
};

class LetNode : public ExprNode {
 public:
  static constexpr NodeKind kKind = NodeKind::Let;
  LetNode(DataType t, Var v, PrimExpr val, PrimExpr b)
      : ExprNode(kKind, t), var(std::move(v)), value(std::move(val)), body(std::move(b)) {}
  Var var;
  PrimExpr value, body;
  static PrimExpr make(Var var, PrimExpr value, PrimExpr body);
};

// ---- calls to intrinsics (an enum, not a string registry) ----
// Name and number of arguments.
#define TESSEL_INTRINSICS(X) \
  X(exp, 1)                  \
  X(exp2, 1)                 \
  X(log, 1)                  \
  X(log2, 1)                 \
  X(sqrt, 1)                 \
  X(rsqrt, 1)                \
  X(tanh, 1)                 \
  X(sigmoid, 1)              \
  X(erf, 1)                  \
  X(pow, 2)                  \
  X(fabs, 1)                 \
  X(floor, 1)                \
  X(ceil, 1)                 \
  X(round, 1)                \
  X(trunc, 1)                \
  X(sin, 1)                  \
  X(cos, 1)                  \
  X(fma, 3)                  \
  X(isnan, 1)                \
  X(likely, 1)

enum class Intrinsic : uint8_t {
#define TESSEL_INTRIN_ENUM(Name, Arity) Name,
  TESSEL_INTRINSICS(TESSEL_INTRIN_ENUM)
#undef TESSEL_INTRIN_ENUM
};
const char* intrinsic_name(Intrinsic op);
// Number of arguments the intrinsic takes.
int intrinsic_arity(Intrinsic op);

class CallNode : public ExprNode {
 public:
  static constexpr NodeKind kKind = NodeKind::Call;
  CallNode(DataType t, Intrinsic o, std::vector<PrimExpr> a)
      : ExprNode(kKind, t), op(o), args(std::move(a)) {}
  Intrinsic op;
  std::vector<PrimExpr> args;
  static PrimExpr make(DataType t, Intrinsic op, std::vector<PrimExpr> args);
};

// ---- buffers ----
enum class MemScope : uint8_t { kGlobal, kShared, kLocal };
const char* mem_scope_name(MemScope s);

class BufferNode : public Node {
 public:
  static constexpr NodeKind kKind = NodeKind::Buffer;
  BufferNode(Var d, DataType t, std::vector<PrimExpr> sh, std::vector<PrimExpr> st, std::string n,
             MemScope sc)
      : Node(kKind),
        data(std::move(d)),
        dtype(t),
        shape(std::move(sh)),
        strides(std::move(st)),
        name(std::move(n)),
        scope(sc) {}
  Var data;  // handle var holding the base pointer
  DataType dtype;
  std::vector<PrimExpr> shape;
  std::vector<PrimExpr> strides;  // empty: compact row-major
  std::string name;
  MemScope scope;
};

class Buffer : public Ref<BufferNode> {
 public:
  using Ref<BufferNode>::Ref;
  Buffer() = default;
  Buffer(const Ref<BufferNode>& r) : Ref<BufferNode>(r) {}  // NOLINT
  static Buffer make(std::string name, DataType dtype, std::vector<PrimExpr> shape,
                     MemScope scope = MemScope::kGlobal, std::vector<PrimExpr> strides = {});
  int ndim() const { return static_cast<int>(get()->shape.size()); }
};

class BufferLoadNode : public ExprNode {
 public:
  static constexpr NodeKind kKind = NodeKind::BufferLoad;
  BufferLoadNode(DataType t, Buffer b, std::vector<PrimExpr> idx)
      : ExprNode(kKind, t), buffer(std::move(b)), indices(std::move(idx)) {}
  Buffer buffer;
  std::vector<PrimExpr> indices;  // one per dim before flatten_buffers (none for 0-d), one after
  // Lanes follow the last index (a Ramp index loads a vector).
  static PrimExpr make(Buffer buffer, std::vector<PrimExpr> indices);
};

// A half-open interval [min, min + extent).
struct Range {
  PrimExpr min, extent;
  Range() = default;
  Range(PrimExpr mn, PrimExpr ext) : min(std::move(mn)), extent(std::move(ext)) {}
};

// ---- helpers ----
PrimExpr make_const(DataType t, double value);
PrimExpr make_zero(DataType t);
// The value of an integer constant (also under Broadcast), if it is one.
const int64_t* as_const_int(const PrimExpr& e);
bool is_const_int(const PrimExpr& e, int64_t value);
bool is_one(const PrimExpr& e);
bool is_zero(const PrimExpr& e);
// Largest and smallest value of a scalar type, as a constant.
PrimExpr max_value(DataType t);
PrimExpr min_value(DataType t);

// ---- operators users write; integer constants fold, everything else builds nodes ----
PrimExpr operator+(PrimExpr a, PrimExpr b);
PrimExpr operator-(PrimExpr a, PrimExpr b);
PrimExpr operator-(PrimExpr a);
PrimExpr operator*(PrimExpr a, PrimExpr b);
PrimExpr operator/(PrimExpr a, PrimExpr b);  // floats: division; ints: floordiv
PrimExpr operator%(PrimExpr a, PrimExpr b);  // ints: floormod
PrimExpr operator==(PrimExpr a, PrimExpr b);
PrimExpr operator!=(PrimExpr a, PrimExpr b);
PrimExpr operator<(PrimExpr a, PrimExpr b);
PrimExpr operator<=(PrimExpr a, PrimExpr b);
PrimExpr operator>(PrimExpr a, PrimExpr b);
PrimExpr operator>=(PrimExpr a, PrimExpr b);
PrimExpr operator&&(PrimExpr a, PrimExpr b);
PrimExpr operator||(PrimExpr a, PrimExpr b);
PrimExpr operator!(PrimExpr a);
PrimExpr floordiv(PrimExpr a, PrimExpr b);
PrimExpr floormod(PrimExpr a, PrimExpr b);
PrimExpr ceildiv(PrimExpr a, PrimExpr b);
PrimExpr min(PrimExpr a, PrimExpr b);
PrimExpr max(PrimExpr a, PrimExpr b);
// select evaluates both `t` and `f` (padding with it must clamp the load's indices);
// if_then_else evaluates only the one `cond` picks (the way to guard a load, e.g. padding).
PrimExpr select(PrimExpr cond, PrimExpr t, PrimExpr f);
PrimExpr if_then_else(PrimExpr cond, PrimExpr t, PrimExpr f);
PrimExpr cast(DataType t, PrimExpr value);
PrimExpr likely(PrimExpr cond);
// The condition under `likely`, or nullptr when `e` is not a likely call.
const PrimExpr* likely_condition(const PrimExpr& e);
#define TESSEL_DECLARE_UNARY_INTRIN(Name) PrimExpr Name(PrimExpr x);
TESSEL_DECLARE_UNARY_INTRIN(exp)
TESSEL_DECLARE_UNARY_INTRIN(exp2)
TESSEL_DECLARE_UNARY_INTRIN(log)
TESSEL_DECLARE_UNARY_INTRIN(log2)
TESSEL_DECLARE_UNARY_INTRIN(sqrt)
TESSEL_DECLARE_UNARY_INTRIN(rsqrt)
TESSEL_DECLARE_UNARY_INTRIN(tanh)
TESSEL_DECLARE_UNARY_INTRIN(sigmoid)
TESSEL_DECLARE_UNARY_INTRIN(erf)
TESSEL_DECLARE_UNARY_INTRIN(abs)
TESSEL_DECLARE_UNARY_INTRIN(floor)
TESSEL_DECLARE_UNARY_INTRIN(ceil)
TESSEL_DECLARE_UNARY_INTRIN(round)
TESSEL_DECLARE_UNARY_INTRIN(trunc)
TESSEL_DECLARE_UNARY_INTRIN(sin)
TESSEL_DECLARE_UNARY_INTRIN(cos)
TESSEL_DECLARE_UNARY_INTRIN(isnan)
#undef TESSEL_DECLARE_UNARY_INTRIN
PrimExpr pow(PrimExpr x, PrimExpr y);
PrimExpr fma(PrimExpr a, PrimExpr b, PrimExpr c);

}  // namespace tessel
