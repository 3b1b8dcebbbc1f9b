#include <gtest/gtest.h>

#include <cmath>

#include "tests/reference/nn_test_util.h"

namespace tessel::reference::nn_testing {
namespace {

using Ints = std::vector<int64_t>;

double sigmoid(double x) { return 1 / (1 + std::exp(-x)); }

// Row r of a [rows, cols] matrix times v.
double dot_row(const std::vector<double>& m, int r, const std::vector<double>& v) {
  double acc = 0;
  for (size_t k = 0; k < v.size(); ++k) acc += m[r * v.size() + k] * v[k];
  return acc;
}

TEST(RefLstmTest, OneStepMatchesHandUnrolledGates) {
  TensorData x = f32({1, 1, 2}, {0.5, -1.0}), w = ramp({1, 8, 2}, 0.1, -0.3),
             r = ramp({1, 8, 2}, 0.05, -0.2);
  TensorData b = ramp({1, 16}, 0.01), h0 = f32({1, 1, 2}, {0.1, -0.2}),
             c0 = f32({1, 1, 2}, {0.3, 0.4});
  TensorData p = ramp({1, 6}, 0.1, -0.2);
  auto out =
      eval_op("LSTM", {x, w, r, b, TensorData(), h0, c0, p}, {{"hidden_size", int64_t{2}}}, 3);
  std::vector<double> xv = values_of(x), wv = values_of(w), rv = values_of(r), bv = values_of(b),
                      h = values_of(h0), c = values_of(c0), pv = values_of(p);
  auto gate = [&](int g, int j) {
    return dot_row(wv, g * 2 + j, xv) + dot_row(rv, g * 2 + j, h) + bv[g * 2 + j] +
           bv[8 + g * 2 + j];
  };
  std::vector<double> y_h, y_c;
  for (int j = 0; j < 2; ++j) {
    double i = sigmoid(gate(0, j) + pv[j] * c[j]);
    double f = sigmoid(gate(2, j) + pv[4 + j] * c[j]);
    double ct = f * c[j] + i * std::tanh(gate(3, j));
    double o = sigmoid(gate(1, j) + pv[2 + j] * ct);
    y_c.push_back(ct);
    y_h.push_back(o * std::tanh(ct));
  }
  EXPECT_EQ(out[0].shape(), (Ints{1, 1, 1, 2}));
  expect_near(values_of(out[0]), y_h, 1e-5);
  expect_near(values_of(out[1]), y_h, 1e-5);
  expect_near(values_of(out[2]), y_c, 1e-5);
}

TEST(RefGruTest, OneStepMatchesHandUnrolledGatesInBothResetForms) {
  TensorData x = f32({1, 1, 3}, {0.5, -1.0, 2.0}), w = ramp({1, 6, 3}, 0.1, -0.5),
             r = ramp({1, 6, 2}, -0.07, 0.3);
  TensorData b = ramp({1, 12}, 0.02, -0.1), h0 = f32({1, 1, 2}, {0.25, -0.5});
  std::vector<double> xv = values_of(x), wv = values_of(w), rv = values_of(r), bv = values_of(b),
                      h = values_of(h0);
  for (int64_t lbr : {0, 1}) {
    auto out = eval_op("GRU", {x, w, r, b, TensorData(), h0},
                       {{"hidden_size", int64_t{2}}, {"linear_before_reset", lbr}}, 2);
    std::vector<double> rg(2), want;
    for (int k = 0; k < 2; ++k)
      rg[k] = sigmoid(dot_row(wv, 2 + k, xv) + dot_row(rv, 2 + k, h) + bv[2 + k] + bv[8 + k]);
    for (int j = 0; j < 2; ++j) {
      double z = sigmoid(dot_row(wv, j, xv) + dot_row(rv, j, h) + bv[j] + bv[6 + j]);
      std::vector<double> reset_h{rg[0] * h[0], rg[1] * h[1]};
      double cand =
          lbr ? dot_row(wv, 4 + j, xv) + bv[4 + j] + rg[j] * (dot_row(rv, 4 + j, h) + bv[10 + j])
              : dot_row(wv, 4 + j, xv) + bv[4 + j] + dot_row(rv, 4 + j, reset_h) + bv[10 + j];
      want.push_back((1 - z) * std::tanh(cand) + z * h[j]);
    }
    expect_near(values_of(out[0]), want, 1e-5);
    expect_near(values_of(out[1]), want, 1e-5);
  }
}

TEST(RefRnnTest, TwoStepsWithDefaultTanh) {
  TensorData x = f32({2, 1, 1}, {1.0, -2.0}), w = f32({1, 1, 1}, {0.5}), r = f32({1, 1, 1}, {-1.5});
  auto out = eval_op("RNN", {x, w, r}, {{"hidden_size", int64_t{1}}}, 2);
  double h1 = std::tanh(0.5), h2 = std::tanh(-1.0 - 1.5 * h1);
  expect_near(values_of(out[0]), {h1, h2}, 1e-6);
  expect_near(values_of(out[1]), {h2}, 1e-6);
}

TEST(RefRnnTest, ReverseBidirectionalAndSequenceLengths) {
  TensorData x = ramp({3, 2, 2}, 0.2, -0.5), w = ramp({1, 3, 2}, 0.1, -0.2),
             r = ramp({1, 3, 3}, -0.05, 0.2);
  std::map<std::string, Attr> attrs{{"hidden_size", int64_t{3}}};
  auto fwd = eval_op("RNN", {x, w, r}, attrs, 2);
  // Reverse over reversed time equals forward.
  std::vector<double> xv = values_of(x), flipped;
  for (int t = 2; t >= 0; --t)
    flipped.insert(flipped.end(), xv.begin() + t * 4, xv.begin() + t * 4 + 4);
  attrs["direction"] = std::string("reverse");
  auto rev = eval_op("RNN", {f32({3, 2, 2}, flipped), w, r}, attrs, 2);
  expect_near(values_of(rev[1]), values_of(fwd[1]), 1e-6);
  // Bidirectional stacks both directions: Y is [seq, 2, batch, hidden].
  attrs["direction"] = std::string("bidirectional");
  std::vector<double> w2 = values_of(w), r2 = values_of(r);
  w2.insert(w2.end(), w2.begin(), w2.end());
  r2.insert(r2.end(), r2.begin(), r2.end());
  auto bi =
      eval_op("RNN", {f32({3, 2, 2}, flipped), f32({2, 3, 2}, w2), f32({2, 3, 3}, r2)}, attrs, 2);
  EXPECT_EQ(bi[0].shape(), (Ints{3, 2, 2, 3}));
  std::vector<double> bh = values_of(bi[1]);
  expect_near({bh.begin() + 6, bh.end()}, values_of(fwd[1]), 1e-6);
  // Batch entry 1 stops after one step: later Y rows are zero and Y_h is its first output.
  attrs.erase("direction");
  TensorData lens(DataType::i32(), {2});
  lens.data<int32_t>()[0] = 3;
  lens.data<int32_t>()[1] = 1;
  auto short_seq = eval_op("RNN", {x, w, r, TensorData(), lens}, attrs, 2);
  std::vector<double> y = values_of(short_seq[0]), yh = values_of(short_seq[1]),
                      full_y = values_of(fwd[0]);
  for (int k = 0; k < 3; ++k) {
    EXPECT_NEAR(y[3 + k], full_y[3 + k], 1e-6);  // t = 0, batch 1
    EXPECT_EQ(y[(1 * 2 + 1) * 3 + k], 0.0);
    EXPECT_EQ(y[(2 * 2 + 1) * 3 + k], 0.0);
    EXPECT_NEAR(yh[3 + k], full_y[3 + k], 1e-6);
  }
}

TEST(RefLstmTest, BatchFirstLayoutTransposesInputsAndOutputs) {
  TensorData x = ramp({2, 3, 2}, 0.1, -0.3), w = ramp({1, 8, 2}, 0.05, -0.2),
             r = ramp({1, 8, 2}, -0.03, 0.1);
  std::vector<double> xv = values_of(x), seq_major(12);
  for (int b = 0; b < 2; ++b)
    for (int t = 0; t < 3; ++t)
      for (int i = 0; i < 2; ++i) seq_major[(t * 2 + b) * 2 + i] = xv[(b * 3 + t) * 2 + i];
  auto ref = eval_op("LSTM", {f32({3, 2, 2}, seq_major), w, r}, {{"hidden_size", int64_t{2}}}, 3);
  auto bf = eval_op("LSTM", {x, w, r}, {{"hidden_size", int64_t{2}}, {"layout", int64_t{1}}}, 3);
  EXPECT_EQ(bf[0].shape(), (Ints{2, 3, 1, 2}));
  std::vector<double> y = values_of(ref[0]), ybf = values_of(bf[0]);
  for (int b = 0; b < 2; ++b)
    for (int t = 0; t < 3; ++t)
      for (int j = 0; j < 2; ++j)
        EXPECT_NEAR(ybf[(b * 3 + t) * 2 + j], y[(t * 2 + b) * 2 + j], 1e-6);
  expect_near(values_of(bf[2]), values_of(ref[2]),
              1e-6);  // [batch, 1, H] and [1, batch, H] share the order
}

}  // namespace
}  // namespace tessel::reference::nn_testing
