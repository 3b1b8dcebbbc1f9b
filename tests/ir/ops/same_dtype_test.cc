// Inputs that lowering combines in one expression must share an element type (issue 22: a float16
// MatMul over a float32 initializer passed type inference and failed in lowering, an internal
// error).
#include <gtest/gtest.h>

#include "tests/ir/ops/nn_test_util.h"

namespace tessel::graph::nn_testing {
namespace {

using tessel::testing::expect_error;

TensorType typed(DataType dtype, std::vector<int64_t> shape) {
  return TensorType{dtype, std::move(shape), {}};
}

const DataType kF16 = DataType::f16(), kF64 = DataType::f64(), kI32 = DataType::i32(),
               kI64 = DataType::i64();
const TensorType kOmitted{DataType::void_type(), {}, {}};  // an omitted input

TEST(SameDtypeTest, MismatchesNameTheNodeBothInputsAndBothTypes) {
  expect_infer_error(
      "input 1 ('x1') is float32 but input 0 ('x0') is float16; they must have the same element "
      "type",
      "MatMul", {typed(kF16, {2, 4}), f32({4, 3})});
  expect_infer_error("input 2 ('x2') is float64 but input 0 ('x0') is float32", "Gemm",
                     {f32({2, 3}), f32({3, 4}), typed(kF64, {4})});
  expect_infer_error("input 2 ('x2') is float16", "Conv",
                     {f32({1, 1, 5, 5}), f32({1, 1, 3, 3}), typed(kF16, {1})});
  expect_infer_error("input 1 ('x1') is float64", "ConvTranspose",
                     {f32({1, 1, 5, 5}), typed(kF64, {1, 1, 3, 3})});
  expect_infer_error("input 3 ('x3') is float64", "BatchNormalization",
                     {f32({1, 2, 4, 4}), f32({2}), f32({2}), typed(kF64, {2}), f32({2})});
  expect_infer_error("input 1 ('x1') is float16", "InstanceNormalization",
                     {f32({1, 2, 4, 4}), typed(kF16, {2}), f32({2})});
  expect_infer_error("input 2 ('x2') is float16", "LayerNormalization",
                     {f32({2, 3}), f32({3}), typed(kF16, {3})});
  expect_infer_error("input 2 ('x2') is float64", "LSTM",
                     {f32({5, 1, 3}), f32({1, 16, 3}), typed(kF64, {1, 16, 4})},
                     {{"hidden_size", int64_t{4}}});
  expect_infer_error("input 1 ('x1') is float64", "Einsum", {f32({2, 3}), typed(kF64, {3, 4})},
                     {{"equation", std::string("ij,jk->ik")}});
  expect_infer_error("input 2 ('x2') is float16", "ScatterElements",
                     {f32({4}), typed(kI64, {2}), typed(kF16, {2})});
  expect_infer_error("input 1 ('x1') is float64 but input 0 ('x0') is float32", "Add",
                     {f32({3}), typed(kF64, {3})});
  expect_infer_error("input 2 ('x2') is float64 but input 1 ('x1') is float32", "Where",
                     {typed(DataType::boolean(), {3}), f32({3}), typed(kF64, {3})});
}

TEST(SameDtypeTest, ConstantParametersToo) {
  TensorData pads(kI64, {2});
  TensorData value(kF64, {});
  // Pad with a float64 constant_value for float32 data.
  expect_error(
      [&] {
        infer("Pad", {f32({3}), typed(kI64, {2}), typed(kF64, {})}, {}, 1,
              {TensorData(), pads, value});
      },
      {"input 2 ('c2') is float64"});
  // Range with an int32 limit and int64 start.
  TensorData start(kI64, {}), limit(kI32, {}), delta(kI64, {});
  expect_error(
      [&] {
        infer("Range", {typed(kI64, {}), typed(kI32, {}), typed(kI64, {})}, {}, 1,
              {start, limit, delta});
      },
      {"input 1 ('c1') is int32 but input 0 ('c0') is int64"});
}

TEST(SameDtypeTest, InputsOfTheirOwnTypeStayFree) {
  // LSTM's sequence_lens is int32 whatever the data type; Pow's exponent may differ from its base.
  EXPECT_NO_THROW(
      infer("LSTM", {f32({5, 1, 3}), f32({1, 16, 3}), f32({1, 16, 4}), kOmitted, typed(kI32, {1})},
            {{"hidden_size", int64_t{4}}}, 3));
  EXPECT_EQ(infer("Pow", {f32({3}), typed(kI64, {3})})[0].dtype, DataType::f32());
}

}  // namespace
}  // namespace tessel::graph::nn_testing
