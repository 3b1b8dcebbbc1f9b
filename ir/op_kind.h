// Every operator of the graph IR, once: the ONNX operators (ai.onnx names) and Tessel's internal
// ops, in the order of the op table (ir/op_table.h). A node names its op by this kind, an index
// into that table; the importer is the one place that maps an op-name string to a kind. Tables
// that other layers keep per op (topi's te computes, the reference implementations) are indexed by
// it too, and a test checks that they cover every kind.
#pragma once

#include <cstdint>
#include <string_view>

// X(name): one entry per op, grouped as the ir/ops/ files define them.
// clang-format off
#define TESSEL_OP_KINDS(X)                                                                         \
  /* ir/ops/elementwise.cc */                                                                      \
  X(Sqrt) X(Reciprocal) X(Exp) X(Log) X(Erf) X(Tanh) X(Sigmoid) X(LeakyRelu) X(Elu) X(Selu)        \
  X(HardSigmoid) X(HardSwish) X(Softplus) X(Softsign) X(Floor) X(Ceil) X(Round) X(Sin) X(Cos)      \
  X(Tan) X(Asin) X(Acos) X(Atan) X(Sinh) X(Cosh) X(Asinh) X(Acosh) X(Atanh) X(Celu)                \
  X(ThresholdedRelu) X(Relu) X(Neg) X(Abs) X(Sign) X(Shrink) X(Identity) X(Clip) X(Not)            \
  X(IsNaN) X(IsInf) X(Cast) X(CastLike) X(Dropout) X(Add) X(Sub) X(Mul) X(Div) X(Mod) X(Min)       \
  X(Max) X(Sum) X(Mean) X(BitShift) X(Pow) X(PRelu) X(Equal) X(Less) X(Greater) X(LessOrEqual)     \
  X(GreaterOrEqual) X(And) X(Or) X(Xor) X(Where)                                                   \
  /* ir/ops/reduce.cc */                                                                           \
  X(ReduceSum) X(ReduceMean) X(ReduceMax) X(ReduceMin) X(ReduceProd) X(ReduceL1) X(ReduceL2)       \
  X(ReduceLogSum) X(ReduceLogSumExp) X(ReduceSumSquare) X(ArgMax) X(ArgMin) X(CumSum) X(TopK)      \
  /* ir/ops/tensor.cc */                                                                           \
  X(Reshape) X(Flatten) X(Transpose) X(Concat) X(Split) X(Slice) X(Gather) X(GatherElements)       \
  X(GatherND) X(ScatterElements) X(Scatter) X(ScatterND) X(Squeeze) X(Unsqueeze) X(Expand)         \
  X(Tile) X(Pad) X(Shape) X(Size) X(ConstantOfShape) X(Range) X(Constant) X(DepthToSpace)          \
  X(SpaceToDepth) X(OneHot) X(NonZero) X(Trilu) X(Compress) X(ReverseSequence) X(EyeLike)          \
  /* ir/ops/nn.cc (ConvNCHWc, ConvWinograd and MatMulPacked are internal: */                       \
  /* passes/pack_conv_weights, passes/winograd_conv and passes/pack_dense_weights make them) */     \
  X(Conv) X(ConvTranspose) X(ConvNCHWc) X(ConvWinograd) X(Gemm) X(MatMul) X(MatMulPacked)          \
  X(MaxPool) X(AveragePool) X(LpPool)                                                              \
  X(GlobalAveragePool) X(GlobalMaxPool) X(GlobalLpPool) X(BatchNormalization)                      \
  X(InstanceNormalization) X(LayerNormalization) X(LRN) X(Softmax) X(LogSoftmax) X(Hardmax)        \
  /* ir/ops/sequence.cc */                                                                         \
  X(LSTM) X(GRU) X(RNN) X(Resize) X(Upsample) X(Einsum) X(If)                                      \
  /* ir/ops/loss.cc */                                                                             \
  X(NegativeLogLikelihoodLoss) X(SoftmaxCrossEntropyLoss)
// clang-format on

namespace tessel::graph {

enum class OpKind : uint16_t {
#define TESSEL_OP_KIND_ENUM(name) name,
  TESSEL_OP_KINDS(TESSEL_OP_KIND_ENUM)
#undef TESSEL_OP_KIND_ENUM
};

inline constexpr int kNumOpKinds = 0
#define TESSEL_OP_KIND_COUNT(name) +1
    TESSEL_OP_KINDS(TESSEL_OP_KIND_COUNT)
#undef TESSEL_OP_KIND_COUNT
    ;

// The ONNX op_type ("Conv"), or the internal op's name ("ConvNCHWc").
std::string_view op_kind_name(OpKind kind);

}  // namespace tessel::graph
