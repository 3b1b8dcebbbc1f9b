#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "tests/codegen/codegen_test_util.h"

namespace tessel {
namespace {

using namespace tessel::testing;

int64_t py_floordiv(int64_t a, int64_t b) {
  return static_cast<int64_t>(std::floor(static_cast<double>(a) / static_cast<double>(b)));
}
int64_t py_floormod(int64_t a, int64_t b) { return a - b * py_floordiv(a, b); }

// Q[i] = floordiv(A[i], B[i]), R[i] = floormod(A[i], B[i]) for every sign combination, scalar and
// 8 lanes, and by constants (power of two, odd, negative).
TEST(CodeGenLLVMTest, FloorDivAndModFollowPythonSemantics) {
  const int64_t n = 64;
  auto a_val = [](int64_t k) {
    return static_cast<int32_t>(k % 16 - 8) * 3 + static_cast<int32_t>(k % 3);
  };
  auto b_val = [](int64_t k) { return static_cast<int32_t>(k % 2 ? -(k % 5 + 1) : (k % 7 + 1)); };
  Buffer a = Buffer::make("A", DataType::i32(), {PrimExpr(n)});
  Buffer b = Buffer::make("B", DataType::i32(), {PrimExpr(n)});
  std::vector<int64_t> constants{4, 3, -3};
  std::vector<Buffer> outs;
  for (int k = 0; k < 2 + 2 * static_cast<int>(constants.size()); ++k) {
    outs.push_back(Buffer::make("O" + std::to_string(k), DataType::i32(), {PrimExpr(n)}));
  }
  auto body_for = [&](PrimExpr idx, int lanes) {
    auto splat = [&](int64_t c) {
      return lanes == 1 ? PrimExpr(static_cast<int>(c))
                        : BroadcastNode::make(static_cast<int>(c), lanes);
    };
    PrimExpr x = load(a, idx), y = load(b, idx);
    std::vector<Stmt> stores{store(outs[0], FloorDivNode::make(x, y), idx),
                             store(outs[1], FloorModNode::make(x, y), idx)};
    for (size_t k = 0; k < constants.size(); ++k) {
      stores.push_back(store(outs[2 + 2 * k], FloorDivNode::make(x, splat(constants[k])), idx));
      stores.push_back(store(outs[3 + 2 * k], FloorModNode::make(x, splat(constants[k])), idx));
    }
    return SeqStmtNode::make(stores);
  };
  for (int lanes : {1, 8}) {
    Var i("i");
    PrimExpr idx = lanes == 1 ? PrimExpr(i) : ramp(i * lanes, lanes);
    std::vector<Buffer> params{a, b};
    params.insert(params.end(), outs.begin(), outs.end());
    runtime::Module mod =
        build(make_func("divmod", params, loop(i, PrimExpr(n / lanes), body_for(idx, lanes))),
              host_target());
    auto x = make_array<int32_t>({n}, DataType::i32(), a_val);
    auto y = make_array<int32_t>({n}, DataType::i32(), b_val);
    std::vector<runtime::Arg> args{x, y};
    std::vector<runtime::NDArray> results;
    for (size_t k = 0; k < outs.size(); ++k) {
      results.push_back(runtime::NDArray::empty({n}, DataType::i32()));
      args.emplace_back(results.back());
    }
    mod.get_function("divmod").call(args);
    for (int64_t k = 0; k < n; ++k) {
      int64_t av = a_val(k), bv = b_val(k);
      ASSERT_EQ(results[0].data<int32_t>()[k], py_floordiv(av, bv)) << av << " // " << bv;
      ASSERT_EQ(results[1].data<int32_t>()[k], py_floormod(av, bv)) << av << " % " << bv;
      for (size_t c = 0; c < constants.size(); ++c) {
        ASSERT_EQ(results[2 + 2 * c].data<int32_t>()[k], py_floordiv(av, constants[c]))
            << av << " // " << constants[c];
        ASSERT_EQ(results[3 + 2 * c].data<int32_t>()[k], py_floormod(av, constants[c]))
            << av << " % " << constants[c];
      }
    }
  }
}

// Non-negative operands take the cheap unsigned path; the results must not change.
TEST(CodeGenLLVMTest, NonNegativeLoopIndexDivision) {
  Buffer q = Buffer::make("Q", DataType::i32(), {30});
  Buffer r = Buffer::make("R", DataType::i32(), {30});
  Var i("i");
  Stmt body =
      loop(i, 30, SeqStmtNode::make({store(q, floordiv(i, 7), i), store(r, floormod(i, 7), i)}));
  std::string ir = emit_llvm_ir({make_func("idx", {q, r}, body)}, host_target());
  EXPECT_EQ(ir.find("srem"), std::string::npos) << ir;
  runtime::Module mod = build(make_func("idx", {q, r}, body), host_target());
  auto qa = runtime::NDArray::empty({30}, DataType::i32());
  auto ra = runtime::NDArray::empty({30}, DataType::i32());
  mod.get_function("idx")(qa, ra);
  for (int k = 0; k < 30; ++k) {
    EXPECT_EQ(qa.data<int32_t>()[k], k / 7);
    EXPECT_EQ(ra.data<int32_t>()[k], k % 7);
  }
}

// Strided ramps gather and scatter: C[2*i + 1 lanes] = A[3*i lanes] per 4-lane group.
TEST(CodeGenLLVMTest, StridedRampsGatherAndScatter) {
  Buffer a = Buffer::make("A", DataType::f32(), {48});
  Buffer c = Buffer::make("C", DataType::f32(), {32});
  Var i("i");
  Stmt body = loop(i, 4, store(c, load(a, ramp(i * 12, 4, 3)) + 1.0f, ramp(i * 8 + 1, 4, 2)));
  runtime::Module mod = build(make_func("strided", {a, c}, body), host_target());
  auto x = float_array({48}, [](int64_t k) { return float(k); });
  auto y = float_array({32}, [](int64_t) { return -1.0f; });
  mod.get_function("strided")(x, y);
  for (int64_t k = 0; k < 32; ++k) {
    float expected = k % 2 == 1 ? float(3 * ((k - 1) / 2)) + 1.0f : -1.0f;
    EXPECT_EQ(y.data<float>()[k], expected) << k;
  }
}

// Loads of every s-th element for s up to 4 are one wide load and a shuffle, not a gather (a
// strided pool or conv reads its input so): right values up to the buffer's last element, which
// the last lane reads (ASan checks that nothing past it is), and no gather instruction on the host
// nor on an AVX-512 target. Stride 5 still gathers on the AVX-512 target (which shows that the
// check can see a gather); on the host LLVM may scalarize it instead (it does for znver3, whose
// gathers are slow).
TEST(CodeGenLLVMTest, SmallStrideLoadsAreWideLoadsAndShuffles) {
  for (int stride : {2, 3, 4, 5}) {
    const int lanes = 16, n = (lanes - 1) * stride + 1 + 3;
    Buffer a = Buffer::make("A", DataType::f32(), {n});
    Buffer c = Buffer::make("C", DataType::f32(), {2 * lanes});
    Var i("i");
    // C[0:16] = A[3 + s*k], C[16:32] = A[s*k]: the first group ends at A's last element.
    Stmt body =
        loop(i, 2, store(c, load(a, ramp(3 - i * 3, lanes, stride)), ramp(i * lanes, lanes)));
    PrimFunc f = make_func("strided_load", {a, c}, body);
    runtime::Module mod = build(f, host_target());
    auto x = float_array({n}, [](int64_t k) { return float(k); });
    auto y = float_array({2 * lanes}, [](int64_t) { return -1.0f; });
    mod.get_function("strided_load")(x, y);
    for (int64_t k = 0; k < lanes; ++k) {
      EXPECT_EQ(y.data<float>()[k], float(3 + stride * k)) << "stride " << stride << " lane " << k;
      EXPECT_EQ(y.data<float>()[lanes + k], float(stride * k)) << "stride " << stride;
    }
    bool host_gathers = emit_assembly({f}, host_target()).find("gather") != std::string::npos;
    if (stride <= 4) {
      EXPECT_FALSE(host_gathers) << "stride " << stride;
    }
    std::string avx512 =
        emit_assembly({f}, Target::parse("llvm -mtriple=x86_64-linux-gnu -mcpu=skylake-avx512"));
    EXPECT_EQ(avx512.find("gather") == std::string::npos, stride <= 4) << "stride " << stride;
  }
}

// Select, min/max, comparisons, casts, Let, a likely() guard and an unrolled loop together.
TEST(CodeGenLLVMTest, ControlFlowCastsAndSelects) {
  Buffer a = Buffer::make("A", DataType::f32(), {10});
  Buffer c = Buffer::make("C", DataType::i32(), {12});
  Var i("i"), x("x", DataType::f32()), j("j");
  PrimExpr v = load(a, i);
  PrimExpr clamped = max(min(x, 4.5f), -2.0f);
  PrimExpr value =
      LetNode::make(x, v, cast(DataType::i32(), select(x < 0.0f, clamped * 2.0f, clamped)));
  Stmt guarded =
      IfThenElseNode::make(likely(i < 10), store(c, value, i), store(c, PrimExpr(-7), i));
  Stmt tail = loop(j, 2, store(c, cast(DataType::i32(), j >= 1) + 100, j + 10), ForKind::kUnrolled);
  runtime::Module mod = build(
      make_func("mixed", {a, c}, SeqStmtNode::make({loop(i, 10, guarded), tail})), host_target());
  auto in = float_array({10}, [](int64_t k) { return -3.25f + 1.1f * k; });
  auto out = make_array<int32_t>({12}, DataType::i32(), [](int64_t) { return 0; });
  mod.get_function("mixed")(in, out);
  for (int k = 0; k < 10; ++k) {
    float xv = in.data<float>()[k];
    float cl = std::max(std::min(xv, 4.5f), -2.0f);
    EXPECT_EQ(out.data<int32_t>()[k], static_cast<int32_t>(xv < 0 ? cl * 2.0f : cl)) << xv;
  }
  EXPECT_EQ(out.data<int32_t>()[10], 100);
  EXPECT_EQ(out.data<int32_t>()[11], 101);
}

TEST(CodeGenLLVMTest, BoolBuffersLiveAsBytes) {
  Buffer a = Buffer::make("A", DataType::f32(), {16});
  Buffer m = Buffer::make("M", DataType::boolean(), {16});
  Buffer c = Buffer::make("C", DataType::f32(), {16});
  Var i("i");
  PrimExpr idx = ramp(i * 8, 8);
  Stmt body =
      loop(i, 2,
           SeqStmtNode::make(
               {store(m, load(a, idx) > BroadcastNode::make(0.0f, 8), idx),
                store(c, select(load(m, idx), load(a, idx), BroadcastNode::make(0.0f, 8)), idx)}));
  runtime::Module mod = build(make_func("relu_mask", {a, m, c}, body), host_target());
  auto x = float_array({16}, [](int64_t k) { return float(k) - 7.5f; });
  auto mask = runtime::NDArray::empty({16}, DataType::boolean());
  auto y = float_array({16}, [](int64_t) { return 0.0f; });
  mod.get_function("relu_mask")(x, mask, y);
  for (int k = 0; k < 16; ++k) {
    EXPECT_EQ(mask.data<uint8_t>()[k], k > 7 ? 1 : 0) << k;
    EXPECT_EQ(y.data<float>()[k], std::max(0.0f, k - 7.5f)) << k;
  }
}

// Loads whose offsets differ by constants (a 1x1 conv tile's neighbouring columns, broadcast
// against a vector of weights in a parallel task, their index a 32-bit sum with the task's row
// in it): the constants, a subtracted one too, are added after the index is widened, so that they
// fold into the loads' displacements and the loads share one index register, where each had
// taken an add and a sign extension.
TEST(CodeGenLLVMTest, ConstantOffsetsFoldIntoTheAddress) {
  const int rows = 4, blocks = 2, tiles = 3, channels = 16, width = 24, lanes = 8;
  const int plane = rows * width, columns = 4;
  Buffer a = Buffer::make("A", DataType::f32(), {channels * plane});
  Buffer w = Buffer::make("W", DataType::f32(), {blocks * channels * lanes});
  Buffer c = Buffer::make("C", DataType::f32(), {rows * blocks * tiles * columns * lanes});
  Var p("p"), tile("tile"), rc("rc");
  PrimExpr row = FloorDivNode::make(p, blocks), block = FloorModNode::make(p, blocks);
  PrimExpr base = rc * plane + row * width + tile * (columns * 2);
  // Columns 0, 2, 4, 6 of the tile, written four ways.
  std::vector<PrimExpr> column = {base, SubNode::make(base + 5, 3), (base + 1) + 3,
                                  ((base - 1) + 1) + 6};
  std::vector<Stmt> fmas;
  for (int k = 0; k < columns; ++k) {
    PrimExpr out = ramp(((p * tiles + tile) * columns + k) * lanes, lanes);
    PrimExpr weights = load(w, ramp((block * channels + rc) * lanes, lanes));
    fmas.push_back(
        store(c, load(c, out) + BroadcastNode::make(load(a, column[k]), lanes) * weights, out));
  }
  Stmt body = loop(p, rows * blocks, loop(tile, tiles, loop(rc, channels, SeqStmtNode::make(fmas))),
                   ForKind::kParallel);
  PrimFunc f = make_func("offsets", {a, w, c}, body);
  runtime::Module mod = build(f, host_target());
  auto x = float_array({channels * plane}, [](int64_t k) { return float(k % 97); });
  auto ws = float_array({blocks * channels * lanes}, [](int64_t k) { return float(k % 5); });
  auto y = float_array({rows * blocks * tiles * columns * lanes}, [](int64_t) { return 0.0f; });
  mod.get_function("offsets")(x, ws, y);
  for (int64_t pp = 0; pp < rows * blocks; ++pp) {
    for (int64_t t = 0; t < tiles; ++t) {
      for (int64_t k = 0; k < columns; ++k) {
        for (int64_t lane = 0; lane < lanes; ++lane) {
          float expected = 0;
          for (int64_t r = 0; r < channels; ++r) {
            int64_t i = r * plane + pp / blocks * width + t * columns * 2 + 2 * k;
            expected += float(i % 97) * float(((pp % blocks * channels + r) * lanes + lane) % 5);
          }
          EXPECT_EQ(y.data<float>()[((pp * tiles + t) * columns + k) * lanes + lane], expected);
        }
      }
    }
  }
  // Before: each broadcast but the first after `leal k(%r), %e; movslq %e, %r`.
  std::istringstream lines(
      emit_assembly({f}, Target::parse("llvm -mtriple=x86_64-linux-gnu -mcpu=haswell")));
  std::vector<std::string> text;
  for (std::string line; std::getline(lines, line);) text.push_back(line);
  int broadcasts = 0, widened_each = 0;
  for (size_t i = 2; i < text.size(); ++i) {
    if (text[i].find("vbroadcastss") == std::string::npos) continue;
    ++broadcasts;
    if (text[i - 1].find("movslq") != std::string::npos &&
        text[i - 2].find("leal") != std::string::npos)
      ++widened_each;
  }
  EXPECT_GE(broadcasts, columns);
  EXPECT_EQ(widened_each, 0);
}

}  // namespace
}  // namespace tessel
