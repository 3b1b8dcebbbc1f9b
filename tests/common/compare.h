// Numeric comparison for tests with a stated tolerance: numpy.isclose's rule,
// |got - want| <= atol + rtol * |want|, where NaN matches NaN and an infinity only itself.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <source_location>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "tests/common/tensor.h"

namespace tessel::testing {

// Mismatches reported per comparison, so a wrong result does not flood the log.
constexpr int kMaxReportedMismatches = 5;

struct Tolerance {
  double atol = 0;
  double rtol = 0;
};

inline bool is_close(double got, double want, Tolerance tol) {
  if (std::isnan(want) || std::isnan(got)) return std::isnan(want) && std::isnan(got);
  if (std::isinf(want) || std::isinf(got)) return got == want;
  return std::abs(got - want) <= tol.atol + tol.rtol * std::abs(want);
}

// Element by element; reports the first few mismatches (flat index, both values) at the caller's
// line, prefixed by `what`.
inline void expect_all_close(const std::vector<double>& got, const std::vector<double>& want,
                             Tolerance tol, const std::string& what = "result",
                             std::source_location at = std::source_location::current()) {
  if (got.size() != want.size()) {
    ADD_FAILURE_AT(at.file_name(), at.line())
        << what << ": " << got.size() << " elements, expected " << want.size();
    return;
  }
  int mismatches = 0;
  for (size_t i = 0; i < got.size() && mismatches < kMaxReportedMismatches; ++i) {
    if (is_close(got[i], want[i], tol)) continue;
    ++mismatches;
    ADD_FAILURE_AT(at.file_name(), at.line())
        << what << " element " << i << ": got " << got[i] << ", expected " << want[i] << " (atol "
        << tol.atol << ", rtol " << tol.rtol << ")";
  }
}

// Same dtype and shape, then values: integers and bools exactly, floats within `tol`.
inline void expect_all_close(const graph::TensorData& got, const graph::TensorData& want,
                             Tolerance tol, const std::string& what = "result",
                             std::source_location at = std::source_location::current()) {
  if (got.dtype() != want.dtype() || got.shape() != want.shape()) {
    ADD_FAILURE_AT(at.file_name(), at.line())
        << what << ": got " << graph::TensorType{got.dtype(), got.shape(), {}}.str()
        << ", expected " << graph::TensorType{want.dtype(), want.shape(), {}}.str();
    return;
  }
  if (!want.dtype().is_integer()) {
    expect_all_close(values_of(got), values_of(want), tol, what, at);
    return;
  }
  int mismatches = 0;
  for (int64_t i = 0; i < got.numel() && mismatches < kMaxReportedMismatches; ++i) {
    if (got.get_int(i) == want.get_int(i)) continue;
    ++mismatches;
    ADD_FAILURE_AT(at.file_name(), at.line()) << what << " element " << i << ": got "
                                              << got.get_int(i) << ", expected " << want.get_int(i);
  }
}

// Output by output (reported as "output <o>"), as above.
inline void expect_all_close(const std::vector<graph::TensorData>& got,
                             const std::vector<graph::TensorData>& want, Tolerance tol,
                             std::source_location at = std::source_location::current()) {
  if (got.size() != want.size()) {
    ADD_FAILURE_AT(at.file_name(), at.line()) << got.size() << " outputs, expected " << want.size();
    return;
  }
  for (size_t o = 0; o < want.size(); ++o)
    expect_all_close(got[o], want[o], tol, "output " + std::to_string(o), at);
}

}  // namespace tessel::testing
