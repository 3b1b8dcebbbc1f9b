// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss lowered through topi/compute_loss.cc,
// compiled and checked against the reference executor: every reduction, with and without class
// weights, ignore_index (negative, inside the class range, never hit), N-d scores, SCE's log_prob
// output, float and double scores, int64 and int32 targets.
#include <cmath>

#include "lowering_test_util.h"

namespace tessel::topi {
namespace {

using namespace testing;  // NOLINT

// Targets in [0, classes), with every `every`-th element set to `ignore` (every = 0: none).
TensorData targets(DataType dtype, std::vector<int64_t> shape, int64_t classes, uint32_t seed,
                   int64_t every = 0, int64_t ignore = 0) {
  TensorData t = random_data(DataType::i64(), shape, seed, 0, static_cast<double>(classes - 1));
  std::vector<int64_t> values;
  for (int64_t i = 0; i < t.numel(); ++i)
    values.push_back(every && i % every == 0 ? ignore : t.get_int(i));
  return make_tensor(dtype, std::move(shape), values);
}

Attrs reduction(const std::string& r) { return {{"reduction", str_attr(r)}}; }
Attrs reduction(const std::string& r, int64_t ignore_index) {
  return {{"reduction", str_attr(r)}, {"ignore_index", int_attr(ignore_index)}};
}

// Every reduction of `op`, without and with weights, on the given scores and targets.
void add_reductions(OpGraph& m, const std::string& op, ValueId x, ValueId t, ValueId w,
                    const std::string& prefix, int num_outputs = 1) {
  for (const char* r : {"none", "sum", "mean"}) {
    m.op(prefix + r, op, {x, t}, reduction(r), num_outputs);
    m.op(prefix + r + "_weight", op, {x, t, w}, reduction(r), num_outputs);
  }
}

TEST(ComputeLossTest, NllReductionsAndWeights) {
  OpGraph m;
  auto x = m.input("x", random_data(DataType::f32(), {6, 5}, 1));
  auto t = m.input("t", targets(DataType::i64(), {6}, 5, 2));
  auto w = m.input("w", random_data(DataType::f32(), {5}, 3, 0.1, 2));
  add_reductions(m, "NegativeLogLikelihoodLoss", x, t, w, "nll_");
  m.op("default_is_mean", "NegativeLogLikelihoodLoss",
       {x, t, m.constant("wc", random_data(DataType::f32(), {5}, 4, 0, 1))});
  m.check();
}

TEST(ComputeLossTest, NllIgnoreIndexOnNdScores) {
  OpGraph m;
  auto x = m.input("x", random_data(DataType::f32(), {2, 4, 3, 2}, 5));
  auto w = m.input("w", random_data(DataType::f32(), {4}, 6, 0.1, 2));
  // A negative ignore_index that the targets hold (it is no class), one inside the class range,
  // and one that never occurs.
  auto t_neg = m.input("t_neg", targets(DataType::i64(), {2, 3, 2}, 4, 7, 3, -1));
  auto t_two = m.input("t_two", targets(DataType::i64(), {2, 3, 2}, 4, 8, 4, 2));
  for (const char* r : {"none", "sum", "mean"}) {
    std::string s = r;
    m.op("neg_" + s, "NegativeLogLikelihoodLoss", {x, t_neg}, reduction(r, -1));
    m.op("neg_w_" + s, "NegativeLogLikelihoodLoss", {x, t_neg, w}, reduction(r, -1));
    m.op("two_" + s, "NegativeLogLikelihoodLoss", {x, t_two}, reduction(r, 2));
    m.op("two_w_" + s, "NegativeLogLikelihoodLoss", {x, t_two, w}, reduction(r, 2));
    m.op("high_w_" + s, "NegativeLogLikelihoodLoss", {x, t_two, w}, reduction(r, 10));
  }
  m.check();
}

TEST(ComputeLossTest, NllDoubleScoresInt32TargetsFiveSpatialDims) {
  OpGraph m;
  auto x = m.input("x", random_data(DataType::f64(), {2, 3, 2, 1, 3, 2, 2}, 9));
  auto t = m.input("t", targets(DataType::i32(), {2, 2, 1, 3, 2, 2}, 3, 10));
  auto t_ii = m.input("t_ii", targets(DataType::i32(), {2, 2, 1, 3, 2, 2}, 3, 10, 5, -5));
  auto w = m.input("w", random_data(DataType::f64(), {3}, 11, 0.1, 2));
  add_reductions(m, "NegativeLogLikelihoodLoss", x, t, w, "plain_");
  m.op("ii_mean_weight", "NegativeLogLikelihoodLoss", {x, t_ii, w}, reduction("mean", -5));
  m.op("ii_none", "NegativeLogLikelihoodLoss", {x, t_ii}, reduction("none", -5));
  m.check();
}

TEST(ComputeLossTest, NllMeanWithEveryTargetIgnoredIsNan) {
  OpGraph m;
  auto x = m.input("x", random_data(DataType::f32(), {3, 4}, 12));
  auto t = m.input("t", targets(DataType::i64(), {3}, 4, 13, 1, -100));
  auto w = m.input("w", random_data(DataType::f32(), {4}, 14, 0.1, 2));
  m.op("mean", "NegativeLogLikelihoodLoss", {x, t, w}, reduction("mean", -100));
  m.op("sum", "NegativeLogLikelihoodLoss", {x, t, w}, reduction("sum", -100));
  m.check();
  TensorData nan = reference::run(m.b.g, m.feeds)[0];
  EXPECT_TRUE(std::isnan(nan.get_double(0)));  // the compiled value was compared NaN-for-NaN above
}

TEST(ComputeLossTest, SceReductionsWeightsAndLogProb) {
  OpGraph m;
  auto x = m.input("x", random_data(DataType::f32(), {4, 5}, 15, -3, 3));
  auto t = m.input("t", targets(DataType::i64(), {4}, 5, 16));
  auto w = m.input("w", random_data(DataType::f32(), {5}, 17, 0.1, 2));
  add_reductions(m, "SoftmaxCrossEntropyLoss", x, t, w, "sce_");
  add_reductions(m, "SoftmaxCrossEntropyLoss", x, t, w, "sce_log_prob_", 2);
  m.check();
}

TEST(ComputeLossTest, SceIgnoreIndexOnNdScores) {
  OpGraph m;
  auto x = m.input("x", random_data(DataType::f32(), {3, 4, 2, 3}, 18, -3, 3));
  auto t_neg = m.input("t_neg", targets(DataType::i64(), {3, 2, 3}, 4, 19, 4, -1));
  auto t_three = m.input("t_three", targets(DataType::i64(), {3, 2, 3}, 4, 20, 3, 3));
  auto w = m.input("w", random_data(DataType::f32(), {4}, 21, 0.1, 2));
  for (const char* r : {"none", "sum", "mean"}) {
    std::string s = r;
    m.op("neg_" + s, "SoftmaxCrossEntropyLoss", {x, t_neg}, reduction(r, -1));
    m.op("neg_w_" + s, "SoftmaxCrossEntropyLoss", {x, t_neg, w}, reduction(r, -1), 2);
    m.op("class_w_" + s, "SoftmaxCrossEntropyLoss", {x, t_three, w}, reduction(r, 3), 2);
  }
  m.check();
}

TEST(ComputeLossTest, SceDoubleScoresFiveSpatialDims) {
  OpGraph m;
  auto x = m.input("x", random_data(DataType::f64(), {2, 3, 2, 2, 1, 3, 2}, 22, -3, 3));
  auto t = m.input("t", targets(DataType::i32(), {2, 2, 2, 1, 3, 2}, 3, 23, 7, 1));
  auto w = m.input("w", random_data(DataType::f64(), {3}, 24, 0.1, 2));
  add_reductions(m, "SoftmaxCrossEntropyLoss", x, t, w, "plain_", 2);
  m.op("ii_mean_weight", "SoftmaxCrossEntropyLoss", {x, t, w}, reduction("mean", 1), 2);
  m.check();
}

}  // namespace
}  // namespace tessel::topi
