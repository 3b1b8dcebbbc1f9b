// Bound inference range by range: the exact min and extent that infer_bound gives each stage's
// axes (splits that do not divide, tiles, fuses, reductions, compute_at with stencil, strided,
// reversed, clamped and data-dependent reads, cache stages), and the guards that keep a stage
// inside its domain, checked at every loop value.
#include "te/bound_inference.h"

#include <gtest/gtest.h>

#include <functional>
#include <source_location>
#include <utility>
#include <vector>

#include "ir/functor.h"
#include "ir/printer.h"
#include "te/operation.h"
#include "te/schedule.h"
#include "tir/arith/analyzer.h"

namespace tessel::te {
namespace {

using LoopValues = std::vector<std::pair<IterVar, int64_t>>;

Bounds bounds_of(const Schedule& s) { return infer_bound(s, inline_bodies(s)); }

const Range* range_of(const Bounds& b, const IterVar& iv, const std::source_location& at) {
  auto it = b.find(iv.get());
  if (it != b.end()) return &it->second;
  ADD_FAILURE_AT(at.file_name(), at.line()) << "no range for " << iv.name();
  return nullptr;
}

// `e` with the loop vars replaced by the given values, folded to a number.
int64_t value_at(const PrimExpr& e, const LoopValues& values, const std::source_location& at) {
  std::vector<std::pair<Var, PrimExpr>> map;
  for (const auto& [iv, value] : values)
    map.emplace_back(iv->var, make_const(iv->var.dtype(), static_cast<double>(value)));
  PrimExpr folded = arith::Analyzer().simplify(substitute(e, map));
  const int64_t* number = as_const_int(folded);
  if (number) return *number;
  ADD_FAILURE_AT(at.file_name(), at.line()) << to_string(e) << " is not a number once bound";
  return -1;
}

// Expects `iv` to range over [min, min + extent): the extent a constant, the min an expression of
// the loops enclosing the attach point (an int where there are none).
void expect_range(const Bounds& b, const IterVar& iv, const PrimExpr& min, int64_t extent,
                  std::source_location at = std::source_location::current()) {
  const Range* r = range_of(b, iv, at);
  if (!r) return;
  const int64_t* n = as_const_int(r->extent);
  if (!n || *n != extent) {
    ADD_FAILURE_AT(at.file_name(), at.line())
        << iv.name() << ": extent " << to_string(r->extent) << ", expected " << extent;
  }
  if (!arith::Analyzer().can_prove_equal(r->min, min)) {
    ADD_FAILURE_AT(at.file_name(), at.line())
        << iv.name() << ": min " << to_string(r->min) << ", expected " << to_string(min);
  }
}

// Expects `iv`'s range at the given loop values, for ranges whose extent depends on the tile.
void expect_range_at(const Bounds& b, const IterVar& iv, const LoopValues& values, int64_t min,
                     int64_t extent, std::source_location at = std::source_location::current()) {
  const Range* r = range_of(b, iv, at);
  if (!r) return;
  std::pair<int64_t, int64_t> got{value_at(r->min, values, at), value_at(r->extent, values, at)};
  if (got != std::pair<int64_t, int64_t>{min, extent}) {
    ADD_FAILURE_AT(at.file_name(), at.line())
        << iv.name() << " at " << values.front().first.name() << " = " << values.front().second
        << ": [" << got.first << ", +" << got.second << "), expected [" << min << ", +" << extent
        << ")";
  }
}

// Expects `t`'s stage to have `count` loop guards that together hold exactly where `inside` does,
// for every value of the loops enclosing its body (passed to `inside` outermost first).
void expect_guards(const Schedule& s, const Tensor& t, size_t count,
                   const std::function<bool(const std::vector<int64_t>&)>& inside,
                   std::source_location at = std::source_location::current()) {
  const StageNode& stage = *s[t].node();
  Bounds b = bounds_of(s);
  std::vector<PrimExpr> guards = loop_guards(stage, b, root_values(stage, b));
  if (guards.size() != count) {
    ADD_FAILURE_AT(at.file_name(), at.line())
        << stage.name << " has " << guards.size() << " guards, expected " << count;
  }
  auto loops = enclosing_loops(stage);
  LoopValues values;
  for (const auto& loop : loops) values.emplace_back(loop.second, 0);
  int mismatches = 0;
  std::function<void(size_t)> visit = [&](size_t l) {
    if (mismatches > 0) return;
    if (l < loops.size()) {
      int64_t extent = value_at(loop_range(b, loops[l].second).extent, values, at);
      for (values[l].second = 0; values[l].second < extent; ++values[l].second) visit(l + 1);
      return;
    }
    bool guarded = true;
    for (const PrimExpr& g : guards) guarded = guarded && value_at(g, values, at) != 0;
    std::vector<int64_t> numbers;
    for (const auto& v : values) numbers.push_back(v.second);
    if (guarded != inside(numbers)) {
      ++mismatches;
      std::string where;
      for (const auto& [iv, value] : values) where += " " + iv.name() + "=" + std::to_string(value);
      ADD_FAILURE_AT(at.file_name(), at.line())
          << stage.name << " guards " << (guarded ? "admit" : "exclude") << where;
    }
  };
  visit(0);
}

// ---------------- splits, tiles and fuses at root ----------------

// C[i] = A[i] * 2 over n elements. Shapes are int32, as topi builds them (an int64 axis cannot be
// split yet: the split's loop vars are int32).
struct Elementwise {
  Tensor A, C;
  explicit Elementwise(int n) {
    A = placeholder({n}, DataType::f32(), "A");
    C = compute({n}, [&](Expr i) { return A(i) * 2.0f; }, "C");
  }
};

TEST(BoundInferenceTest, SplitThatDoesNotDivideRoundsTheOuterLoopUp) {
  Elementwise ew(61);
  Schedule s = create_schedule({ew.C});
  auto [outer, inner] = s[ew.C].split(ew.C.axis(0), 8);
  Bounds b = bounds_of(s);
  expect_range(b, ew.C.axis(0), 0, 61);
  expect_range(b, outer, 0, 8);
  expect_range(b, inner, 0, 8);
  expect_guards(s, ew.C, 1, [](const auto& v) { return v[0] * 8 + v[1] < 61; });
}

TEST(BoundInferenceTest, SplitByNpartsRoundsTheInnerLoopUp) {
  Elementwise ew(61);
  Schedule s = create_schedule({ew.C});
  auto [outer, inner] = s[ew.C].split_nparts(ew.C.axis(0), 4);
  Bounds b = bounds_of(s);
  expect_range(b, outer, 0, 4);
  expect_range(b, inner, 0, 16);
  expect_guards(s, ew.C, 1, [](const auto& v) { return v[0] * 16 + v[1] < 61; });
}

TEST(BoundInferenceTest, NestedSplitGuardsBothParents) {
  Elementwise ew(61);
  Schedule s = create_schedule({ew.C});
  auto [outer, inner] = s[ew.C].split(ew.C.axis(0), 8);
  auto [inner_outer, inner_inner] = s[ew.C].split(inner, 3);  // 3 does not divide 8 either
  Bounds b = bounds_of(s);
  expect_range(b, inner, 0, 8);
  expect_range(b, inner_outer, 0, 3);
  expect_range(b, inner_inner, 0, 3);
  expect_guards(s, ew.C, 2, [](const auto& v) {
    int64_t inner = v[1] * 3 + v[2];
    return inner < 8 && v[0] * 8 + inner < 61;
  });
}

TEST(BoundInferenceTest, SplitThatDividesNeedsNoGuard) {
  Elementwise ew(64);
  Schedule s = create_schedule({ew.C});
  auto [outer, inner] = s[ew.C].split(ew.C.axis(0), 8);
  expect_range(bounds_of(s), outer, 0, 8);
  expect_guards(s, ew.C, 0, [](const auto&) { return true; });
}

TEST(BoundInferenceTest, SplitFactorBeyondTheExtentGivesOneOuterIteration) {
  Elementwise ew(5);
  Schedule s = create_schedule({ew.C});
  auto [outer, inner] = s[ew.C].split(ew.C.axis(0), 8);
  Bounds b = bounds_of(s);
  expect_range(b, outer, 0, 1);
  expect_range(b, inner, 0, 8);
  expect_guards(s, ew.C, 1, [](const auto& v) { return v[1] < 5; });
}

TEST(BoundInferenceTest, SymbolicExtentSplitsIntoACeilingDivision) {
  Var n("n");
  Tensor A = placeholder({n}, DataType::f32(), "A");
  Tensor C = compute({n}, [&](Expr i) { return A(i) * 2.0f; }, "C");
  Schedule s = create_schedule({C});
  auto [outer, inner] = s[C].split(C.axis(0), 8);
  Bounds b = bounds_of(s);
  expect_range(b, inner, 0, 8);
  const Range& r = b.at(outer.get());
  EXPECT_TRUE(arith::Analyzer().can_prove_equal(r.extent, floordiv(n + 7, 8)))
      << to_string(r.extent);
}

TEST(BoundInferenceTest, TileSplitsBothAxes) {
  Tensor A = placeholder({30, 20}, DataType::f32(), "A");
  Tensor C = compute({30, 20}, [&](Expr i, Expr j) { return A(i, j) * 2.0f; }, "C");
  Schedule s = create_schedule({C});
  auto [io, jo, ii, ji] = s[C].tile(C.axis(0), C.axis(1), 8, 6);
  Bounds b = bounds_of(s);
  expect_range(b, io, 0, 4);
  expect_range(b, jo, 0, 4);
  expect_range(b, ii, 0, 8);
  expect_range(b, ji, 0, 6);
  expect_guards(s, C, 2,
                [](const auto& v) { return v[0] * 8 + v[2] < 30 && v[1] * 6 + v[3] < 20; });
}

TEST(BoundInferenceTest, FuseMultipliesTheExtents) {
  Tensor A = placeholder({6, 5}, DataType::f32(), "A");
  Tensor C = compute({6, 5}, [&](Expr i, Expr j) { return A(i, j) * 2.0f; }, "C");
  Schedule s = create_schedule({C});
  IterVar fused = s[C].fuse(C.axis(0), C.axis(1));
  auto [outer, inner] = s[C].split(fused, 4);
  Bounds b = bounds_of(s);
  expect_range(b, fused, 0, 30);
  expect_range(b, outer, 0, 8);
  expect_range(b, inner, 0, 4);
  expect_guards(s, C, 1, [](const auto& v) { return v[0] * 4 + v[1] < 30; });
}

// ---------------- compute_at: the region a producer computes per consumer tile ----------------

// B = A + 1 over `producer` elements; a consumer over `consumer` elements reads B through `read`.
struct Pipeline {
  Tensor A, B, C;
  Pipeline(int producer, int consumer, const std::function<PrimExpr(Tensor, Expr)>& read) {
    A = placeholder({producer}, DataType::f32(), "A");
    B = compute({producer}, [&](Expr i) { return A(i) + 1.0f; }, "B");
    C = compute({consumer}, [&](Expr i) { return read(B, i); }, "C");
  }
};

TEST(BoundInferenceTest, StencilAtTheOuterLoopCoversTheTileAndItsHalo) {
  Pipeline p(34, 30, [](Tensor B, Expr i) { return B(i) + B(i + 2) + B(i + 4); });
  Schedule s = create_schedule({p.C});
  auto [outer, inner] = s[p.C].split(p.C.axis(0), 8);
  s[p.B].compute_at(s[p.C], outer);
  expect_range(bounds_of(s), p.B.axis(0), outer->var * 8, 12);
  // The last tile's region [24, 36) reaches past B's 34 elements.
  expect_guards(s, p.B, 1, [](const auto& v) { return v[0] * 8 + v[1] < 34; });
}

TEST(BoundInferenceTest, StencilWhoseTilesStayInsideNeedsNoGuard) {
  Pipeline p(34, 30, [](Tensor B, Expr i) { return B(i) + B(i + 4); });
  Schedule s = create_schedule({p.C});
  auto [outer, inner] = s[p.C].split(p.C.axis(0), 6);
  s[p.B].compute_at(s[p.C], outer);
  expect_range(bounds_of(s), p.B.axis(0), outer->var * 6, 10);
  expect_guards(s, p.B, 0, [](const auto&) { return true; });
}

TEST(BoundInferenceTest, StencilAtTheInnerLoopCoversOnePoint) {
  Pipeline p(34, 30, [](Tensor B, Expr i) { return B(i) + B(i + 2) + B(i + 4); });
  Schedule s = create_schedule({p.C});
  auto [outer, inner] = s[p.C].split(p.C.axis(0), 8);
  s[p.B].compute_at(s[p.C], inner);
  expect_range(bounds_of(s), p.B.axis(0), outer->var * 8 + inner->var, 5);
}

TEST(BoundInferenceTest, ReversedStridedAndUpsampledReads) {
  Pipeline reversed(32, 32, [](Tensor B, Expr i) { return B(31 - i); });
  Schedule s = create_schedule({reversed.C});
  auto [o1, i1] = s[reversed.C].split(reversed.C.axis(0), 8);
  s[reversed.B].compute_at(s[reversed.C], o1);
  expect_range(bounds_of(s), reversed.B.axis(0), 24 - o1->var * 8, 8);

  Pipeline strided(32, 16, [](Tensor B, Expr i) { return B(i * 2) + B(i * 2 + 1); });
  s = create_schedule({strided.C});
  auto [o2, i2] = s[strided.C].split(strided.C.axis(0), 4);
  s[strided.B].compute_at(s[strided.C], o2);
  expect_range(bounds_of(s), strided.B.axis(0), o2->var * 8, 8);

  Pipeline upsampled(16, 32, [](Tensor B, Expr i) { return B(floordiv(i, 2)); });
  s = create_schedule({upsampled.C});
  auto [o3, i3] = s[upsampled.C].split(upsampled.C.axis(0), 8);
  s[upsampled.B].compute_at(s[upsampled.C], o3);
  expect_range(bounds_of(s), upsampled.B.axis(0), o3->var * 4, 4);
}

TEST(BoundInferenceTest, ClampedReadsShrinkAtTheBorderTiles) {
  Pipeline p(32, 32, [](Tensor B, Expr i) { return B(max(i - 1, 0)) + B(min(i + 1, 31)); });
  Schedule s = create_schedule({p.C});
  auto [outer, inner] = s[p.C].split(p.C.axis(0), 8);
  s[p.B].compute_at(s[p.C], outer);
  Bounds b = bounds_of(s);
  expect_range_at(b, p.B.axis(0), {{outer, 0}}, 0, 9);
  expect_range_at(b, p.B.axis(0), {{outer, 1}}, 7, 10);
  expect_range_at(b, p.B.axis(0), {{outer, 2}}, 15, 10);
  expect_range_at(b, p.B.axis(0), {{outer, 3}}, 23, 9);
}

TEST(BoundInferenceTest, DataDependentReadKeepsTheWholeAxis) {
  Tensor index = placeholder({32}, DataType::i32(), "index");
  Pipeline p(34, 32, [&](Tensor B, Expr i) { return B(index(i)) + B(i + 2); });
  Schedule s = create_schedule({p.C});
  auto [outer, inner] = s[p.C].split(p.C.axis(0), 8);
  s[p.B].compute_at(s[p.C], outer);
  expect_range(bounds_of(s), p.B.axis(0), 0, 34);
  expect_guards(s, p.B, 0, [](const auto&) { return true; });
}

TEST(BoundInferenceTest, LoopsOutsideTheAttachPointAreFixedEvenWhenReordered) {
  Pipeline p(32, 32, [](Tensor B, Expr i) { return B(i); });
  Schedule s = create_schedule({p.C});
  auto [outer, inner] = s[p.C].split(p.C.axis(0), 8);
  s[p.C].reorder({inner, outer});
  s[p.B].compute_at(s[p.C], inner);
  // Only the outer loop is relaxed: every eighth element, whose hull is 25 wide.
  expect_range(bounds_of(s), p.B.axis(0), inner->var, 25);
}

// B = A * 2 over [18, 18]; C over [16, 16] reads B[i, j] and B[i + 2, j + 1] (or B[j, i]).
struct Stencil2d {
  Tensor A, B, C;
  explicit Stencil2d(bool transposed = false) {
    A = placeholder({18, 18}, DataType::f32(), "A");
    B = compute({18, 18}, [&](Expr i, Expr j) { return A(i, j) * 2.0f; }, "B");
    C = compute(
        {16, 16}, [&](Expr i, Expr j) { return transposed ? B(j, i) : B(i, j) + B(i + 2, j + 1); },
        "C");
  }
};

TEST(BoundInferenceTest, TileWithAStencilGivesEachAxisItsHalo) {
  Stencil2d p;
  Schedule s = create_schedule({p.C});
  auto [io, jo, ii, ji] = s[p.C].tile(p.C.axis(0), p.C.axis(1), 4, 4);
  s[p.B].compute_at(s[p.C], jo);
  Bounds b = bounds_of(s);
  expect_range(b, p.B.axis(0), io->var * 4, 6);
  expect_range(b, p.B.axis(1), jo->var * 4, 5);
  // The producer's own loops split and fused after compute_at start from the region's min.
  IterVar fused = s[p.B].fuse(p.B.axis(0), p.B.axis(1));
  auto [outer, inner] = s[p.B].split(fused, 8);
  b = bounds_of(s);
  expect_range(b, fused, 0, 30);
  expect_range(b, outer, 0, 4);
  // Two guards: the split's, and B's last row (18), which the split's implies but the analyzer,
  // proving one guard at a time, cannot see.
  expect_guards(s, p.B, 2, [](const auto& v) { return v[2] * 8 + v[3] < 30; });
}

TEST(BoundInferenceTest, TransposedReadSwapsTheRegions) {
  Stencil2d p(/*transposed=*/true);
  Schedule s = create_schedule({p.C});
  auto [io, jo, ii, ji] = s[p.C].tile(p.C.axis(0), p.C.axis(1), 4, 5);
  s[p.B].compute_at(s[p.C], jo);
  Bounds b = bounds_of(s);
  expect_range(b, p.B.axis(0), jo->var * 5, 5);
  expect_range(b, p.B.axis(1), io->var * 4, 4);
}

TEST(BoundInferenceTest, TileReorderedSoAnInnerLoopIsTheAttachPoint) {
  Stencil2d p;
  Schedule s = create_schedule({p.C});
  auto [io, jo, ii, ji] = s[p.C].tile(p.C.axis(0), p.C.axis(1), 4, 4);
  s[p.C].reorder({jo, ii, io, ji});
  s[p.B].compute_at(s[p.C], ii);
  Bounds b = bounds_of(s);
  // io (outside jo and ii in the original order) is now relaxed: rows ii, ii + 4, ... + 2.
  expect_range(b, p.B.axis(0), ii->var, 15);
  expect_range(b, p.B.axis(1), jo->var * 4, 5);
}

TEST(BoundInferenceTest, ComputeAtAFusedLoopDividesItBack) {
  Tensor A = placeholder({6, 5}, DataType::f32(), "A");
  Tensor B = compute({6, 5}, [&](Expr i, Expr j) { return A(i, j) + 1.0f; }, "B");
  Tensor C = compute({6, 5}, [&](Expr i, Expr j) { return B(i, j) * 2.0f; }, "C");
  Schedule s = create_schedule({C});
  IterVar fused = s[C].fuse(C.axis(0), C.axis(1));
  s[B].compute_at(s[C], fused);
  Bounds b = bounds_of(s);
  expect_range(b, B.axis(0), floordiv(fused->var, 5), 1);
  expect_range(b, B.axis(1), floormod(fused->var, 5), 1);

  // At the outer of a split of the fused loop a tile of 4 spans one or two rows.
  s = create_schedule({C});
  fused = s[C].fuse(C.axis(0), C.axis(1));
  auto [outer, inner] = s[C].split(fused, 4);
  s[B].compute_at(s[C], outer);
  b = bounds_of(s);
  expect_range_at(b, B.axis(0), {{outer, 0}}, 0, 1);
  expect_range_at(b, B.axis(0), {{outer, 1}}, 0, 2);
  expect_range_at(b, B.axis(0), {{outer, 4}}, 3, 1);
  expect_range_at(b, B.axis(0), {{outer, 7}}, 5, 2);  // the last tile, past row 5, is guarded
  for (int64_t o = 0; o < 8; ++o) expect_range_at(b, B.axis(1), {{outer, o}}, 0, 5);
}

// At a loop outside a fused loop split by a factor that does not divide it (6 x 5 positions in
// tiles of 4, the last one half past the map), the producer covers the map's 6 rows, not a 7th:
// the consumer's split guard skips the positions past 30.
TEST(BoundInferenceTest, AStageOutsideASplitFusedLoopCoversOnlyItsExtent) {
  Tensor A = placeholder({2, 6, 5}, DataType::f32(), "A");
  Tensor B = compute({2, 6, 5}, [&](Expr n, Expr i, Expr j) { return A(n, i, j) + 1.0f; }, "B");
  Tensor C = compute({2, 6, 5}, [&](Expr n, Expr i, Expr j) { return B(n, i, j) * 2.0f; }, "C");
  Schedule s = create_schedule({C});
  IterVar fused = s[C].fuse(C.axis(1), C.axis(2));
  s[C].split(fused, 4);
  s[B].compute_at(s[C], C.axis(0));
  Bounds b = bounds_of(s);
  expect_range(b, B.axis(1), 0, 6);
  expect_range(b, B.axis(2), 0, 5);
  expect_guards(s, C, 1, [](const std::vector<int64_t>& v) { return v[1] * 4 + v[2] < 30; });
}

// ---------------- reductions ----------------

TEST(BoundInferenceTest, ReduceAxisWithAnOffsetSplitsFromItsMin) {
  Tensor A = placeholder({8, 5}, DataType::f32(), "A");
  IterVar k = reduce_axis(2, 5, "k");
  Tensor C = compute({8}, [&](Expr i) { return sum(A(i, k), {k}); }, "C");
  Schedule s = create_schedule({C});
  auto [outer, inner] = s[C].split(k, 2);
  Bounds b = bounds_of(s);
  expect_range(b, k, 2, 3);
  expect_range(b, outer, 0, 2);
  expect_range(b, inner, 0, 2);
  expect_guards(s, C, 1, [](const auto& v) { return v[1] * 2 + v[2] < 3; });
}

TEST(BoundInferenceTest, ProducerAtASplitReduceLoop) {
  Tensor A = placeholder({16, 12}, DataType::f32(), "A");
  Tensor B = compute({16, 12}, [&](Expr i, Expr j) { return A(i, j) * 2.0f; }, "B");
  IterVar k = reduce_axis(0, 12, "k");
  Tensor C = compute({16}, [&](Expr i) { return sum(B(i, k), {k}); }, "C");
  Schedule s = create_schedule({C});
  auto [outer, inner] = s[C].split(k, 5);
  s[B].compute_at(s[C], outer);
  Bounds b = bounds_of(s);
  expect_range(b, B.axis(0), C.axis(0)->var, 1);
  expect_range(b, B.axis(1), outer->var * 5, 5);
  expect_guards(s, B, 1, [](const auto& v) { return v[1] * 5 + v[3] < 12; });
}

TEST(BoundInferenceTest, ReducingProducerKeepsItsWholeReduceAxis) {
  Tensor A = placeholder({20, 12}, DataType::f32(), "A");
  IterVar k = reduce_axis(0, 12, "k");
  Tensor B = compute({20}, [&](Expr i) { return sum(A(i, k), {k}); }, "B");
  Tensor C = compute({19}, [&](Expr i) { return B(i) + B(i + 1); }, "C");
  Schedule s = create_schedule({C});
  auto [outer, inner] = s[C].split(C.axis(0), 5);
  s[B].compute_at(s[C], outer);
  auto [k_outer, k_inner] = s[B].split(k, 5);
  Bounds b = bounds_of(s);
  expect_range(b, B.axis(0), outer->var * 5, 6);
  expect_range(b, k, 0, 12);
  expect_range(b, k_outer, 0, 3);
  // Loops: C's outer, then B's i, k.outer, k.inner.
  expect_guards(s, B, 2,
                [](const auto& v) { return v[0] * 5 + v[1] < 20 && v[2] * 5 + v[3] < 12; });
}

TEST(BoundInferenceTest, ConvolutionWindowAtTheTileAndAtTheReduceLoop) {
  Tensor A = placeholder({34}, DataType::f32(), "A");
  Tensor B = compute({34}, [&](Expr i) { return A(i) * 3.0f; }, "B");
  IterVar k = reduce_axis(0, 3, "k");
  Tensor C = compute({32}, [&](Expr i) { return sum(B(i + k), {k}); }, "C");
  Schedule s = create_schedule({C});
  auto [outer, inner] = s[C].split(C.axis(0), 8);
  s[B].compute_at(s[C], outer);
  expect_range(bounds_of(s), B.axis(0), outer->var * 8, 10);

  s = create_schedule({C});
  auto [outer2, inner2] = s[C].split(C.axis(0), 8);
  s[B].compute_at(s[C], k);
  expect_range(bounds_of(s), B.axis(0), outer2->var * 8 + inner2->var + k->var, 1);
}

// ---------------- chains, several consumers, inlining, cache stages ----------------

TEST(BoundInferenceTest, ChainOfAttachedStagesComposesTheRegions) {
  Tensor A = placeholder({40}, DataType::f32(), "A");
  Tensor B = compute({40}, [&](Expr i) { return A(i) + 1.0f; }, "B");
  Tensor C = compute({36}, [&](Expr i) { return B(i) + B(i + 4); }, "C");
  Tensor D = compute({32}, [&](Expr i) { return C(i) + C(i + 3); }, "D");
  Schedule s = create_schedule({D});
  auto [outer, inner] = s[D].split(D.axis(0), 8);
  s[C].compute_at(s[D], outer);
  s[B].compute_at(s[C], C.axis(0));
  Bounds b = bounds_of(s);
  expect_range(b, C.axis(0), outer->var * 8, 11);
  // C's loop var counts from its region's min.
  expect_range(b, B.axis(0), outer->var * 8 + C.axis(0)->var, 5);
}

TEST(BoundInferenceTest, ReadsThroughAnInlinedStageCount) {
  Tensor A = placeholder({40}, DataType::f32(), "A");
  Tensor B = compute({40}, [&](Expr i) { return A(i) + 1.0f; }, "B");
  Tensor M = compute({38}, [&](Expr i) { return B(i + 1) * 2.0f; }, "M");
  Tensor C = compute({32}, [&](Expr i) { return M(i) + M(i + 2); }, "C");
  Schedule s = create_schedule({C});
  s[M].compute_inline();
  auto [outer, inner] = s[C].split(C.axis(0), 8);
  s[B].compute_at(s[C], outer);
  auto [b_outer, b_inner] = s[B].split(B.axis(0), 4);
  Bounds b = bounds_of(s);
  EXPECT_EQ(b.count(M.axis(0).get()), 0u);
  expect_range(b, B.axis(0), outer->var * 8 + 1, 10);
  expect_range(b, b_outer, 0, 3);
  expect_range(b, b_inner, 0, 4);
}

TEST(BoundInferenceTest, RegionIsTheUnionOverEveryConsumer) {
  Tensor A = placeholder({40}, DataType::f32(), "A");
  Tensor B = compute({40}, [&](Expr i) { return A(i) + 1.0f; }, "B");
  Tensor C = compute({36}, [&](Expr i) { return B(i + 2) * 2.0f; }, "C");
  Tensor D = compute({32}, [&](Expr i) { return C(i + 1) + B(i); }, "D");
  for (bool c_at_inner : {false, true}) {
    SCOPED_TRACE(c_at_inner ? "C at D's inner loop" : "C at D's outer loop");
    Schedule s = create_schedule({D});
    auto [outer, inner] = s[D].split(D.axis(0), 8);
    s[C].compute_at(s[D], c_at_inner ? inner : outer);
    s[B].compute_at(s[D], outer);
    Bounds b = bounds_of(s);
    if (c_at_inner)
      expect_range(b, C.axis(0), outer->var * 8 + inner->var + 1, 1);
    else
      expect_range(b, C.axis(0), outer->var * 8 + 1, 8);
    // D reads B[8o, 8o + 7], C reads B[8o + 3, 8o + 10].
    expect_range(b, B.axis(0), outer->var * 8, 11);
  }
}

TEST(BoundInferenceTest, CacheReadAtTheOuterLoopCopiesOneTile) {
  Tensor A = placeholder({32}, DataType::f32(), "A");
  Tensor C = compute({32}, [&](Expr i) { return A(i) * 2.0f; }, "C");
  Schedule s = create_schedule({C});
  Tensor cached = s.cache_read(A, MemScope::kLocal, {C});
  auto [outer, inner] = s[C].split(C.axis(0), 8);
  s[cached].compute_at(s[C], outer);
  expect_range(bounds_of(s), s[cached].axis(0), outer->var * 8, 8);
}

TEST(BoundInferenceTest, CacheWriteAtTheOuterLoopComputesOneTile) {
  Tensor A = placeholder({16, 12}, DataType::f32(), "A");
  IterVar k = reduce_axis(0, 12, "k");
  Tensor C = compute({16}, [&](Expr i) { return sum(A(i, k), {k}); }, "C");
  Schedule s = create_schedule({C});
  Tensor local = s.cache_write(C, MemScope::kLocal);
  auto [outer, inner] = s[C].split(s[C].axis(0), 4);
  s[local].compute_at(s[C], outer);
  Bounds b = bounds_of(s);
  expect_range(b, s[local].axis(0), outer->var * 4, 4);
  expect_range(b, s[local].reduce_axis(0), 0, 12);
}

}  // namespace
}  // namespace tessel::te
