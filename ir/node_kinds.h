// The one list of node kinds. It generates the NodeKind enum, functor dispatch and printer cases.
#pragma once

#define TESSEL_EXPR_KINDS(X) \
  X(IntImm)                  \
  X(FloatImm)                \
  X(Var)                     \
  X(Cast)                    \
  X(Add)                     \
  X(Sub)                     \
  X(Mul)                     \
  X(Div)                     \
  X(FloorDiv)                \
  X(FloorMod)                \
  X(Min)                     \
  X(Max)                     \
  X(EQ)                      \
  X(NE)                      \
  X(LT)                      \
  X(LE)                      \
  X(GT)                      \
  X(GE)                      \
  X(And)                     \
  X(Or)                      \
  X(Not)                     \
  X(Select)                  \
  X(IfThenElseExpr)          \
  X(Ramp)                    \
  X(Broadcast)               \
  X(Let)                     \
  X(Call)                    \
  X(BufferLoad)              \
  X(ProducerLoad)            \
  X(Reduce)

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
  X(IterVar)                  \
  X(CommReducer)              \
  X(PrimFunc)                 \
  X(PlaceholderOp)            \
  X(ComputeOp)
