// Resize lowered through topi (topi/compute_resize.cc): every mode, nearest rounding, coordinate
// transformation, cubic variant, crop-and-resize with extrapolation, scales or sizes, the legacy
// mapping the importer gives Upsample and Resize-10, and non-float dtypes, compiled and checked
// against the reference executor.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "lowering_test_util.h"

namespace tessel::topi {
namespace {

using namespace testing;  // NOLINT

TensorData floats(const std::vector<double>& values) {
  return make_tensor(DataType::f32(), {static_cast<int64_t>(values.size())}, values);
}

// A Resize (inputs X, roi, scales, sizes) with constant scales, or sizes when given.
void resize(OpGraph& m, ValueId x, const std::string& name, Attrs attrs,
            const std::vector<double>& scales, const std::vector<int64_t>& sizes = {},
            const std::vector<double>& roi = {}) {
  ValueId r = roi.empty() ? graph::kNoValue : m.constant(name + "_roi", floats(roi));
  ValueId s = scales.empty() ? graph::kNoValue : m.constant(name + "_scales", floats(scales));
  std::vector<ValueId> in{x, r, s};
  if (!sizes.empty()) in.push_back(m.constant(name + "_sizes", ints(sizes)));
  m.op(name, "Resize", in, std::move(attrs));
}

TEST(ComputeResizeTest, NearestRoundingAndCoordinates) {
  OpGraph m;
  auto x = m.input("x", random_data(DataType::f32(), {1, 2, 4, 5}, 1));
  // Scale 2 and sizes 3 from 4 put coordinates exactly on .5 ties, where the rounding modes differ.
  for (const char* rounding : {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"}) {
    for (const char* coord : {"half_pixel", "asymmetric", "align_corners"}) {
      Attrs attrs{{"mode", str_attr("nearest")},
                  {"nearest_mode", str_attr(rounding)},
                  {"coordinate_transformation_mode", str_attr(coord)}};
      resize(m, x, fmt::format("up_{}_{}", rounding, coord), attrs, {1, 1, 2, 1.5});
      resize(m, x, fmt::format("down_{}_{}", rounding, coord), attrs, {}, {1, 2, 3, 2});
    }
  }
  for (const char* coord : {"pytorch_half_pixel", "tf_half_pixel_for_nn"}) {
    resize(m, x, fmt::format("nearest_{}", coord),
           {{"coordinate_transformation_mode", str_attr(coord)}}, {1, 1, 0.5, 1.7});
  }
  m.check();
}

TEST(ComputeResizeTest, LinearEveryCoordinateMode) {
  OpGraph m;
  auto x = m.input("x", random_data(DataType::f32(), {2, 3, 5, 4}, 2));
  for (const char* coord : {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
                            "tf_half_pixel_for_nn"}) {
    Attrs attrs{{"mode", str_attr("linear")}, {"coordinate_transformation_mode", str_attr(coord)}};
    resize(m, x, fmt::format("up_{}", coord), attrs, {1, 1, 2, 1.5});
    resize(m, x, fmt::format("down_{}", coord), attrs, {}, {2, 3, 3, 1});
    // The batch dim resized too, and an output extent of 1 (pytorch_half_pixel's special case).
    resize(m, x, fmt::format("batch_{}", coord), attrs, {}, {3, 1, 5, 4});
  }
  m.check();
}

TEST(ComputeResizeTest, NdLinearAndRankOne) {
  OpGraph m;
  auto x5 = m.input("x5", random_data(DataType::f32(), {1, 2, 3, 4, 2}, 3));
  resize(m, x5, "trilinear", {{"mode", str_attr("linear")}}, {}, {1, 2, 5, 3, 4});
  Attrs align{{"mode", str_attr("linear")},
              {"coordinate_transformation_mode", str_attr("align_corners")}};
  resize(m, x5, "trilinear_align", align, {1, 1, 2, 0.75, 1.5});
  auto x1 = m.input("x1", random_data(DataType::f32(), {6}, 4));
  resize(m, x1, "rank1_linear", {{"mode", str_attr("linear")}}, {1.5});
  resize(m, x1, "rank1_nearest", {}, {}, {4});
  m.check();
}

TEST(ComputeResizeTest, CubicVariants) {
  OpGraph m;
  auto x = m.input("x", random_data(DataType::f32(), {1, 2, 5, 6}, 5));
  Attrs cubic{{"mode", str_attr("cubic")}};
  Attrs excl{{"mode", str_attr("cubic")},
             {"cubic_coeff_a", float_attr(-0.5)},
             {"exclude_outside", int_attr(1)}};
  for (const auto& [tag, attrs] :
       {std::pair{"default", cubic}, std::pair{"a_n0p5_exclude", excl}}) {
    resize(m, x, fmt::format("up_{}", tag), attrs, {1, 1, 2, 1.5});
    resize(m, x, fmt::format("down_{}", tag), attrs, {1, 1, 0.6, 0.8});
    resize(m, x, fmt::format("sizes_{}", tag), attrs, {}, {1, 2, 9, 4});
  }
  for (const char* coord : {"align_corners", "asymmetric", "pytorch_half_pixel"}) {
    Attrs attrs{{"mode", str_attr("cubic")}, {"coordinate_transformation_mode", str_attr(coord)}};
    resize(m, x, fmt::format("cubic_{}", coord), attrs, {1, 1, 1.6, 0.5});
  }
  m.check();
}

TEST(ComputeResizeTest, CropAndResizeExtrapolates) {
  OpGraph m;
  auto x = m.input("x", random_data(DataType::f32(), {1, 2, 6, 5}, 6));
  // The roi reaches past the input on the right and bottom: those points take the extrapolation
  // value.
  std::vector<double> roi{0, 0, 0.5, -0.25, 1, 1, 1.25, 0.75};
  for (const char* mode : {"nearest", "linear", "cubic"}) {
    Attrs attrs{{"mode", str_attr(mode)},
                {"coordinate_transformation_mode", str_attr("tf_crop_and_resize")},
                {"extrapolation_value", float_attr(10)}};
    resize(m, x, fmt::format("crop_{}", mode), attrs, {}, {1, 2, 5, 7}, roi);
    // One output point per dim: the middle of the roi.
    resize(m, x, fmt::format("crop_point_{}", mode), attrs, {}, {1, 2, 1, 1}, roi);
  }
  m.check();
}

// Upsample and Resize-10 import as Resize with asymmetric coordinates and floor rounding
// (frontend/canonicalize_ops.h), whatever the scale.
TEST(ComputeResizeTest, TheLegacyMappingOfUpsampleAndResize10) {
  OpGraph m;
  auto x = m.input("x", random_data(DataType::f32(), {1, 2, 3, 3}, 7));
  auto legacy = [](const char* mode) {
    return Attrs{{"mode", str_attr(mode)},
                 {"coordinate_transformation_mode", str_attr("asymmetric")},
                 {"nearest_mode", str_attr("floor")}};
  };
  resize(m, x, "nearest_up", legacy("nearest"), {1, 1, 2, 3});
  resize(m, x, "nearest_down", legacy("nearest"), {1, 1, 0.6, 0.6});
  resize(m, x, "linear_up", legacy("linear"), {1, 1, 2, 1.5});
  resize(m, x, "linear_fraction", legacy("linear"), {1, 1, 1.5, 2.5});
  m.check();
}

TEST(ComputeResizeTest, IntegerAndDoubleInputs) {
  OpGraph m;
  auto u8 = m.input("u8", random_data(DataType::u8(), {1, 1, 3, 4}, 10, 0, 255));
  resize(m, u8, "u8_nearest", {}, {1, 1, 2, 1.5});
  resize(m, u8, "u8_linear", {{"mode", str_attr("linear")}}, {1, 1, 1.5, 2});
  auto i32 = m.input("i32", random_data(DataType::i32(), {2, 5}, 11, -100, 100));
  resize(m, i32, "i32_cubic", {{"mode", str_attr("cubic")}}, {}, {2, 8});
  auto f64 = m.input("f64", random_data(DataType::f64(), {3, 4}, 12));
  resize(m, f64, "f64_cubic", {{"mode", str_attr("cubic")}, {"exclude_outside", int_attr(1)}},
         {1.5, 0.75});
  m.check();
}

TEST(ComputeResizeTest, UnsupportedModesAreRejected) {
  OpGraph m;
  auto x = m.input("x", random_data(DataType::f32(), {1, 1, 2, 2}, 13));
  resize(m, x, "area", {{"mode", str_attr("area")}}, {1, 1, 2, 2});
  expect_compile_error(m.b.g, "unsupported mode 'area'");
  OpGraph c;
  auto y = c.input("y", random_data(DataType::f32(), {1, 1, 2, 2}, 14));
  resize(c, y, "diagonal", {{"coordinate_transformation_mode", str_attr("diagonal")}},
         {1, 1, 2, 2});
  expect_compile_error(c.b.g, "unsupported coordinate_transformation_mode 'diagonal'");
}

}  // namespace
}  // namespace tessel::topi
