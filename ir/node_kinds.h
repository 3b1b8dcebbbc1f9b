// The one list of ir node kinds. It generates the NodeKind enum, the functors' dispatch and the
// cases of the printer, structural equality and the tir passes. te numbers its own kinds after
// these (te/node_kinds.h), so no ir switch lists them.
#pragma once

// Binary expression kinds, by family, so that a switch over one family lists the others with one
// macro each.
#define TESSEL_ARITH_KINDS(X) \
  X(Add)                      \
  X(Sub)                      \
  X(Mul)                      \
  X(Div)                      \
  X(FloorDiv)                 \
  X(FloorMod)                 \
  X(Min)                      \
  X(Max)

#define TESSEL_COMPARE_KINDS(X) \
  X(EQ)                         \
  X(NE)                         \
  X(LT)                         \
  X(LE)                         \
  X(GT)                         \
  X(GE)

#define TESSEL_LOGIC_KINDS(X) \
  X(And)                      \
  X(Or)

#define TESSEL_BINARY_KINDS(X) TESSEL_ARITH_KINDS(X) TESSEL_COMPARE_KINDS(X) TESSEL_LOGIC_KINDS(X)

// The expression kinds that precede and follow the binary ones.
#define TESSEL_PRE_BINARY_KINDS(X) \
  X(IntImm)                        \
  X(FloatImm)                      \
  X(Var)                           \
  X(Cast)

#define TESSEL_POST_BINARY_KINDS(X) \
  X(Not)                            \
  X(Select)                         \
  X(IfThenElseExpr)                 \
  X(Ramp)                           \
  X(Broadcast)                      \
  X(Let)                            \
  X(Call)                           \
  X(BufferLoad)

// In this order expressions rank in the canonical form (expr_compare in tir/arith/linear_sum.cc):
// reordering the kinds reorders terms in generated code.
#define TESSEL_EXPR_KINDS(X) \
  TESSEL_PRE_BINARY_KINDS(X) TESSEL_BINARY_KINDS(X) TESSEL_POST_BINARY_KINDS(X)

#define TESSEL_STMT_KINDS(X) \
  X(LetStmt)                 \
  X(AssertStmt)              \
  X(Evaluate)                \
  X(SeqStmt)                 \
  X(IfThenElse)              \
  X(For)                     \
  X(BufferStore)             \
  X(Allocate)

#define TESSEL_OTHER_KINDS(X) \
  X(Buffer)                   \
  X(PrimFunc)

// Complements, for switches that must list every kind.
#define TESSEL_NON_EXPR_KINDS(X) TESSEL_STMT_KINDS(X) TESSEL_OTHER_KINDS(X)
#define TESSEL_NON_STMT_KINDS(X) TESSEL_EXPR_KINDS(X) TESSEL_OTHER_KINDS(X)
#define TESSEL_NON_BINARY_KINDS(X) \
  TESSEL_PRE_BINARY_KINDS(X) TESSEL_POST_BINARY_KINDS(X) TESSEL_NON_EXPR_KINDS(X)
