// Invalid schedules throw a ScheduleError naming the stage and the axis.
#include "te_test_util.h"
#include "tests/common/expect_error.h"

namespace tessel::te {
namespace {
using tessel::testing::expect_error;

struct Chain {
  Tensor A, B, C, D;
  IterVar k;
  Chain() {
    A = placeholder({16, 16}, DataType::f32(), "A");
    B = compute({16, 16}, [&](Expr i, Expr j) { return A(i, j) + 1.0f; }, "B");
    k = reduce_axis(0, 16, "k");
    C = compute({16}, [&](Expr i) { return sum(B(i, k), {k}); }, "C");
    D = compute({16}, [&](Expr i) { return A(i, i) * 2.0f; }, "D");
  }
};

TEST(ScheduleErrorTest, AxisNotALeaf) {
  Chain c;
  Schedule s = create_schedule({c.C, c.D});
  s[c.C].split(c.C.axis(0), 4);
  expect_error<ScheduleError>([&] { s[c.C].split(c.C.axis(0), 2); },
                              {"split", "stage 'C'", "axis 'i'", "already split", "i.outer"});
  expect_error<ScheduleError>([&] { s[c.C].vectorize(c.D.axis(0)); },
                              {"stage 'C'", "another stage"});
}

TEST(ScheduleErrorTest, ComputeAtNonConsumer) {
  Chain c;
  Schedule s = create_schedule({c.C, c.D});
  expect_error<ScheduleError>([&] { s[c.B].compute_at(s[c.D], c.D.axis(0)); },
                              {"compute_at", "stage 'B'", "'D' does not read 'B'", "consumers: C"});
}

// B is read by C alone, which is computed at D's outer tile loop: B may be computed at that loop
// (it then encloses C), not at one inside it.
TEST(ScheduleErrorTest, ComputeAtInsideTheLoopOfTheStageThatReadsIt) {
  Tensor A = placeholder({16, 16}, DataType::f32(), "A");
  Tensor B = compute({16, 16}, [&](Expr i, Expr j) { return A(i, j) + 1.0f; }, "B");
  Tensor C = compute({16, 16}, [&](Expr i, Expr j) { return B(i, j) * 2.0f; }, "C");
  Tensor D = compute({16, 16}, [&](Expr i, Expr j) { return C(i, j) - 3.0f; }, "D");
  Schedule s = create_schedule({D});
  auto [io, jo, ii, ji] = s[D].tile(D.axis(0), D.axis(1), 4, 4);
  s[C].compute_at(s[D], io);
  expect_error<ScheduleError>([&] { s[B].compute_at(s[D], jo); },
                              {"compute_at", "stage 'B'", "'D' does not read 'B'", "consumers: C"});
  s[B].compute_at(s[D], io);
}

TEST(ScheduleErrorTest, ComputeAtOfAnOutput) {
  Chain c;
  Schedule s = create_schedule({c.C, c.D});
  expect_error<ScheduleError>([&] { s[c.C].compute_at(s[c.C], c.C.axis(0)); },
                              {"stage 'C'", "output"});
}

TEST(ScheduleErrorTest, VectorizeOrParallelizeReductionAxis) {
  Chain c;
  Schedule s = create_schedule({c.C, c.D});
  expect_error<ScheduleError>([&] { s[c.C].vectorize(c.k); },
                              {"vectorize", "stage 'C'", "axis 'k'", "reduction"});
  expect_error<ScheduleError>([&] { s[c.C].parallel(c.k); },
                              {"parallel", "stage 'C'", "axis 'k'", "reduction"});
}

TEST(ScheduleErrorTest, FuseNonAdjacentOrMixed) {
  Tensor A = placeholder({4, 4, 4}, DataType::f32(), "A");
  Tensor B = compute({4, 4, 4}, [&](Expr i, Expr j, Expr l) { return A(i, j, l); }, "B");
  Schedule s = create_schedule({B});
  expect_error<ScheduleError>([&] { s[B].fuse(B.axis(0), B.axis(2)); },
                              {"fuse", "stage 'B'", "'i0' and 'i2'", "not adjacent"});
  expect_error<ScheduleError>([&] { s[B].fuse(B.axis(1), B.axis(0)); }, {"not adjacent"});
  Chain c;
  Schedule s2 = create_schedule({c.C});
  expect_error<ScheduleError>([&] { s2[c.C].fuse(c.C.axis(0), c.k); }, {"stage 'C'", "reduction"});
  // An int64 axis beside an int32 one.
  std::vector<PrimExpr> mixed = {PrimExpr(int64_t{4}), PrimExpr(4)};
  Tensor M = placeholder(mixed, DataType::f32(), "M");
  Tensor N = compute(mixed, [&](Expr i, Expr j) { return M(i, j); }, "N");
  Schedule s3 = create_schedule({N});
  expect_error<ScheduleError>([&] { s3[N].fuse(N.axis(0), N.axis(1)); },
                              {"stage 'N'", "(int64)", "(int32)", "different index types"});
}

TEST(ScheduleErrorTest, InlineReductionOrOutput) {
  Chain c;
  Tensor E = compute({16}, [&](Expr i) { return c.C(i) + 1.0f; }, "E");
  Schedule s = create_schedule({E});
  expect_error<ScheduleError>([&] { s[c.C].compute_inline(); },
                              {"compute_inline", "stage 'C'", "reduction"});
  expect_error<ScheduleError>([&] { s[E].compute_inline(); }, {"stage 'E'", "output"});
}

TEST(ScheduleErrorTest, BadFactorsAndReorders) {
  Chain c;
  Schedule s = create_schedule({c.C});
  expect_error<ScheduleError>([&] { s[c.C].split(c.C.axis(0), 0); },
                              {"stage 'C'", "axis 'i'", "positive"});
  expect_error<ScheduleError>([&] { s[c.C].reorder({c.k, c.k}); },
                              {"reorder", "axis 'k'", "twice"});
  expect_error<ScheduleError>([&] { s[c.C].bind(c.C.axis(0), "threadIdx.w"); },
                              {"bind", "threadIdx.w"});
  s[c.C].unroll(c.C.axis(0));
  expect_error<ScheduleError>([&] { s[c.C].vectorize(c.C.axis(0)); }, {"already unrolled"});
}

TEST(ScheduleErrorTest, BindOnCpuTargetIsAClearError) {
  Chain c;
  Schedule s = create_schedule({c.D});
  s[c.D].bind(c.D.axis(0), "threadIdx.x");
  expect_error([&] { build(s, {c.A, c.D}, Target::parse("llvm"), "f"); },
               {"stage 'D'", "axis 'i'", "threadIdx.x", "CPU"});
}

TEST(ScheduleErrorTest, MissingArgumentsAreNamed) {
  Chain c;
  Schedule s = create_schedule({c.C});
  expect_error([&] { lower(s, {c.C}, "f"); }, {"tensor 'A' is read by stage 'B'"});
  expect_error([&] { lower(s, {c.A}, "f"); }, {"output 'C'"});
}

TEST(ScheduleErrorTest, ComputeAtAxisSplitAfterwards) {
  Tensor A = placeholder({16}, DataType::f32(), "A");
  Tensor B = compute({16}, [&](Expr i) { return A(i) + 1.0f; }, "B");
  Tensor C = compute({16}, [&](Expr i) { return B(i) * 2.0f; }, "C");
  Schedule s = create_schedule({C});
  s[B].compute_at(s[C], C.axis(0));
  s[C].split(C.axis(0), 4);
  expect_error<ScheduleError>([&] { lower(s, {A, C}, "f"); }, {"no longer a leaf"});
}

TEST(OperationErrorTest, BadComputeDefinitions) {
  Tensor A = placeholder({4, 4}, DataType::f32(), "A");
  expect_error([&] { A(1); }, {"tensor 'A' has 2 dimensions but is indexed with 1"});
  IterVar k = reduce_axis(0, 4, "k");
  expect_error([&] { compute({4}, [&](Expr i) { return sum(A(i, k), {k}) + 1.0f; }, "X"); },
               {"compute 'X'"});
  expect_error([&] { placeholder({-3}, DataType::f32(), "P"); }, {"'P'"});
}

}  // namespace
}  // namespace tessel::te
