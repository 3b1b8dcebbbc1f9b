// Index-driven graph ops lowered through topi (topi/compute_index.cc, topi/compute_einsum.cc):
// scatters with every reduction, duplicate and negative indices, GatherND with batch dims,
// EyeLike, ReverseSequence and Einsum equations, compiled and checked against the reference.
#include <gtest/gtest.h>

#include "lowering_test_util.h"

namespace tessel::topi {
namespace {

using namespace testing;  // NOLINT

TEST(ComputeIndexTest, ScatterElementsReductionsAndNegativeIndices) {
  OpGraph m;
  auto x = m.input("x", random_data(DataType::f32(), {3, 4}, 1));
  auto xi = m.input("xi", random_data(DataType::i64(), {3, 4}, 2, -9, 9));
  // Row 0 hits column 1 twice (once as -3): duplicates combine in order, the last "none" wins.
  auto idx = m.input("idx", make_tensor<int64_t>(DataType::i64(), {2, 3}, {1, -3, 3, 0, -1, 0}));
  auto upd = m.input("upd", random_data(DataType::f32(), {2, 3}, 3));
  auto updi = m.input("updi", random_data(DataType::i64(), {2, 3}, 4, -9, 9));
  for (const char* r : {"none", "add", "mul", "max", "min"}) {
    std::string s = r;
    m.op("axis1_" + s, "ScatterElements", {x, idx, upd},
         {{"axis", int_attr(1)}, {"reduction", str_attr(s)}});
    m.op("int_" + s, "ScatterElements", {xi, idx, updi},
         {{"axis", int_attr(-1)}, {"reduction", str_attr(s)}});
  }
  // Along axis 0: indices smaller than the data in the other dim too.
  auto idx0 = m.input("idx0", make_tensor<int64_t>(DataType::i64(), {2, 3}, {2, 0, -1, 2, 1, 0}));
  m.op("axis0", "ScatterElements", {x, idx0, upd});
  m.op("axis0_add", "ScatterElements", {x, idx0, upd}, {{"reduction", str_attr("add")}});
  m.check();
}

TEST(ComputeIndexTest, DeprecatedScatterIsScatterElements) {
  OpGraph m;
  auto x = m.input("x", random_data(DataType::f32(), {2, 3, 4}, 5));
  auto idx = m.input("idx", random_data(DataType::i32(), {2, 3, 2}, 6, -4, 3));
  auto upd = m.input("upd", random_data(DataType::f32(), {2, 3, 2}, 7));
  m.op("scatter_last", "Scatter", {x, idx, upd}, {{"axis", int_attr(2)}});
  auto idx1 = m.input("idx1", random_data(DataType::i64(), {2, 2, 4}, 8, -3, 2));
  auto upd1 = m.input("upd1", random_data(DataType::f32(), {2, 2, 4}, 9));
  m.op("scatter_mid", "Scatter", {x, idx1, upd1}, {{"axis", int_attr(1)}});
  m.check();
}

TEST(ComputeIndexTest, ScatterNDSlicesElementsAndReductions) {
  OpGraph m;
  auto x = m.input("x", random_data(DataType::f32(), {4, 3, 2}, 10));
  // Whole [3, 2] slices; tuple 0 and 2 both hit row 1 (once as -3).
  auto rows = m.input("rows", make_tensor<int64_t>(DataType::i64(), {3, 1}, {1, 3, -3}));
  auto row_upd = m.input("row_upd", random_data(DataType::f32(), {3, 3, 2}, 11));
  // Single elements, from a [2, 2] grid of tuples.
  auto elems = m.input("elems", make_tensor<int64_t>(DataType::i64(), {2, 2, 3},
                                                     {0, 0, 0, 3, 2, 1, -1, -1, -1, 2, 1, 0}));
  auto elem_upd = m.input("elem_upd", random_data(DataType::f32(), {2, 2}, 12));
  // One tuple (indices of rank 1) addressing a [2] row.
  auto one = m.input("one", make_tensor<int64_t>(DataType::i64(), {2}, {2, -1}));
  auto one_upd = m.input("one_upd", random_data(DataType::f32(), {2}, 13));
  for (const char* r : {"none", "add", "mul", "max", "min"}) {
    m.op(std::string("rows_") + r, "ScatterND", {x, rows, row_upd}, {{"reduction", str_attr(r)}});
    m.op(std::string("elems_") + r, "ScatterND", {x, elems, elem_upd},
         {{"reduction", str_attr(r)}});
  }
  m.op("one", "ScatterND", {x, one, one_upd});
  auto none = m.input("none", random_data(DataType::i64(), {0, 1}, 16));
  m.op("no_updates", "ScatterND",
       {x, none, m.input("none_upd", random_data(DataType::f32(), {0, 3, 2}, 17))},
       {{"reduction", str_attr("mul")}});
  auto xi = m.input("xi", random_data(DataType::i32(), {5}, 14, -9, 9));
  auto idx_i = m.input("idx_i", make_tensor<int64_t>(DataType::i64(), {3, 1}, {4, 0, 4}));
  auto upd_i = m.input("upd_i", random_data(DataType::i32(), {3}, 15, -9, 9));
  m.op("int_add", "ScatterND", {xi, idx_i, upd_i}, {{"reduction", str_attr("add")}});
  m.op("int_none", "ScatterND", {xi, idx_i, upd_i});
  m.check();
}

TEST(ComputeIndexTest, UnknownScatterReductionIsRejected) {
  OpGraph m;
  auto x = m.input("x", random_data(DataType::f32(), {3}, 16));
  auto idx = m.input("idx", make_tensor<int64_t>(DataType::i64(), {1, 1}, {0}));
  auto upd = m.input("upd", random_data(DataType::f32(), {1}, 17));
  m.op("bad", "ScatterND", {x, idx, upd}, {{"reduction", str_attr("avg")}});
  expect_compile_error(m.b.g, "unsupported reduction 'avg'");
}

TEST(ComputeIndexTest, GatherNDWithBatchDims) {
  OpGraph m;
  auto x = m.input("x", random_data(DataType::f32(), {3, 4, 2}, 18));
  auto xi = m.input("xi", random_data(DataType::i32(), {2, 2}, 19, -99, 99));
  auto full = m.input("full", make_tensor<int64_t>(DataType::i64(), {2, 3}, {0, 1, 1, -1, -1, 0}));
  auto rows = m.input("rows", make_tensor<int64_t>(DataType::i64(), {2, 2, 1}, {2, 0, -1, 1}));
  auto pairs = m.input("pairs", make_tensor<int64_t>(DataType::i64(), {2, 2}, {0, 1, 1, 0}));
  auto batch =
      m.input("batch", make_tensor<int64_t>(DataType::i64(), {3, 2, 1}, {3, 0, -1, 2, 1, 1}));
  auto batch_full =
      m.input("batch_full", make_tensor<int64_t>(DataType::i64(), {3, 2}, {0, 1, 3, 0, -4, -1}));
  m.op("elements", "GatherND", {x, full});
  m.op("slices", "GatherND", {x, rows});
  m.op("int32", "GatherND", {xi, pairs});
  m.op("batch1", "GatherND", {x, batch}, {{"batch_dims", int_attr(1)}});
  m.op("batch1_full", "GatherND", {x, batch_full}, {{"batch_dims", int_attr(1)}});
  m.check();
}

TEST(ComputeIndexTest, EyeLikeDiagonalsAndDtypes) {
  OpGraph m;
  auto x = m.input("x", random_data(DataType::f32(), {3, 5}, 20));
  auto xi = m.input("xi", random_data(DataType::i32(), {4, 4}, 21, -9, 9));
  m.op("main", "EyeLike", {x});
  m.op("above", "EyeLike", {x}, {{"k", int_attr(2)}});
  m.op("below_f64", "EyeLike", {x}, {{"k", int_attr(-1)}, {"dtype", int_attr(11)}});
  m.op("int", "EyeLike", {xi}, {{"k", int_attr(1)}});
  m.op("int_to_i64", "EyeLike", {xi}, {{"dtype", int_attr(7)}});
  m.check();
}

TEST(ComputeIndexTest, ReverseSequenceAlongEitherAxis) {
  OpGraph m;
  auto x = m.input("x", random_data(DataType::f32(), {4, 3, 2}, 22));
  auto lens = m.input("lens", make_tensor<int64_t>(DataType::i64(), {3}, {4, 1, 2}));
  auto xt = m.input("xt", random_data(DataType::i64(), {3, 5}, 23, -9, 9));
  auto lens_t = m.input("lens_t", make_tensor<int64_t>(DataType::i64(), {3}, {0, 5, 3}));
  m.op("time_major", "ReverseSequence", {x, lens});
  m.op("batch_major", "ReverseSequence", {xt, lens_t},
       {{"batch_axis", int_attr(0)}, {"time_axis", int_attr(1)}});
  m.check();
}

TEST(ComputeIndexTest, EinsumEquations) {
  OpGraph m;
  auto a = m.input("a", random_data(DataType::f32(), {3, 4}, 24));
  auto b = m.input("b", random_data(DataType::f32(), {4, 5}, 25));
  auto ba = m.input("ba", random_data(DataType::f32(), {2, 3, 4}, 26));
  auto bb = m.input("bb", random_data(DataType::f32(), {2, 4, 5}, 27));
  auto sq = m.input("sq", random_data(DataType::f32(), {2, 3, 3}, 28));
  auto v = m.input("v", random_data(DataType::f32(), {4}, 29));
  auto one = m.input("one", random_data(DataType::f32(), {1, 4, 5}, 30));
  auto ai = m.input("ai", random_data(DataType::i64(), {3, 4}, 31, -5, 5));
  auto einsum = [&](const std::string& name, std::vector<ValueId> in, const std::string& eq) {
    m.op(name, "Einsum", std::move(in), {{"equation", str_attr(eq)}});
  };
  einsum("matmul", {a, b}, "ij,jk->ik");
  einsum("matmul_implicit", {a, b}, "ij,jk");
  einsum("batch_matmul", {ba, bb}, "bij,bjk->bik");
  einsum("transpose", {ba}, "ijk->kji");
  einsum("sum_axis", {a}, "ij->i");
  einsum("sum_all", {a}, "ij->");
  einsum("inner", {v, v}, "i,i");
  einsum("outer", {v, v}, "i,j->ij");
  einsum("batch_diagonal", {sq}, "...ii->...i");
  einsum("trace", {sq}, "bii->b");
  einsum("ellipsis_matmul", {ba, bb}, "...ij,...jk->...ik");
  einsum("broadcast_batch", {ba, one}, "...ij,...jk->...ik");
  einsum("three_operands", {a, b, v}, "ij,jk,j->ik");
  einsum("int_matvec", {ai, m.input("vi", random_data(DataType::i64(), {4}, 32, -5, 5))},
         "ij,j->i");
  m.check();
}

}  // namespace
}  // namespace tessel::topi
