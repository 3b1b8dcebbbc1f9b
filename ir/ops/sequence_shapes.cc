#include "ir/ops/sequence_shapes.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "ir/error.h"

namespace tessel::graph::ops {

namespace {

constexpr int kLetters = 52;

int letter_label(char c) { return c >= 'A' && c <= 'Z' ? c - 'A' : c - 'a' + 26; }
bool is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// One operand (or the output) term: its letters, with -1 standing for the ellipsis.
std::vector<int> parse_term(const OpAttrs& node, const std::string& term) {
  std::vector<int> out;
  bool seen_ellipsis = false;
  for (size_t i = 0; i < term.size(); ++i) {
    if (term.compare(i, 3, "...") == 0) {
      if (seen_ellipsis)
        throw Error(fmt::format("{}: term '{}' has two ellipses", node.describe(), term));
      seen_ellipsis = true;
      out.push_back(-1);
      i += 2;
    } else if (is_letter(term[i])) {
      out.push_back(letter_label(term[i]));
    } else {
      throw Error(fmt::format("{}: unexpected character '{}' in einsum equation", node.describe(),
                              term[i]));
    }
  }
  return out;
}

// Replaces the ellipsis by the last `count` of the `total` ellipsis labels.
std::vector<int> expand_ellipsis(const std::vector<int>& term, int64_t count, int64_t total) {
  std::vector<int> out;
  for (int l : term) {
    if (l != -1) {
      out.push_back(l);
      continue;
    }
    for (int64_t k = total - count; k < total; ++k) out.push_back(kLetters + static_cast<int>(k));
  }
  return out;
}

}  // namespace

EinsumSpec parse_einsum(const OpAttrs& node, const std::vector<std::vector<int64_t>>& shapes) {
  std::string eq = node.attr_string("equation", "");
  eq.erase(std::remove(eq.begin(), eq.end(), ' '), eq.end());
  size_t arrow = eq.find("->");
  std::string lhs = eq.substr(0, arrow);
  std::vector<std::vector<int>> terms;
  for (size_t start = 0;;) {
    size_t comma = lhs.find(',', start);
    terms.push_back(parse_term(node, lhs.substr(start, comma - start)));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (terms.size() != shapes.size()) {
    throw Error(fmt::format("{}: equation '{}' names {} operands but the node has {}",
                            node.describe(), eq, terms.size(), shapes.size()));
  }
  // Each operand's ellipsis covers the dims its letters leave over.
  std::vector<int64_t> ellipsis_rank(terms.size(), 0);
  int64_t max_ellipsis = 0;
  for (size_t i = 0; i < terms.size(); ++i) {
    bool has = std::count(terms[i].begin(), terms[i].end(), -1) > 0;
    int64_t letters = static_cast<int64_t>(terms[i].size()) - (has ? 1 : 0);
    int64_t rank = static_cast<int64_t>(shapes[i].size());
    if (has ? rank < letters : rank != letters) {
      throw Error(fmt::format("{}: operand {} has rank {} but its einsum term has {} labels",
                              node.describe(), i, rank, letters));
    }
    ellipsis_rank[i] = has ? rank - letters : 0;
    max_ellipsis = std::max(max_ellipsis, ellipsis_rank[i]);
  }
  // A label's size is its one size other than 1 (size-1 dims broadcast), else 1 or unknown.
  EinsumSpec spec;
  spec.label_dims.assign(static_cast<size_t>(kLetters + max_ellipsis), 1);
  std::vector<int> uses(spec.label_dims.size(), 0);
  std::vector<bool> unknown(spec.label_dims.size(), false);
  for (size_t i = 0; i < terms.size(); ++i) {
    spec.operand_labels.push_back(expand_ellipsis(terms[i], ellipsis_rank[i], max_ellipsis));
    for (size_t d = 0; d < shapes[i].size(); ++d) {
      int l = spec.operand_labels[i][d];
      int64_t dim = shapes[i][d];
      ++uses[l];
      if (dim == kUnknownDim) {
        unknown[l] = true;
      } else if (dim != 1) {
        if (spec.label_dims[l] != 1 && spec.label_dims[l] != dim) {
          throw Error(fmt::format("{}: an einsum label has sizes {} and {}", node.describe(),
                                  spec.label_dims[l], dim));
        }
        spec.label_dims[l] = dim;
      }
    }
  }
  for (size_t l = 0; l < unknown.size(); ++l) {
    if (unknown[l] && spec.label_dims[l] == 1) spec.label_dims[l] = kUnknownDim;
  }
  if (arrow != std::string::npos) {
    spec.output_labels =
        expand_ellipsis(parse_term(node, eq.substr(arrow + 2)), max_ellipsis, max_ellipsis);
    for (int l : spec.output_labels) {
      if (uses[l] == 0)
        throw Error(
            fmt::format("{}: output label of '{}' is not in any input", node.describe(), eq));
    }
  } else {
    for (int64_t k = 0; k < max_ellipsis; ++k)
      spec.output_labels.push_back(kLetters + static_cast<int>(k));
    for (int l = 0; l < kLetters; ++l) {
      if (uses[l] == 1) spec.output_labels.push_back(l);
    }
  }
  return spec;
}

std::vector<int64_t> resize_output_dims(const OpAttrs& node, const std::vector<int64_t>& in,
                                        const std::vector<double>& scales,
                                        const std::vector<int64_t>& sizes) {
  const std::vector<double>& given =
      sizes.empty() ? scales : std::vector<double>(sizes.begin(), sizes.end());
  if (given.size() != in.size()) {
    throw Error(fmt::format("{}: {} has {} entries for an input of rank {}", node.describe(),
                            sizes.empty() ? "scales" : "sizes", given.size(), in.size()));
  }
  std::vector<int64_t> out(in.size());
  for (size_t d = 0; d < in.size(); ++d) {
    if (given[d] < 0)
      throw Error(fmt::format("{}: negative scale or size for dim {}", node.describe(), d));
    out[d] = !sizes.empty() ? sizes[d]
             : in[d] == kUnknownDim
                 ? kUnknownDim
                 : static_cast<int64_t>(std::floor(static_cast<double>(in[d]) * scales[d]));
  }
  return out;
}

namespace {

ResizeAttrs resize_attrs(const OpAttrs& node) {
  ResizeAttrs a{node.attr_string("mode", "nearest"),
                node.attr_string("coordinate_transformation_mode", "half_pixel"),
                node.attr_string("nearest_mode", "round_prefer_floor"),
                node.attr_float("cubic_coeff_a", -0.75),
                node.attr_int("exclude_outside", 0) != 0,
                node.attr_float("extrapolation_value", 0.0)};
  if (a.mode != "nearest" && a.mode != "linear" && a.mode != "cubic") {
    throw Error(fmt::format("{}: unsupported mode '{}'", node.describe(), a.mode));
  }
  if (a.mode == "nearest" && a.nearest_mode != "floor" && a.nearest_mode != "ceil" &&
      a.nearest_mode != "round_prefer_floor" && a.nearest_mode != "round_prefer_ceil") {
    throw Error(fmt::format("{}: unsupported nearest_mode '{}'", node.describe(), a.nearest_mode));
  }
  return a;
}

// ONNX's formula for `mode`, where the output extent is out_width = scale * in (not rounded).
ResizeCoordinate resize_coordinate(const OpAttrs& node, const std::string& mode, double scale,
                                   int64_t in, double roi_start, double roi_end) {
  double out_width = scale * static_cast<double>(in), last = static_cast<double>(in - 1);
  using C = ResizeCoordinate;
  if (mode == "half_pixel") return {0.5, 1, scale, -0.5};  // (x + 0.5) / scale - 0.5
  if (mode == "pytorch_half_pixel")
    return out_width > 1 ? C{0.5, 1, scale, -0.5} : C{0, 0, 1, -0.5};
  if (mode == "align_corners") return out_width == 1 ? C{0, 0, 1, 0} : C{0, last, out_width - 1, 0};
  if (mode == "asymmetric") return {0, 1, scale, 0};              // x / scale
  if (mode == "tf_half_pixel_for_nn") return {0.5, 1, scale, 0};  // (x + 0.5) / scale
  if (mode == "tf_crop_and_resize") {
    // roi_start * (in - 1) + x * span / (out_width - 1); the middle of the roi for one point.
    double span = (roi_end - roi_start) * last;
    return out_width == 1 ? C{0, 0, 1, roi_start * last + span / 2, true}
                          : C{0, span, out_width - 1, roi_start * last, true};
  }
  throw Error(
      fmt::format("{}: unsupported coordinate_transformation_mode '{}'", node.describe(), mode));
}

}  // namespace

ResizeSpec resize_spec(const OpAttrs& node, const std::vector<int64_t>& in,
                       const ParamInput& input) {
  auto given = [&](ResizeInput i) -> const TensorData* {
    const TensorData* t = input(i);
    return t && t->numel() > 0 ? t : nullptr;
  };
  std::vector<int64_t> sizes;
  std::vector<double> scales;
  if (const TensorData* t = given(kResizeSizes)) {
    sizes = tensor_ints(*t);
  } else if (const TensorData* t = given(kResizeScales)) {
    for (int64_t i = 0; i < t->numel(); ++i) scales.push_back(t->get_double(i));
  }
  ResizeSpec spec{resize_attrs(node), resize_output_dims(node, in, scales, sizes), {}};
  std::vector<double> roi;
  if (const TensorData* t = given(kResizeRoi)) {
    for (int64_t i = 0; i < t->numel(); ++i) roi.push_back(t->get_double(i));
  }
  size_t rank = in.size();
  for (size_t d = 0; d < rank; ++d) {
    double scale =
        sizes.empty() ? scales[d] : static_cast<double>(spec.out[d]) / static_cast<double>(in[d]);
    bool has_roi = roi.size() == 2 * rank;
    spec.coords.push_back(resize_coordinate(node, spec.attrs.coordinate_mode, scale, in[d],
                                            has_roi ? roi[d] : 0.0, has_roi ? roi[rank + d] : 1.0));
  }
  return spec;
}

}  // namespace tessel::graph::ops
