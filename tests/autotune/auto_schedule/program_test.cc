// Programs of the auto-scheduler: random completions of every sketch and their mutations are
// valid schedules that compute the right numbers (against naive loops), and a program's trace
// replays to the same loops.
#include "autotune/auto_schedule/program.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <regex>

#include "codegen/build.h"
#include "ir/printer.h"
#include "te/lower.h"
#include "tests/common/compare.h"
#include "tests/common/ndarray.h"
#include "tests/common/text.h"

namespace tessel::autotune {
namespace {

using te::Expr;
using te::Tensor;

CpuModel host() { return CpuModel::of(Target::parse("llvm -mcpu=native")); }

// Builds `s` and runs it on `arrays` (the DAG's args, in order).
void run(const ComputeDAG& dag, const te::Schedule& s,
         const std::vector<runtime::NDArray>& arrays) {
  runtime::Module m = build(s, dag.args(), Target::parse("llvm -mcpu=native"), "f");
  std::vector<runtime::Arg> call(arrays.begin(), arrays.end());
  m.get_function("f").call(call);
}

// A task with inputs and the output naive loops computed for them.
struct Case {
  std::string name;
  std::vector<Tensor> args;  // inputs, then the output
  std::vector<runtime::NDArray> inputs;
  std::vector<float> want;
};

Case matmul_relu(int64_t m, int64_t n, int64_t k) {
  Tensor A = te::placeholder({m, k}, DataType::f32(), "A");
  Tensor B = te::placeholder({k, n}, DataType::f32(), "B");
  te::IterVar r = te::reduce_axis(0, k, "k");
  Tensor C =
      te::compute({m, n}, [&](Expr i, Expr j) { return te::sum(A(i, r) * B(r, j), {r}); }, "C");
  Tensor out = te::compute({m, n}, [&](Expr i, Expr j) { return te::max(C(i, j), 0.0f); }, "relu");
  Case c{"matmul_relu",
         {A, B, out},
         {testing::random_array({m, k}), testing::random_array({k, n})},
         {}};
  const float *a = c.inputs[0].data<float>(), *b = c.inputs[1].data<float>();
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double acc = 0;
      for (int64_t x = 0; x < k; ++x) acc += double(a[i * k + x]) * b[x * n + j];
      c.want.push_back(static_cast<float>(std::max(acc, 0.0)));
    }
  return c;
}

Case matmul(int64_t m, int64_t n, int64_t k) {
  Case c = matmul_relu(m, n, k);
  const Tensor& relu = c.args[2];
  Tensor C(te::input_ops(relu.op())[0]);
  c.args[2] = C;
  c.want.clear();
  const float *a = c.inputs[0].data<float>(), *b = c.inputs[1].data<float>();
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double acc = 0;
      for (int64_t x = 0; x < k; ++x) acc += double(a[i * k + x]) * b[x * n + j];
      c.want.push_back(static_cast<float>(acc));
    }
  return c;
}

// Softmax over the last axis of [lead..., cols].
Case softmax(std::vector<int64_t> lead, int64_t cols) {
  std::vector<PrimExpr> rows_shape, shape;
  int64_t rows = 1;
  for (int64_t d : lead) rows_shape.push_back(d), rows *= d;
  shape = rows_shape;
  shape.push_back(cols);
  std::vector<int64_t> dims(lead);
  dims.push_back(cols);
  Tensor X = te::placeholder(shape, DataType::f32(), "X");
  te::IterVar k1 = te::reduce_axis(0, cols, "k1"), k2 = te::reduce_axis(0, cols, "k2");
  auto at = [](const std::vector<Var>& i, PrimExpr last) {
    std::vector<PrimExpr> v(i.begin(), i.end());
    v.push_back(std::move(last));
    return v;
  };
  auto row = [](const std::vector<Var>& i) {
    return std::vector<PrimExpr>(i.begin(), i.end() - 1);
  };
  auto all = [](const std::vector<Var>& i) { return std::vector<PrimExpr>(i.begin(), i.end()); };
  Tensor mx = te::compute(
      rows_shape, [&](const std::vector<Var>& i) { return te::max(X(at(i, k1)), {k1}); }, "mx");
  Tensor e = te::compute(
      shape, [&](const std::vector<Var>& i) { return exp(X(all(i)) - mx(row(i))); }, "e");
  Tensor s = te::compute(
      rows_shape, [&](const std::vector<Var>& i) { return te::sum(e(at(i, k2)), {k2}); }, "s");
  Tensor Y =
      te::compute(shape, [&](const std::vector<Var>& i) { return e(all(i)) / s(row(i)); }, "Y");
  Case c{"softmax", {X, Y}, {testing::random_array(dims)}, {}};
  const float* x = c.inputs[0].data<float>();
  for (int64_t i = 0; i < rows; ++i) {
    double m = -INFINITY, sum = 0;
    for (int64_t j = 0; j < cols; ++j) m = std::max(m, double(x[i * cols + j]));
    for (int64_t j = 0; j < cols; ++j) sum += std::exp(x[i * cols + j] - m);
    for (int64_t j = 0; j < cols; ++j)
      c.want.push_back(static_cast<float>(std::exp(x[i * cols + j] - m) / sum));
  }
  return c;
}
Case softmax(int64_t rows, int64_t cols) { return softmax(std::vector<int64_t>{rows}, cols); }

// ConvNCHWc's shape on a matmul: blocks of `block` output columns, unpacked with a bias.
Case blocked_matmul(int64_t m, int64_t n, int64_t k, int64_t block) {
  Tensor A = te::placeholder({m, k}, DataType::f32(), "A");
  Tensor W = te::placeholder({n / block, k, block}, DataType::f32(), "W");
  Tensor bias = te::placeholder({n}, DataType::f32(), "bias");
  te::IterVar r = te::reduce_axis(0, k, "k");
  Tensor Cb = te::compute(
      {m, n / block, block},
      [&](Expr i, Expr jb, Expr jj) { return te::sum(A(i, r) * W(jb, r, jj), {r}); }, "Cb");
  Tensor out = te::compute(
      {m, n}, [&](Expr i, Expr j) { return Cb(i, j / block, j % block) + bias(j); }, "out");
  Case c{"blocked_matmul",
         {A, W, bias, out},
         {testing::random_array({m, k}), testing::random_array({n / block, k, block}),
          testing::random_array({n})},
         {}};
  const float *a = c.inputs[0].data<float>(), *w = c.inputs[1].data<float>(),
              *b = c.inputs[2].data<float>();
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double acc = b[j];
      for (int64_t x = 0; x < k; ++x)
        acc += double(a[i * k + x]) * w[((j / block) * k + x) * block + j % block];
      c.want.push_back(static_cast<float>(acc));
    }
  return c;
}

// A 3x3 conv over a zero-padded input (the padding a stage of its own, as topi's convs have it),
// `width` columns: the padding may be inlined or computed once, and a width that no whole
// vectors divide takes ragged register tiles.
Case padded_conv(int64_t channels, int64_t out_channels, int64_t height, int64_t width) {
  Tensor X = te::placeholder({channels, height, width}, DataType::f32(), "X");
  Tensor W = te::placeholder({out_channels, channels, 3, 3}, DataType::f32(), "W");
  Tensor pad = te::compute(
      {channels, height + 2, width + 2},
      [&](Expr c, Expr y, Expr x) {
        return if_then_else(y >= 1 && y <= height && x >= 1 && x <= width, X(c, y - 1, x - 1),
                            0.0f);
      },
      "pad");
  te::IterVar rc = te::reduce_axis(0, channels, "rc"), ky = te::reduce_axis(0, 3, "ky"),
              kx = te::reduce_axis(0, 3, "kx");
  Tensor conv = te::compute(
      {out_channels, height, width},
      [&](Expr m, Expr y, Expr x) {
        return te::sum(pad(rc, y + ky, x + kx) * W(m, rc, ky, kx), {rc, ky, kx});
      },
      "conv");
  Case c{"padded_conv",
         {X, W, conv},
         {testing::random_array({channels, height, width}),
          testing::random_array({out_channels, channels, 3, 3})},
         {}};
  const float *x = c.inputs[0].data<float>(), *w = c.inputs[1].data<float>();
  for (int64_t m = 0; m < out_channels; ++m)
    for (int64_t y = 0; y < height; ++y)
      for (int64_t col = 0; col < width; ++col) {
        double acc = 0;
        for (int64_t ch = 0; ch < channels; ++ch)
          for (int64_t dy = 0; dy < 3; ++dy)
            for (int64_t dx = 0; dx < 3; ++dx) {
              int64_t iy = y + dy - 1, ix = col + dx - 1;
              if (iy < 0 || iy >= height || ix < 0 || ix >= width) continue;
              acc += double(x[(ch * height + iy) * width + ix]) *
                     w[((m * channels + ch) * 3 + dy) * 3 + dx];
            }
        c.want.push_back(static_cast<float>(acc));
      }
  return c;
}

// A matmul over a transform of its input (pairs of A's columns summed, as Winograd's GEMM reads
// transformed tiles): the transform computed once at root, or at a loop of the output.
Case transform_matmul(int64_t m, int64_t n, int64_t k) {
  Tensor A = te::placeholder({m, 2 * k}, DataType::f32(), "A");
  Tensor B = te::placeholder({k, n}, DataType::f32(), "B");
  Tensor T =
      te::compute({m, k}, [&](Expr i, Expr x) { return A(i, x * 2) + A(i, x * 2 + 1); }, "T");
  te::IterVar r = te::reduce_axis(0, k, "k");
  Tensor C =
      te::compute({m, n}, [&](Expr i, Expr j) { return te::sum(T(i, r) * B(r, j), {r}); }, "C");
  Case c{"transform_matmul",
         {A, B, C},
         {testing::random_array({m, 2 * k}), testing::random_array({k, n})},
         {}};
  const float *a = c.inputs[0].data<float>(), *b = c.inputs[1].data<float>();
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double acc = 0;
      for (int64_t x = 0; x < k; ++x)
        acc += (double(a[i * 2 * k + 2 * x]) + a[i * 2 * k + 2 * x + 1]) * b[x * n + j];
      c.want.push_back(static_cast<float>(acc));
    }
  return c;
}

ComputeDAG dag_of(const Case& c) { return ComputeDAG({c.args.back()}, c.args, host()); }

std::string lowered(const ComputeDAG& dag, const te::Schedule& s) {
  return to_string(te::lower(s, dag.args(), "f"));
}

void expect_correct(const Case& c, const ComputeDAG& dag, const te::Schedule& s,
                    const std::string& what) {
  std::vector<runtime::NDArray> arrays = c.inputs;
  std::vector<int64_t> shape;
  for (const PrimExpr& d : c.args.back().shape()) shape.push_back(*as_const_int(d));
  arrays.push_back(testing::zeros(shape));
  run(dag, s, arrays);
  testing::expect_all_close(testing::values_of(arrays.back()), {c.want.begin(), c.want.end()},
                            {1e-4, 1e-4}, what);
}

// The tasks by name (the test's parameter, so that test names stay readable and stable).
Case task_case(const std::string& name) {
  if (name == "matmul_relu") return matmul_relu(48, 64, 40);
  if (name == "matmul") return matmul(30, 64, 24);
  if (name == "blocked_matmul") return blocked_matmul(12, 48, 20, 16);
  if (name == "ragged_matmul") return matmul_relu(20, 36, 24);  // 36: no whole vectors divide it
  if (name == "padded_conv") return padded_conv(3, 8, 6, 20);
  if (name == "transform_matmul") return transform_matmul(24, 32, 20);
  return softmax(6, 128);
}

class ProgramTest : public ::testing::TestWithParam<std::string> {};

// Neither sampling nor mutation makes a stage with spatial loops at root serial (a mutation
// redraws how many outer loops the parallel loop fuses, from one to all).
void expect_stages_at_root_parallel(const ComputeDAG& dag, const Sketch& sketch, const Program& p,
                                    const std::string& what) {
  if (sketch.schedule_template) return;
  for (size_t i = 0; i < dag.stages().size(); ++i) {
    SketchRule rule = sketch.plans[i].rule;
    bool at_root = rule == SketchRule::kRoot || rule == SketchRule::kTile ||
                   rule == SketchRule::kConsumer || rule == SketchRule::kCacheWrite ||
                   rule == SketchRule::kRfactor;
    const StageFacts& f = dag.stages()[i];
    if (f.placeholder || !at_root || f.spatial.empty() || p.stages[i].compute_at > 0) continue;
    EXPECT_GT(p.stages[i].parallel, 0) << what << ": stage " << f.name << " is serial";
  }
}

// Random programs of every sketch compute the right numbers, and their traces replay exactly.
TEST_P(ProgramTest, SampledProgramsAreCorrectAndReplay) {
  Case c = task_case(GetParam());
  ComputeDAG dag = dag_of(c);
  std::vector<Sketch> sketches = generate_sketches(dag);
  std::mt19937_64 rng(7);
  for (size_t k = 0; k < sketches.size(); ++k) {
    for (int n = 0; n < 4; ++n) {
      Program p = sample_program(dag, sketches, k, rng);
      std::string what = c.name + " " + p.str(dag);
      expect_stages_at_root_parallel(dag, sketches[k], p, what);
      te::Schedule s = apply(dag, sketches[k], p);
      expect_correct(c, dag, s, what);
      te::Schedule replayed = dag.schedule();
      replayed.replay(te::Trace::parse(s.trace().str()));
      std::string text = lowered(dag, s);
      EXPECT_EQ(lowered(dag, replayed), text) << what;
      // A parallel loop of one iteration runs serially: the loops are fused until it has two.
      EXPECT_FALSE(
          std::regex_search(text, std::regex(R"(parallel for \([^,]+, 0(_int64)?, 1(_int64)?\))")))
          << what << ":\n"
          << text;
    }
  }
}

// Mutations keep a program valid: every mutant applies and stays parallel, and a sample of them is
// still correct.
TEST_P(ProgramTest, MutationsKeepProgramsValid) {
  Case c = task_case(GetParam());
  ComputeDAG dag = dag_of(c);
  std::vector<Sketch> sketches = generate_sketches(dag);
  std::mt19937_64 rng(11);
  const std::vector<double> weights = {0.6, 0.1, 0.1, 0.1, 0.1};
  for (size_t k = 0; k < sketches.size(); ++k) {
    Program p = sample_program(dag, sketches, k, rng);
    for (int n = 0; n < 30; ++n) {
      Mutation kind;
      p = mutate(dag, sketches, p, weights, rng, &kind);
      std::string what = c.name + " after a " + mutation_name(kind) + " mutation: " + p.str(dag);
      expect_stages_at_root_parallel(dag, sketches[k], p, what);
      te::Schedule s = apply(dag, sketches[k], p);
      if (n % 10 == 9) expect_correct(c, dag, s, what);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Tasks, ProgramTest,
                         ::testing::Values("matmul_relu", "matmul", "blocked_matmul",
                                           "ragged_matmul", "padded_conv", "transform_matmul",
                                           "softmax"),
                         [](const auto& info) { return info.param; });

// A parallel depth of one over an outer loop of one iteration (a tile's level 0 that holds its
// whole axis, as a batch-1 conv's N axis is) fuses the next loop too, so the parallel loop runs
// more than once, and the numbers stay right.
TEST(ParallelLoopTest, FusesPastLoopsOfOneIteration) {
  Case c = task_case("matmul");  // C: 30 x 64
  ComputeDAG dag = dag_of(c);
  std::vector<Sketch> sketches = generate_sketches(dag);
  size_t out = dag.stages().size() - 1;
  ASSERT_EQ(dag.stages()[out].name, "C");
  std::mt19937_64 rng(23);
  int tested = 0;
  for (size_t k = 0; k < sketches.size(); ++k) {
    if (sketches[k].plans[out].rule != SketchRule::kTile) continue;
    Program p = sample_program(dag, sketches, k, rng);
    p.stages[out].parallel = 1;
    p.stages[out].tiles[0] = {30, 1, 1};  // rows: level 0 of one iteration, level 1 of 30
    p.stages[out].tiles[1] = {1, 4, 16};  // columns: levels 0 and 1 of one iteration each
    std::string what = p.str(dag);
    te::Schedule s = apply(dag, sketches[k], p);
    std::string text = lowered(dag, s);
    EXPECT_TRUE(
        std::regex_search(text, std::regex(R"(parallel for \([^,]+, 0(_int64)?, 30(_int64)?\))")))
        << what << ":\n"
        << text;
    EXPECT_FALSE(
        std::regex_search(text, std::regex(R"(parallel for \([^,]+, 0(_int64)?, 1(_int64)?\))")))
        << what << ":\n"
        << text;
    expect_correct(c, dag, s, what);
    ++tested;
  }
  EXPECT_GT(tested, 0);
}

// Softmax's statistics may be computed per row of the output (a compute location), and such
// programs compute the right numbers; readers never sit at root below a producer moved inside.
TEST(ComputeLocationTest, SoftmaxStatisticsMayBeComputedPerRow) {
  Case c = softmax(6, 128);
  ComputeDAG dag = dag_of(c);
  std::vector<Sketch> sketches = generate_sketches(dag);
  std::mt19937_64 rng(13);
  int located = 0;
  for (int n = 0; n < 60 && located < 4; ++n) {
    Program p = sample_program(dag, sketches, static_cast<size_t>(n) % sketches.size(), rng);
    // Stages: X, mx, e, s, Y; e reads mx, s reads e, Y reads e and s.
    EXPECT_LE(p.stages[1].compute_at, p.stages[2].compute_at) << p.str(dag);
    EXPECT_LE(p.stages[2].compute_at, p.stages[3].compute_at) << p.str(dag);
    if (p.stages[1].compute_at == 0) continue;
    ++located;
    expect_correct(c, dag, apply(dag, sketches[p.sketch], p), p.str(dag));
  }
  EXPECT_EQ(located, 4);
}

// The output's rows in blocks: the statistics computed at the loop over the blocks compute a
// block's rows, their vector partials reducing each vector of every row in turn (the rows' loop
// inside the loop over a row's vectors); the numbers stay right. Over [6, 128] the parallel loop
// fuses the loop over the blocks; over [2, 6, 128] with a parallel depth of 1 it does not.
TEST(ComputeLocationTest, StatisticsOfABlockOfRowsReduceEachVectorInTurn) {
  for (const std::vector<int64_t>& lead : {std::vector<int64_t>{6}, std::vector<int64_t>{2, 6}}) {
    Case c = softmax(lead, 128);
    ComputeDAG dag = dag_of(c);
    std::vector<Sketch> sketches = generate_sketches(dag);
    size_t out = dag.output_stage();
    auto factored = [&](const Sketch& sk) {
      return sk.plans[1].rule == SketchRule::kRfactor && sk.plans[3].rule == SketchRule::kRfactor;
    };
    auto sk = std::find_if(sketches.begin(), sketches.end(), factored);
    ASSERT_NE(sk, sketches.end());
    std::mt19937_64 rng(29);
    Program p = sample_program(dag, sketches, static_cast<size_t>(sk - sketches.begin()), rng);
    int row_location = static_cast<int>(lead.size());
    p.stages[out].rows = 2;
    p.stages[out].parallel = 1;
    for (size_t i : {1, 2, 3}) p.stages[i].compute_at = row_location;  // mx, e, s: per row
    for (StageParams& sp : p.stages) sp.unroll = 0;                    // loops to look at
    p.stages[1].vectorize = p.stages[3].vectorize = true;
    std::string what = p.str(dag);
    EXPECT_NE(what.find("rows 2"), std::string::npos) << what;
    te::Schedule s = apply(dag, *sk, p);
    std::string text = lowered(dag, s);
    // The first partials of both statistics: a loop over the row's vectors around the block's rows.
    for (const char* k : {"k1", "k2"}) {
      EXPECT_TRUE(std::regex_search(
          text, std::regex(fmt::format(
                    R"(for \({}\.outer, 0\w*, \d+\w*\) \{{\s*for \(\w+[^,]*, 0\w*, 2\w*\))", k))))
          << what << ":\n"
          << text;
    }
    expect_correct(c, dag, s, what);
    // Blocks must divide the rows into two or more.
    for (int64_t rows : {3, 4, 6}) {
      p.stages[out].rows = rows;
      EXPECT_THROW(apply(dag, *sk, p), Error) << rows;
    }
  }
}

// Sampled and mutated programs block the output's rows only where a stage is computed per row.
TEST(ComputeLocationTest, RowsInBlocksOnlyWithAStagePerRow) {
  Case c = softmax(8, 128);
  ComputeDAG dag = dag_of(c);
  std::vector<Sketch> sketches = generate_sketches(dag);
  size_t out = dag.output_stage();
  std::mt19937_64 rng(31);
  const std::vector<double> weights = {0.6, 0.1, 0.1, 0.1, 0.1};
  int blocked = 0;
  for (int n = 0; n < 200; ++n) {
    Program p = sample_program(dag, sketches, static_cast<size_t>(n) % sketches.size(), rng);
    for (int m = 0; m < 3; ++m) p = mutate(dag, sketches, p, weights, rng);
    auto per_row = [](const StageParams& sp) { return sp.compute_at == 1; };
    if (p.stages[out].rows == 0) continue;
    ++blocked;
    EXPECT_TRUE(std::any_of(p.stages.begin(), p.stages.end(), per_row)) << p.str(dag);
    EXPECT_TRUE(p.stages[out].rows == 2 || p.stages[out].rows == 4) << p.str(dag);
  }
  EXPECT_GT(blocked, 10);
}

// Vectorized rfactor partials reduce as a tree: into one vector when the factor is several, then
// into halves down to 2 lanes (topi::vector_partials), computed where the partials are; the numbers
// stay right.
TEST(RfactorTest, VectorPartialsReduceAsATree) {
  Case c = softmax(6, 128);
  ComputeDAG dag = dag_of(c);
  std::vector<Sketch> sketches = generate_sketches(dag);
  std::mt19937_64 rng(19);
  const int lanes = dag.lanes();
  int checked = 0;
  for (int n = 0; n < 200 && checked < 6; ++n) {
    Program p = sample_program(dag, sketches, static_cast<size_t>(n) % sketches.size(), rng);
    const StageParams& mx = p.stages[1];  // X, mx, e, s, Y
    if (sketches[p.sketch].plans[1].rule != SketchRule::kRfactor || !mx.vectorize) continue;
    ++checked;
    te::Schedule s = apply(dag, sketches[p.sketch], p);
    std::string trace = s.trace().str(), what = p.str(dag) + "\n" + trace;
    int64_t factor = mx.tiles.at(0).at(0);
    EXPECT_NE(trace.find(fmt::format("rfactor mx [1:k1] [{}]", factor)), std::string::npos) << what;
    // Each half reduces the axis that the one before left to mx: k1.rf, k1.rf.rf, ...
    std::string axis = "k1";
    size_t rfactors = 1;
    for (int64_t w = factor; w > 2;) {
      ASSERT_EQ(w % 2, 0) << what;  // factors are whole vectors of at least 4 lanes
      w = w > lanes && w % lanes == 0 ? lanes : w / 2;
      axis += ".rf";
      ++rfactors;
      EXPECT_NE(trace.find(fmt::format("rfactor mx [1:{}] [{}]", axis, w)), std::string::npos)
          << what;
    }
    // Down to 2 lanes, which mx adds; no more.
    EXPECT_EQ(tessel::testing::count_occurrences(trace, "rfactor mx "), rfactors) << what;
    expect_correct(c, dag, s, what);
  }
  EXPECT_EQ(checked, 6);
}

// A blocked tile fused into the consumer that unpacks it is computed per tile of that consumer:
// its buffer holds the tile's levels below the consumer's loop, and the whole block of 16 (bounds
// inferred through the consumer's j / 16 and j % 16), no more.
TEST(UnpackingConsumerTest, BlockedTileIsComputedPerConsumerTile) {
  Case c = blocked_matmul(12, 48, 20, 16);
  ComputeDAG dag = dag_of(c);
  std::vector<Sketch> sketches = generate_sketches(dag);
  ASSERT_EQ(sketches.size(), 2u);  // Cb at level 1 or 2 of out
  std::mt19937_64 rng(17);
  for (int n = 0; n < 8; ++n) {
    size_t k = static_cast<size_t>(n % 2);
    Program p = sample_program(dag, sketches, k, rng);
    size_t at = 0;
    while (dag.stages()[at].name != "Cb") ++at;
    const StageParams& cb = p.stages[at];
    ASSERT_EQ(cb.tiles.size(), 4u) << p.str(dag);  // 3 spatial axes, 1 reduce axis
    int64_t elements = 1;
    for (size_t a = 0; a < 2; ++a) {
      for (size_t l = k; l < cb.tiles[a].size(); ++l) elements *= cb.tiles[a][l];
    }
    elements *= 16;
    EXPECT_NE(lowered(dag, apply(dag, sketches[k], p))
                  .find(fmt::format("allocate Cb: float32[{}_int64]", elements)),
              std::string::npos)
        << p.str(dag);
  }
}

// About half the sampled tiles are register tiles: the vector loop one or two whole vectors, the
// accumulators within the register file less four (uniform draws rarely are).
TEST(SampleProgramTest, HalfTheTilesAreRegisterTiles) {
  Case c = matmul(64, 96, 32);
  ComputeDAG dag = dag_of(c);
  std::vector<Sketch> sketches = generate_sketches(dag);
  std::mt19937_64 rng(23);
  int lanes = dag.lanes(), budget = dag.cpu().accumulator_registers(), shaped = 0, samples = 400;
  for (int n = 0; n < samples; ++n) {
    Program p = sample_program(dag, sketches, static_cast<size_t>(n) % sketches.size(), rng);
    const std::vector<std::vector<int64_t>>& t = p.stages[2].tiles;  // C (after A, B)
    int64_t rows = t[0].back(), columns = t[1].back();
    shaped += columns % lanes == 0 && columns <= 2 * lanes && rows * (columns / lanes) <= budget;
  }
  EXPECT_GE(shaped, samples * 2 / 5);
  EXPECT_LE(shaped, samples * 4 / 5);
}

// Where no whole vectors divide the last axis (36 columns), a register tile's vector loop is one
// vector and its last tile ragged: the levels above cover the axis rounded up to whole vectors,
// and tile-size mutations leave the vector loop as it is.
TEST(SampleProgramTest, RaggedAxesTakeOneVectorTiles) {
  Case c = matmul(16, 36, 32);
  ComputeDAG dag = dag_of(c);
  std::vector<Sketch> sketches = generate_sketches(dag);
  std::mt19937_64 rng(29);
  int64_t lanes = dag.lanes(), covered = (36 + lanes - 1) / lanes * lanes;
  int ragged = 0, samples = 200;
  for (int n = 0; n < samples; ++n) {
    Program p = sample_program(dag, sketches, static_cast<size_t>(n) % sketches.size(), rng);
    const std::vector<int64_t>& columns = p.stages[2].tiles[1];  // C (after A, B)
    int64_t inner = 1;
    for (int64_t f : columns) inner *= f;
    if (36 % columns.back() == 0) {
      EXPECT_EQ(36 % inner, 0) << p.str(dag);
      continue;
    }
    ++ragged;
    EXPECT_EQ(columns.back(), lanes) << p.str(dag);
    EXPECT_EQ(covered % inner, 0) << p.str(dag);
    for (int m = 0; m < 20; ++m) {
      p = mutate(dag, sketches, p, {1, 0, 0, 0, 0}, rng);
      const std::vector<int64_t>& t = p.stages[2].tiles[1];
      int64_t product = 1;
      for (int64_t f : t) product *= f;
      EXPECT_EQ(t.back(), lanes) << p.str(dag);
      EXPECT_EQ(covered % product, 0) << p.str(dag);
    }
  }
  EXPECT_GE(ragged, samples / 4);
}

// A tile-size mutation moves a factor between levels: the axis stays whole.
TEST(MutateTest, TileSizesKeepTheAxisWhole) {
  Case c = matmul(64, 48, 36);
  ComputeDAG dag = dag_of(c);
  std::vector<Sketch> sketches = generate_sketches(dag);
  std::mt19937_64 rng(3);
  Program p = sample_program(dag, sketches, 0, rng);
  int changed = 0;
  for (int n = 0; n < 200; ++n) {
    Program q = mutate(dag, sketches, p, {1, 0, 0, 0, 0}, rng);
    const std::vector<std::vector<int64_t>>& t = q.stages[2].tiles;  // C (after A, B)
    ASSERT_EQ(t.size(), 3u);
    int64_t extents[] = {64, 48, 36};
    for (size_t a = 0; a < 3; ++a) {
      int64_t inner = 1;
      for (int64_t f : t[a]) inner *= f;
      EXPECT_EQ(extents[a] % inner, 0) << q.str(dag);
      EXPECT_LE(t[a].back(), 64) << q.str(dag);
    }
    changed += q == p ? 0 : 1;
    p = q;
  }
  EXPECT_GT(changed, 150);
}

}  // namespace
}  // namespace tessel::autotune
