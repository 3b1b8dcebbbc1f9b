#include <gtest/gtest.h>

#include <cmath>

#include "tests/reference/nn_test_util.h"

namespace tessel::reference::nn_testing {
namespace {

using Ints = std::vector<int64_t>;

// Independent 2-D convolution: seven plain loops over NCHW / MCKK with groups.
std::vector<double> naive_conv2d(const TensorData& x, const TensorData& w,
                                 const std::vector<double>& bias, Ints s, Ints pads, Ints dil,
                                 int64_t group) {
  int64_t n_ = x.shape()[0], c_ = x.shape()[1], h_ = x.shape()[2], w_ = x.shape()[3];
  int64_t m_ = w.shape()[0], cg = w.shape()[1], kh_ = w.shape()[2], kw_ = w.shape()[3];
  int64_t oh_ = (h_ + pads[0] + pads[2] - dil[0] * (kh_ - 1) - 1) / s[0] + 1;
  int64_t ow_ = (w_ + pads[1] + pads[3] - dil[1] * (kw_ - 1) - 1) / s[1] + 1;
  std::vector<double> xv = values_of(x), wv = values_of(w), y;
  for (int64_t n = 0; n < n_; ++n)
    for (int64_t m = 0; m < m_; ++m)
      for (int64_t oh = 0; oh < oh_; ++oh)
        for (int64_t ow = 0; ow < ow_; ++ow) {
          double acc = bias.empty() ? 0.0 : bias[m];
          for (int64_t c = 0; c < cg; ++c)
            for (int64_t kh = 0; kh < kh_; ++kh)
              for (int64_t kw = 0; kw < kw_; ++kw) {
                int64_t ih = oh * s[0] - pads[0] + kh * dil[0],
                        iw = ow * s[1] - pads[1] + kw * dil[1];
                if (ih < 0 || ih >= h_ || iw < 0 || iw >= w_) continue;
                int64_t ic = (m / (m_ / group)) * cg + c;
                acc += xv[((n * c_ + ic) * h_ + ih) * w_ + iw] *
                       wv[((m * cg + c) * kh_ + kh) * kw_ + kw];
              }
          y.push_back(acc);
        }
  return y;
}

TEST(RefConvTest, GroupedStridedDilatedPaddedMatchesNaiveLoops) {
  TensorData x = ramp({2, 4, 5, 6}, 0.1, -1.0), w = ramp({6, 2, 3, 2}, -0.05, 0.7),
             b = f32({6}, {1, -1, 2, 0, 0.5, 3});
  auto y = eval_op("Conv", {x, w, b},
                   {{"group", int64_t{2}},
                    {"strides", Ints{2, 1}},
                    {"pads", Ints{1, 0, 1, 1}},
                    {"dilations", Ints{1, 2}}});
  EXPECT_EQ(y[0].shape(), (Ints{2, 6, 3, 5}));
  expect_near(values_of(y[0]), naive_conv2d(x, w, values_of(b), {2, 1}, {1, 0, 1, 1}, {1, 2}, 2));
}

TEST(RefConvTest, DepthwiseMatchesNaiveLoops) {
  TensorData x = ramp({1, 3, 4, 4}, 0.3), w = ramp({3, 1, 3, 3}, 0.1, -0.4);
  auto y = eval_op("Conv", {x, w}, {{"group", int64_t{3}}, {"pads", Ints{1, 1, 1, 1}}});
  expect_near(values_of(y[0]), naive_conv2d(x, w, {}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 3));
}

TEST(RefConvTest, AutoPadSameSplitsOddPaddingByMode) {
  TensorData x = ramp({1, 1, 4, 4}), w = ramp({1, 1, 2, 2}, 1.0, 1.0);
  auto upper = eval_op("Conv", {x, w}, {{"auto_pad", std::string("SAME_UPPER")}});
  auto lower = eval_op("Conv", {x, w}, {{"auto_pad", std::string("SAME_LOWER")}});
  expect_near(values_of(upper[0]), naive_conv2d(x, w, {}, {1, 1}, {0, 0, 1, 1}, {1, 1}, 1));
  expect_near(values_of(lower[0]), naive_conv2d(x, w, {}, {1, 1}, {1, 1, 0, 0}, {1, 1}, 1));
  auto valid =
      eval_op("Conv", {x, w}, {{"auto_pad", std::string("VALID")}, {"strides", Ints{2, 2}}});
  expect_near(values_of(valid[0]), naive_conv2d(x, w, {}, {2, 2}, {0, 0, 0, 0}, {1, 1}, 1));
}

TEST(RefConvTest, OneAndThreeSpatialDims) {
  auto y1 = eval_op("Conv", {ramp({1, 1, 5}), f32({1, 1, 3}, {1, 1, 1})});
  expect_near(values_of(y1[0]), {3, 6, 9});
  TensorData ones(DataType::f32(), {1, 1, 3, 3, 3});
  for (int i = 0; i < 27; ++i) ones.data<float>()[i] = 1;
  TensorData k(DataType::f32(), {1, 1, 2, 2, 2});
  for (int i = 0; i < 8; ++i) k.data<float>()[i] = 1;
  auto y3 = eval_op("Conv", {ones, k});
  EXPECT_EQ(y3[0].shape(), (Ints{1, 1, 2, 2, 2}));
  expect_near(values_of(y3[0]), std::vector<double>(8, 8.0));
}

// ConvTranspose examples from the ONNX operator spec.
TEST(RefConvTransposeTest, SpecExamples) {
  TensorData x = ramp({1, 1, 3, 3});
  TensorData w(DataType::f32(), {1, 2, 3, 3});
  for (int i = 0; i < 18; ++i) w.data<float>()[i] = 1;
  std::vector<double> plane = {0,  1,  3, 3,  2,  3,  8,  15, 12, 7,  9,  21, 36,
                               27, 15, 9, 20, 33, 24, 13, 6,  13, 21, 15, 8};
  std::vector<double> both = plane;
  both.insert(both.end(), plane.begin(), plane.end());
  expect_near(values_of(eval_op("ConvTranspose", {x, w})[0]), both);

  auto y1 = eval_op("ConvTranspose", {ramp({1, 1, 3}), f32({1, 2, 3}, {1, 1, 1, 1, 1, 1})});
  expect_near(values_of(y1[0]), {0, 1, 3, 3, 2, 0, 1, 3, 3, 2});

  auto dil =
      eval_op("ConvTranspose",
              {f32({1, 1, 3, 3}, {3, 8, 1, 9, 5, 7, 3, 2, 6}), f32({1, 1, 2, 2}, {7, 2, 1, 9})},
              {{"dilations", Ints{2, 2}}});
  expect_near(values_of(dil[0]), {21, 56, 13, 16, 2,  63, 35, 67, 10, 14, 24, 22, 76,
                                  76, 21, 9,  5,  88, 45, 63, 3,  2,  33, 18, 54});
}

TEST(RefConvTransposeTest, StridesOutputPaddingAndOutputShapeAgree) {
  TensorData x = ramp({1, 1, 3, 3}), w = ramp({1, 2, 3, 3}, 0.5);
  auto padded =
      eval_op("ConvTranspose", {x, w}, {{"strides", Ints{3, 2}}, {"output_padding", Ints{1, 1}}});
  EXPECT_EQ(padded[0].shape(), (Ints{1, 2, 10, 8}));
  auto shaped =
      eval_op("ConvTranspose", {x, w}, {{"strides", Ints{3, 2}}, {"output_shape", Ints{10, 8}}});
  expect_near(values_of(shaped[0]), values_of(padded[0]));
  // Naive scatter for one element: X[0,0,1,1] = 4 lands at rows 3..5, cols 2..4 of each channel.
  auto single =
      eval_op("ConvTranspose", {f32({1, 1, 2, 2}, {0, 0, 0, 4}), w}, {{"strides", Ints{3, 2}}});
  std::vector<double> got = values_of(single[0]);
  EXPECT_EQ(single[0].shape(), (Ints{1, 2, 6, 5}));
  EXPECT_NEAR(got[3 * 5 + 2], 4 * 0.0, 1e-6);
  EXPECT_NEAR(got[5 * 5 + 4], 4 * 4.0, 1e-6);
  EXPECT_NEAR(got[30 + 4 * 5 + 3], 4 * (9 + 4) * 0.5, 1e-6);
}

enum class Kind { kMax, kAvg, kAvgIncludePad };

// Independent 2-D pool over a square kernel with symmetric padding.
std::vector<double> naive_pool2d(const TensorData& x, int64_t k, int64_t s, int64_t pad,
                                 Kind kind) {
  int64_t h_ = x.shape()[2], w_ = x.shape()[3], oh_ = (h_ + 2 * pad - k) / s + 1,
          ow_ = (w_ + 2 * pad - k) / s + 1;
  std::vector<double> xv = values_of(x), y;
  for (int64_t plane = 0; plane < x.shape()[0] * x.shape()[1]; ++plane)
    for (int64_t oh = 0; oh < oh_; ++oh)
      for (int64_t ow = 0; ow < ow_; ++ow) {
        double best = -1e30, sum = 0;
        int64_t count = 0;
        for (int64_t i = oh * s - pad; i < oh * s - pad + k; ++i)
          for (int64_t j = ow * s - pad; j < ow * s - pad + k; ++j) {
            if (i < 0 || j < 0 || i >= h_ || j >= w_) continue;
            best = std::max(best, xv[(plane * h_ + i) * w_ + j]);
            sum += xv[(plane * h_ + i) * w_ + j];
            ++count;
          }
        y.push_back(kind == Kind::kMax ? best : sum / (kind == Kind::kAvg ? count : k * k));
      }
  return y;
}

TEST(RefPoolTest, MaxAndAveragePoolsMatchNaiveLoops) {
  TensorData x = ramp({2, 2, 6, 5}, -0.7, 3.0);
  std::map<std::string, Attr> attrs{
      {"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}};
  expect_near(values_of(eval_op("MaxPool", {x}, attrs)[0]), naive_pool2d(x, 3, 2, 1, Kind::kMax));
  expect_near(values_of(eval_op("AveragePool", {x}, attrs)[0]),
              naive_pool2d(x, 3, 2, 1, Kind::kAvg));
  attrs["count_include_pad"] = int64_t{1};
  expect_near(values_of(eval_op("AveragePool", {x}, attrs)[0]),
              naive_pool2d(x, 3, 2, 1, Kind::kAvgIncludePad));
}

TEST(RefPoolTest, MaxPoolCeilModeAndIndices) {
  auto ceil =
      eval_op("MaxPool", {ramp({1, 1, 4, 4}, 1, 1)},
              {{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"ceil_mode", int64_t{1}}});
  expect_near(values_of(ceil[0]), {11, 12, 15, 16});
  // ONNX maxpool_with_argmax_2d_precomputed_pads / _strides.
  auto padded = eval_op("MaxPool", {ramp({1, 1, 5, 5}, 1, 1)},
                        {{"kernel_shape", Ints{5, 5}}, {"pads", Ints{2, 2, 2, 2}}}, 2);
  expect_near(values_of(padded[0]), {13, 14, 15, 15, 15, 18, 19, 20, 20, 20, 23, 24, 25,
                                     25, 25, 23, 24, 25, 25, 25, 23, 24, 25, 25, 25});
  expect_near(values_of(padded[1]), {12, 13, 14, 14, 14, 17, 18, 19, 19, 19, 22, 23, 24,
                                     24, 24, 22, 23, 24, 24, 24, 22, 23, 24, 24, 24});
  auto col = eval_op(
      "MaxPool", {ramp({1, 1, 5, 5}, 1, 1)},
      {{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}}, {"storage_order", int64_t{1}}}, 2);
  expect_near(values_of(col[0]), {7, 9, 17, 19});
  expect_near(values_of(col[1]), {6, 16, 8, 18});
}

TEST(RefPoolTest, GlobalAndLpPools) {
  TensorData x = ramp({1, 2, 2, 2}, 1, -3);
  expect_near(values_of(eval_op("GlobalAveragePool", {x})[0]), {-1.5, 2.5});
  expect_near(values_of(eval_op("GlobalMaxPool", {x})[0]), {0, 4});
  expect_near(values_of(eval_op("GlobalLpPool", {x}, {{"p", int64_t{1}}})[0]), {6, 10});
  auto lp = eval_op("LpPool", {x}, {{"kernel_shape", Ints{2, 1}}});
  expect_near(values_of(lp[0]),
              {std::sqrt(9.0 + 1), std::sqrt(4.0 + 0), std::sqrt(1.0 + 9), std::sqrt(4.0 + 16)});
}

}  // namespace
}  // namespace tessel::reference::nn_testing
