#include <gtest/gtest.h>

#include "tests/ir/ops/nn_test_util.h"

namespace tessel::graph::nn_testing {
namespace {

using tessel::testing::expect_error;

using Ints = std::vector<int64_t>;
constexpr int64_t kU = kUnknownDim;
const TensorType kOmitted{DataType::void_type(), {}, {}};

TEST(SequenceInferTest, RecurrentOutputShapes) {
  auto lstm = infer("LSTM", {f32({7, 2, 5}), f32({2, 16, 5}), f32({2, 16, 4})},
                    {{"hidden_size", int64_t{4}}, {"direction", std::string("bidirectional")}}, 3);
  EXPECT_EQ(lstm[0].shape, (Ints{7, 2, 2, 4}));
  EXPECT_EQ(lstm[1].shape, (Ints{2, 2, 4}));
  EXPECT_EQ(lstm[2].shape, (Ints{2, 2, 4}));
  auto gru =
      infer("GRU", {f32({2, kU, 5}), f32({1, 9, 5}), f32({1, 9, 3})}, {{"layout", int64_t{1}}}, 2);
  EXPECT_EQ(gru[0].shape, (Ints{2, kU, 1, 3}));
  EXPECT_EQ(gru[1].shape, (Ints{2, 1, 3}));
  EXPECT_EQ(infer("RNN", {f32({3, 1, 2}), f32({1, 4, 2}), f32({1, 4, 4})}, {}, 1)[0].shape,
            (Ints{3, 1, 1, 4}));
  expect_infer_error("expected 4 gates", "LSTM", {f32({3, 1, 2}), f32({1, 9, 2}), f32({1, 9, 3})},
                     {{"hidden_size", int64_t{3}}});
  expect_infer_error("direction 'bidirectional' needs 2", "RNN",
                     {f32({3, 1, 2}), f32({1, 4, 2}), f32({1, 4, 4})},
                     {{"direction", std::string("bidirectional")}});
  expect_infer_error("unknown direction", "GRU", {f32({3, 1, 2}), f32({1, 12, 2}), f32({1, 12, 4})},
                     {{"direction", std::string("sideways")}});
}

TensorData floats(const std::vector<float>& v) {
  TensorData t(DataType::f32(), {static_cast<int64_t>(v.size())});
  for (size_t i = 0; i < v.size(); ++i) t.data<float>()[i] = v[i];
  return t;
}

TensorData ints(const Ints& v) {
  TensorData t(DataType::i64(), {static_cast<int64_t>(v.size())});
  for (size_t i = 0; i < v.size(); ++i) t.data<int64_t>()[i] = v[i];
  return t;
}

TEST(SequenceInferTest, ResizeFromConstantScalesOrSizes) {
  TensorType x = f32({1, 3, 5, 4});
  auto scaled =
      infer("Resize", {x, kOmitted, f32({4})}, {}, 1, {{}, {}, floats({1, 1, 2.5f, 0.6f})});
  EXPECT_EQ(scaled[0].shape, (Ints{1, 3, 12, 2}));
  auto sized = infer("Resize", {x, f32({0}), f32({0}), TensorType{DataType::i64(), {4}, {}}}, {}, 1,
                     {{}, {}, floats({}), ints({1, 3, 7, 9})});
  EXPECT_EQ(sized[0].shape, (Ints{1, 3, 7, 9}));
  auto sized_only = infer("Resize", {x, kOmitted, kOmitted, TensorType{DataType::i64(), {4}, {}}},
                          {}, 1, {{}, {}, {}, ints({2, 3, 1, 9})});
  EXPECT_EQ(sized_only[0].shape, (Ints{2, 3, 1, 9}));
  // The importer rewrites Upsample into Resize; a hand-built one is an error naming the node.
  expect_infer_error("rewritten into Resize", "Upsample", {x, f32({4})});
  expect_infer_error("scales) must be a constant", "Resize", {x, kOmitted, f32({4})});
  expect_error(
      [&] { infer("Resize", {x, kOmitted, f32({3})}, {}, 1, {{}, {}, floats({1, 2, 2})}); },
      {"scales has 3 entries"});
}

TEST(SequenceInferTest, EinsumShapes) {
  auto einsum = [](const std::string& eq, const std::vector<TensorType>& in) {
    return infer("Einsum", in, {{"equation", eq}})[0].shape;
  };
  EXPECT_EQ(einsum("ij,jk->ik", {f32({2, 3}), f32({3, 5})}), (Ints{2, 5}));
  EXPECT_EQ(einsum("ij,jk", {f32({2, 3}), f32({3, 5})}), (Ints{2, 5}));
  EXPECT_EQ(einsum("ba", {f32({2, 3})}), (Ints{3, 2}));  // implicit output sorts the labels
  EXPECT_EQ(einsum("ii", {f32({4, 4})}), (Ints{}));
  EXPECT_EQ(einsum("b i j, b j k -> b i k", {f32({kU, 2, 3}), f32({kU, 3, 4})}), (Ints{kU, 2, 4}));
  EXPECT_EQ(einsum("...ij,...jk->...ik", {f32({5, 1, 2, 3}), f32({4, 3, 6})}), (Ints{5, 4, 2, 6}));
  EXPECT_EQ(einsum("...ij", {f32({5, 2, 3})}), (Ints{5, 2, 3}));
  expect_infer_error("sizes 3 and 4", "Einsum", {f32({2, 3}), f32({4, 5})},
                     {{"equation", std::string("ij,jk->ik")}});
  expect_infer_error("names 1 operands", "Einsum", {f32({2, 3}), f32({3, 5})},
                     {{"equation", std::string("ij->ji")}});
  expect_infer_error("rank 2 but its einsum term has 3", "Einsum", {f32({2, 3})},
                     {{"equation", std::string("ijk")}});
  expect_infer_error("not in any input", "Einsum", {f32({2, 3})},
                     {{"equation", std::string("ij->k")}});
}

// An If whose branches return one value each, of the given types.
std::vector<TensorType> infer_if(const TensorType& then_t, const TensorType& else_t) {
  auto branch = [](const TensorType& t) {
    auto g = std::make_shared<Graph>();
    ValueId v = g->add_value("v", t);
    g->inputs.push_back(v);
    g->outputs.push_back(v);
    return g;
  };
  return infer("If", {TensorType{DataType::boolean(), {}, {}}},
               {{"then_branch", branch(then_t)}, {"else_branch", branch(else_t)}});
}

TEST(SequenceInferTest, IfMergesBranchTypes) {
  EXPECT_EQ(infer_if(f32({2, 3}), f32({2, 3}))[0].shape, (Ints{2, 3}));
  EXPECT_EQ(infer_if(f32({2, 3}), f32({2, 5}))[0].shape, (Ints{2, kU}));
  expect_error([] { infer_if(f32({2, 3}), f32({6})); }, {"node7", "else_branch"});
  expect_infer_error("then_branch and else_branch", "If",
                     {TensorType{DataType::boolean(), {}, {}}});
}

}  // namespace
}  // namespace tessel::graph::nn_testing
