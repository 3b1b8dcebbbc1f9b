#include "ir/structural_equal.h"
#include "te_test_util.h"

namespace tessel::te {
namespace {

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
  EXPECT_NE(text.find("split C [i] [8] []"), std::string::npos) << text;

  Workload fresh;
  Schedule s2 = create_schedule({fresh.C});
  s2.replay(Trace::parse(text));
  EXPECT_EQ(s2.trace().str(), text);
  PrimFunc f1 = lower(s, {w.A, w.B, w.C}, "f"), f2 = lower(s2, {fresh.A, fresh.B, fresh.C}, "f");
  EXPECT_TRUE(structural_equal(f1, f2)) << f1 << "\nvs\n" << f2;
}

TEST(TraceTest, ParseErrorsNameTheLine) {
  try {
    Trace::parse("split C [i] [8] []\nsplit C [i] [x] []\n");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("line 2"), std::string::npos) << e.what();
  }
  Workload w;
  Schedule s = create_schedule({w.C});
  try {
    s.replay(Trace::parse("split C [nope] [8] []\n"));
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no axis 'nope'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tessel::te
