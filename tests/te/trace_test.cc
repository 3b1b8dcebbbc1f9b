#include <fmt/format.h>

#include "ir/structural_equal.h"
#include "te_test_util.h"
#include "tests/common/expect_error.h"

namespace tessel::te {
namespace {

using tessel::testing::expect_error;

struct Workload {
  Tensor A, B, C;
  IterVar k;
  Workload() {
    A = placeholder({32, 32}, DataType::f32(), "A");
    B = placeholder({32, 32}, DataType::f32(), "B");
    k = reduce_axis(0, 32, "k");
    C = compute({32, 32}, [&](Expr i, Expr j) { return sum(A(i, k) * B(k, j), {k}); }, "C");
  }
};

TEST(TraceTest, RoundTripsThroughTextAndReplays) {
  Workload w;
  Schedule s = create_schedule({w.C});
  Tensor CL = s.cache_write(w.C, MemScope::kLocal);
  auto [io, jo, ii, ji] = s[w.C].tile(w.C.axis(0), w.C.axis(1), 8, 8);
  s[CL].compute_at(s[w.C], jo);
  s[CL].vectorize(s[CL].axis(1));
  s[w.C].parallel(io);
  std::string text = s.trace().str();
  // Axes by position in the stage's axes (i, j, then i.outer, i.inner, j.outer, j.inner), with
  // their names as hints.
  EXPECT_NE(text.find("split C [0:i] [8] []"), std::string::npos) << text;
  EXPECT_NE(text.find("reorder C [2:i.outer,4:j.outer,3:i.inner,5:j.inner] [] []"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("compute_at C.local [4:j.outer] [] [C]"), std::string::npos) << text;

  Workload fresh;
  Schedule s2 = create_schedule({fresh.C});
  s2.replay(Trace::parse(text));
  EXPECT_EQ(s2.trace().str(), text);
  PrimFunc f1 = lower(s, {w.A, w.B, w.C}, "f"), f2 = lower(s2, {fresh.A, fresh.B, fresh.C}, "f");
  EXPECT_TRUE(structural_equal(f1, f2)) << f1 << "\nvs\n" << f2;
}

TEST(TraceTest, ParseErrorsNameTheLine) {
  expect_error([] { Trace::parse("split C [0:i] [8] []\nsplit C [0:i] [x] []\n"); },
               {"line 2", "'x' is not an integer"});
  // Only a whole integer: std::stoll took "12x" as 12.
  for (const char* bad : {"12x", "1.5", "99999999999999999999"}) {
    expect_error([&] { Trace::parse(fmt::format("split C [0:i] [{}] []\n", bad)); },
                 {"line 1", fmt::format("'{}' is not an integer", bad)});
  }
  Workload w;
  Schedule s = create_schedule({w.C});
  expect_error([&] { s.replay(Trace::parse("split C [nope] [8] []\n")); },
               {"stage 'C' has no axis 'nope'"});
  expect_error([&] { s.replay(Trace::parse("split C [7:i] [8] []\n")); },
               {"stage 'C' has no axis at position 7 (it has 3)"});
  // Position 1 is 'j': the trace is of another computation.
  expect_error([&] { s.replay(Trace::parse("split C [1:i] [8] []\n")); },
               {"the axis at position 1 is 'j', the trace names 'i'"});
}

// Names are only hints: here a data axis and the reduce axis are both named 'i', and each step
// must reach the axis it was recorded on.
struct SharedNames {
  Tensor A, C;
  IterVar r;
  SharedNames() {
    A = placeholder({16, 24}, DataType::f32(), "A");
    r = reduce_axis(0, 24, "i");
    C = compute({16}, [&](Expr x) { return sum(A(x, r), {r}); }, "C", {"i"});
  }
};

TEST(TraceTest, AxesThatShareANameReplayByPosition) {
  SharedNames w;
  Schedule s = create_schedule({w.C});
  auto [ro, ri] = s[w.C].split(w.r, 8);  // the reduce axis, the second 'i'
  auto [xo, xi] = s[w.C].split(w.C.axis(0), 4);
  s[w.C].reorder({xo, ro, xi, ri});
  s[w.C].unroll(ri);
  std::string text = s.trace().str();
  EXPECT_NE(text.find("split C [1:i] [8] []"), std::string::npos) << text;
  EXPECT_NE(text.find("split C [0:i] [4] []"), std::string::npos) << text;

  SharedNames fresh;
  Schedule s2 = create_schedule({fresh.C});
  s2.replay(Trace::parse(text));
  EXPECT_EQ(s2.trace().str(), text);
  PrimFunc f1 = lower(s, {w.A, w.C}, "f"), f2 = lower(s2, {fresh.A, fresh.C}, "f");
  EXPECT_TRUE(structural_equal(f1, f2)) << f1 << "\nvs\n" << f2;

  // Same numbers as naive loops: the reduce axis was split by 8, the data axis by 4.
  runtime::NDArray a = testing::random_array({16, 24}), c = testing::zeros({16});
  testing::build_and_run(s2, {fresh.A, fresh.C}, {a, c});
  for (int x = 0; x < 16; ++x) {
    float want = 0;
    for (int k = 0; k < 24; ++k) want += a.data<float>()[x * 24 + k];
    EXPECT_NEAR(c.data<float>()[x], want, 1e-4) << x;
  }
}

// A trace written before axis positions names axes only: it replays where each name is one axis,
// and is refused where a name is shared, rather than guessing which axis it meant.
TEST(TraceTest, AnOlderTraceReplaysByNameWhereTheNameIsUnique) {
  Workload w;
  Schedule s = create_schedule({w.C});
  s.replay(Trace::parse("split C [i] [8] []\nreorder C [i.outer,k,i.inner] [] []\n"));
  EXPECT_EQ(s.trace().str(), "split C [0:i] [8] []\nreorder C [3:i.outer,2:k,4:i.inner] [] []\n");

  SharedNames shared;
  Schedule s2 = create_schedule({shared.C});
  expect_error([&] { s2.replay(Trace::parse("split C [i] [8] []\n")); },
               {"trace step 'split': stage 'C' has 2 axes named 'i' (positions 0, 1)",
                "record the schedule again"});
}

}  // namespace
}  // namespace tessel::te
