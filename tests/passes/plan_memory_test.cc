#include "passes/plan_memory.h"

#include <gtest/gtest.h>

#include "graph_builder.h"

namespace tessel::passes {
namespace {

using graph::ValueId;
using testing::f32;

// A graph of typed values only: plan_memory looks at types and at the kernels' reads and writes.
struct Values {
  graph::Graph g;
  ValueId add(const std::string& name, std::vector<int64_t> shape) {
    return g.add_value(name, f32(std::move(shape)));
  }
};

TEST(PlanMemoryTest, ChainReusesBuffersAndNeverSharesWithinAKernel) {
  Values v;
  ValueId x = v.add("x", {256}), a = v.add("a", {256}), b = v.add("b", {256}),
          c = v.add("c", {256}), y = v.add("y", {256});
  v.g.inputs = {x};
  v.g.outputs = {y};
  MemoryPlan plan = plan_memory(v.g, {{{x}, {a}}, {{a}, {b}}, {{b}, {c}}, {{c}, {y}}});
  // a and c can share (a dies after kernel 1, c is written by kernel 2); b needs its own buffer.
  ASSERT_EQ(plan.buffer_of.size(), 3u);
  EXPECT_EQ(plan.buffer_bytes.size(), 2u);
  EXPECT_EQ(plan.buffer_of.at(a), plan.buffer_of.at(c));
  EXPECT_NE(plan.buffer_of.at(a), plan.buffer_of.at(b));
  EXPECT_NE(plan.buffer_of.at(b), plan.buffer_of.at(c));
  EXPECT_EQ(plan.planned_bytes, 2 * 1024);
  EXPECT_EQ(plan.unplanned_bytes, 3 * 1024);
  EXPECT_EQ(plan.fixed_bytes, 2 * 1024);  // x and y
  EXPECT_FALSE(plan.buffer_of.count(x) || plan.buffer_of.count(y));
}

TEST(PlanMemoryTest, LongLivedValueKeepsItsBufferAndBestFitPicksTheSmallest) {
  Values v;
  ValueId x = v.add("x", {16}), skip = v.add("skip", {64}), big = v.add("big", {1024}),
          small = v.add("small", {32}), mid = v.add("mid", {32}), y = v.add("y", {16});
  v.g.inputs = {x};
  v.g.outputs = {y};
  // skip lives until the last kernel; big and small die, and mid then fits best in small's buffer.
  MemoryPlan plan = plan_memory(
      v.g, {{{x}, {skip}}, {{x}, {big}}, {{big}, {small}}, {{small}, {mid}}, {{mid, skip}, {y}}});
  EXPECT_NE(plan.buffer_of.at(skip), plan.buffer_of.at(big));
  EXPECT_NE(plan.buffer_of.at(skip), plan.buffer_of.at(small));
  EXPECT_NE(plan.buffer_of.at(skip), plan.buffer_of.at(mid));
  EXPECT_EQ(plan.buffer_of.at(mid), plan.buffer_of.at(big));  // big is free once small is written
  EXPECT_EQ(plan.buffer_bytes.size(), 3u);
  for (const auto& [value, buffer] : plan.buffer_of) {
    EXPECT_GE(plan.buffer_bytes[buffer], v.g.value(value).type.numel() * 4)
        << v.g.value(value).name;
  }
}

TEST(PlanMemoryTest, UnreadValueIsFreedAfterItsKernelAndSummaryNamesTheCounts) {
  Values v;
  ValueId x = v.add("x", {8}), unused = v.add("unused", {8}), t = v.add("t", {8}),
          y = v.add("y", {8});
  v.g.inputs = {x};
  v.g.outputs = {y};
  MemoryPlan plan = plan_memory(v.g, {{{x}, {t, unused}}, {{t}, {y}}});
  EXPECT_EQ(plan.buffer_bytes.size(), 2u);
  EXPECT_NE(plan.summary().find("2 intermediates in 2 buffers"), std::string::npos)
      << plan.summary();
}

// Parts of a host written in place: views at their offsets into the host's buffer, which is
// taken when the first part is written and kept until the last reader of the host or of a part.
TEST(PlanMemoryTest, AliasedPartsLiveInTheirHostsBuffer) {
  Values v;
  ValueId x = v.add("x", {64}), p0 = v.add("p0", {64}), p1 = v.add("p1", {64}),
          host = v.add("host", {128}), a = v.add("a", {128}), b = v.add("b", {128}),
          y = v.add("y", {64});
  v.g.inputs = {x};
  v.g.outputs = {y};
  // p0 is read once more after the host's last reader: the host's buffer must outlive a.
  MemoryPlan plan =
      plan_memory(v.g, {{{x}, {p0}}, {{x}, {p1}}, {{host}, {a}}, {{a}, {b}}, {{b, p0}, {y}}},
                  {{p0, {host, 0}}, {p1, {host, 256}}});
  ASSERT_TRUE(plan.buffer_of.count(host));
  EXPECT_EQ(plan.buffer_of.at(p0), plan.buffer_of.at(host));
  EXPECT_EQ(plan.buffer_of.at(p1), plan.buffer_of.at(host));
  EXPECT_FALSE(plan.offset_of.count(p0));
  EXPECT_EQ(plan.offset_of.at(p1), 256);
  EXPECT_GE(plan.buffer_bytes[plan.buffer_of.at(host)], 512);
  // a dies after kernel 3, the host only after kernel 4: b cannot take the host's buffer.
  EXPECT_NE(plan.buffer_of.at(b), plan.buffer_of.at(host));
  EXPECT_NE(plan.buffer_of.at(a), plan.buffer_of.at(host));
  EXPECT_EQ(plan.buffer_bytes.size(), 3u);
}

TEST(PlanMemoryTest, AViewThatNoKernelWritesSharesItsHostsBufferAndKeepsItAlive) {
  Values v;
  ValueId x = v.add("x", {64}), p0 = v.add("p0", {64}), p1 = v.add("p1", {64}),
          p2 = v.add("p2", {64}), host = v.add("host", {192}), view = v.add("view", {128}),
          a = v.add("a", {64}), b = v.add("b", {192}), y = v.add("y", {64});
  v.g.inputs = {x};
  v.g.outputs = {y};
  // view = [p1, p2], host = [p0, p1, p2]; the view's last reader runs after the host's.
  MemoryPlan plan = plan_memory(
      v.g, {{{x}, {p0}}, {{x}, {p1}}, {{x}, {p2}}, {{host}, {a}}, {{a}, {b}}, {{b, view}, {y}}},
      {{p0, {host, 0}}, {p1, {host, 256}}, {p2, {host, 512}}, {view, {host, 256}}});
  ASSERT_TRUE(plan.buffer_of.count(view));
  EXPECT_EQ(plan.buffer_of.at(view), plan.buffer_of.at(host));
  EXPECT_EQ(plan.offset_of.at(view), 256);
  // The host lives until the view's reader: b, written before it, takes another buffer.
  EXPECT_NE(plan.buffer_of.at(b), plan.buffer_of.at(host));
  EXPECT_NE(plan.buffer_of.at(a), plan.buffer_of.at(host));
}

}  // namespace
}  // namespace tessel::passes
