#include <gtest/gtest.h>

#include "tests/reference/nn_test_util.h"

namespace tessel::reference::nn_testing {
namespace {

using Ints = std::vector<int64_t>;

TensorData i64(const Ints& v) {
  TensorData t(DataType::i64(), {static_cast<int64_t>(v.size())});
  for (size_t i = 0; i < v.size(); ++i) t.data<int64_t>()[i] = v[i];
  return t;
}

std::vector<TensorData> resize(const TensorData& x, const TensorData& scales,
                               const TensorData& sizes, std::map<std::string, Attr> attrs,
                               const TensorData& roi = TensorData()) {
  return eval_op("Resize", {x, roi, scales, sizes}, std::move(attrs));
}

// Examples from the ONNX Resize spec (test_resize_*).
TEST(RefResizeTest, NearestSpecExamples) {
  auto up = resize(f32({1, 1, 2, 2}, {1, 2, 3, 4}), f32({4}, {1, 1, 2, 3}), {},
                   {{"mode", std::string("nearest")}});
  expect_near(values_of(up[0]),
              {1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4});
  auto down = resize(ramp({1, 1, 2, 4}, 1, 1), f32({4}, {1, 1, 0.6f, 0.6f}), {},
                     {{"mode", std::string("nearest")}});
  expect_near(values_of(down[0]), {1, 3});
  auto sizes = resize(ramp({1, 1, 2, 2}, 1, 1), {}, i64({1, 1, 3, 3}),
                      {{"mode", std::string("nearest")},
                       {"coordinate_transformation_mode", std::string("asymmetric")},
                       {"nearest_mode", std::string("round_prefer_ceil")}});
  // x / 1.5: 0, 0.67 -> 1, 1.33 -> 1.
  expect_near(values_of(sizes[0]), {1, 2, 2, 3, 4, 4, 3, 4, 4});
}

TEST(RefResizeTest, LinearSpecExamples) {
  TensorData x = f32({1, 1, 2, 2}, {1, 2, 3, 4});
  auto up = resize(x, f32({4}, {1, 1, 2, 2}), {}, {{"mode", std::string("linear")}});
  expect_near(values_of(up[0]),
              {1, 1.25, 1.75, 2, 1.5, 1.75, 2.25, 2.5, 2.5, 2.75, 3.25, 3.5, 3, 3.25, 3.75, 4});
  auto corners = resize(x, f32({4}, {1, 1, 2, 2}), {},
                        {{"mode", std::string("linear")},
                         {"coordinate_transformation_mode", std::string("align_corners")}});
  double t = 1.0 / 3;
  expect_near(values_of(corners[0]), {1, 1 + t, 1 + 2 * t, 2, 1 + 2 * t, 2, 2 + t, 2 + 2 * t, 2 + t,
                                      2 + 2 * t, 3, 3 + t, 3, 3 + t, 3 + 2 * t, 4});
  TensorData x24 = ramp({1, 1, 2, 4}, 1, 1);
  auto down = resize(x24, f32({4}, {1, 1, 0.6f, 0.6f}), {}, {{"mode", std::string("linear")}});
  expect_near(values_of(down[0]), {2.6666665, 4.3333331});
  auto down_corners = resize(x24, f32({4}, {1, 1, 0.6f, 0.6f}), {},
                             {{"mode", std::string("linear")},
                              {"coordinate_transformation_mode", std::string("align_corners")}});
  expect_near(values_of(down_corners[0]), {1, 3.142857});
}

TEST(RefResizeTest, TfCropAndResizeExtrapolates) {
  TensorData x = ramp({1, 1, 4, 4}, 1, 1);
  auto crop = resize(x, {}, i64({1, 1, 3, 3}),
                     {{"mode", std::string("linear")},
                      {"coordinate_transformation_mode", std::string("tf_crop_and_resize")}},
                     f32({8}, {0, 0, 0.4f, 0.6f, 1, 1, 0.6f, 0.8f}));
  expect_near(values_of(crop[0]), {7.6, 7.9, 8.2, 8.8, 9.1, 9.4, 10, 10.3, 10.6});
  auto outside = resize(x, {}, i64({1, 1, 3, 3}),
                        {{"mode", std::string("linear")},
                         {"coordinate_transformation_mode", std::string("tf_crop_and_resize")},
                         {"extrapolation_value", 10.0}},
                        f32({8}, {0, 0, 0.4f, 0.6f, 1, 1, 1.2f, 1.7f}));
  expect_near(values_of(outside[0]), {7.6, 10, 10, 12.4, 10, 10, 10, 10, 10});
}

TEST(RefResizeTest, CubicSpecExampleAndLinearReproduction) {
  auto down = resize(ramp({1, 1, 4, 4}, 1, 1), f32({4}, {1, 1, 0.8f, 0.8f}), {},
                     {{"mode", std::string("cubic")}});
  expect_near(values_of(down[0]), {1.47119141, 2.78125, 4.08251953, 6.71142578, 8.02148438,
                                   9.32275391, 11.91650391, 13.2265625, 14.52783203});
  // Keys cubic convolution (a = -0.5) reproduces a linear ramp away from the borders.
  auto up = resize(ramp({1, 8}), f32({2}, {1, 2}), {},
                   {{"mode", std::string("cubic")}, {"cubic_coeff_a", -0.5}});
  std::vector<double> v = values_of(up[0]);
  for (int x = 4; x < 12; ++x) EXPECT_NEAR(v[x], (x + 0.5) / 2 - 0.5, 1e-5) << x;
}

// The mapping the importer gives Upsample and Resize-10: asymmetric coordinates, floor rounding.
TEST(RefResizeTest, TheLegacyMappingRepeatsAndInterpolatesFromTheLeft) {
  auto legacy = [](const std::string& mode) {
    return std::map<std::string, Attr>{
        {"mode", mode},
        {"coordinate_transformation_mode", std::string("asymmetric")},
        {"nearest_mode", std::string("floor")}};
  };
  auto up = resize(f32({1, 1, 2, 2}, {1, 2, 3, 4}), f32({4}, {1, 1, 2, 3}), {}, legacy("nearest"));
  expect_near(values_of(up[0]),
              {1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4});
  auto linear = resize(f32({1, 2}, {1, 3}), f32({2}, {1, 2}), {}, legacy("linear"));
  expect_near(values_of(linear[0]), {1, 2, 3, 3});
}

}  // namespace
}  // namespace tessel::reference::nn_testing
