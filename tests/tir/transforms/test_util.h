// Test helpers for tir passes: structural comparison that prints both sides on failure, and a
// small reference interpreter that runs a PrimFunc (before or after lowering) on host vectors,
// rounding float32 results after every operation like the machine would. Every memory access it
// performs must be in bounds (a test failure otherwise); if_then_else is evaluated lazily per lane.
#pragma once

#include <gtest/gtest.h>

#include <deque>
#include <unordered_map>
#include <vector>

#include "ir/error.h"
#include "ir/printer.h"
#include "ir/structural_equal.h"

namespace tessel::tir::testing {

inline ::testing::AssertionResult ir_equal(const PrimFunc& actual, const PrimFunc& expected) {
  if (structural_equal(actual, expected)) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "actual:\n"
                                       << to_string(actual) << "expected:\n"
                                       << to_string(expected);
}

inline ::testing::AssertionResult ir_equal(const Stmt& actual, const Stmt& expected) {
  if (structural_equal(actual, expected, /*map_free_vars=*/true)) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << "actual:\n"
                                       << to_string(actual) << "expected:\n"
                                       << to_string(expected);
}

using Lanes = std::vector<double>;

// Executes tir on doubles. Memory is keyed by buffer data var; N-d accesses use the row-major
// (or strided) position, so the same data works before and after flatten_buffers.
class Interpreter {
 public:
  // Binds parameter i to `data[i]` and each scalar var to its value, then runs the body.
  void run(const PrimFunc& f, const std::vector<std::vector<double>*>& data,
           const std::vector<std::pair<Var, int64_t>>& scalars = {});

  Lanes eval(const PrimExpr& e);
  void exec(const Stmt& s);
  std::unordered_map<const VarNode*, Lanes> env;

 private:
  size_t position(const Buffer& b, const std::vector<PrimExpr>& idx, int lane);
  // Evaluates one value of an if_then_else with only the lanes whose condition is `taken`
  // active: loads in the other lanes read nothing (and give 0), as the generated code does.
  Lanes eval_taken(const PrimExpr& e, const Lanes& cond, bool taken);
  bool lane_active(int lane) const;
  std::vector<bool> active_;  // empty: every lane
  std::unordered_map<const VarNode*, std::vector<double>*> memory_;
  std::deque<std::vector<double>> allocations_;  // stable addresses
};

}  // namespace tessel::tir::testing
