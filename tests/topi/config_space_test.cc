// ConfigSpace: knob enumeration, mixed-radix indexing, typed accessors, JSON and the fallback.
#include "topi/config_space.h"

#include <gtest/gtest.h>

#include <set>

#include "tests/common/expect_error.h"

namespace tessel::topi {
namespace {

using tessel::testing::expect_error;
using Values = std::vector<std::vector<int64_t>>;

// Every value of the space's only knob, a split, in index order.
Values splits(int64_t extent, const SplitPolicy& policy) {
  ConfigSpace space;
  space.define_split("s", extent, policy);
  Values out;
  for (uint64_t i = 0; i < space.size(); ++i) out.push_back(space.get(i).split("s"));
  return out;
}

Values reorders(int num_axes, const std::string& policy, const Values& candidates = {}) {
  ConfigSpace space;
  space.define_reorder("r", num_axes, policy, candidates);
  Values out;
  for (uint64_t i = 0; i < space.size(); ++i) out.push_back(space.get(i).reorder("r"));
  return out;
}

std::vector<std::vector<Annotation>> annotations(int num_axes, const std::string& policy) {
  ConfigSpace space;
  space.define_annotate("a", num_axes, policy);
  std::vector<std::vector<Annotation>> out;
  for (uint64_t i = 0; i < space.size(); ++i) out.push_back(space.get(i).annotate("a"));
  return out;
}

// A space with one knob of each kind: 18 * 6 * 6 * 3 = 1944 points.
ConfigSpace mixed_space() {
  ConfigSpace space;
  space.define_split("tile", 12, {.num_outputs = 3});
  space.define_reorder("order", 3, "all");
  space.define_annotate("ann", 2, "try_unroll_vec");
  space.define_knob("unroll_max", {0, 16, 64});
  return space;
}

TEST(ConfigSpace, SplitFactorsOfTwelveIntoTwo) {
  EXPECT_EQ(splits(12, {}), (Values{{12, 1}, {6, 2}, {4, 3}, {3, 4}, {2, 6}, {1, 12}}));
}

TEST(ConfigSpace, SplitFactorsOfTwelveIntoThree) {
  EXPECT_EQ(splits(12, {.num_outputs = 3}), (Values{{12, 1, 1},
                                                    {6, 1, 2},
                                                    {4, 1, 3},
                                                    {3, 1, 4},
                                                    {2, 1, 6},
                                                    {1, 1, 12},
                                                    {6, 2, 1},
                                                    {3, 2, 2},
                                                    {2, 2, 3},
                                                    {1, 2, 6},
                                                    {4, 3, 1},
                                                    {2, 3, 2},
                                                    {1, 3, 4},
                                                    {3, 4, 1},
                                                    {1, 4, 3},
                                                    {2, 6, 1},
                                                    {1, 6, 2},
                                                    {1, 12, 1}}));
}

TEST(ConfigSpace, SplitOfPrimeAndOfOne) {
  EXPECT_EQ(splits(7, {}), (Values{{7, 1}, {1, 7}}));
  EXPECT_EQ(splits(1, {.num_outputs = 3}), (Values{{1, 1, 1}}));
}

TEST(ConfigSpace, SplitMaxFactorBoundsEveryInnerFactor) {
  EXPECT_EQ(splits(12, {.max_factor = 4}), (Values{{12, 1}, {6, 2}, {4, 3}, {3, 4}}));
  EXPECT_EQ(splits(12, {.num_outputs = 3, .max_factor = 2}),
            (Values{{12, 1, 1}, {6, 1, 2}, {6, 2, 1}, {3, 2, 2}}));
}

TEST(ConfigSpace, SplitPower2WithAndWithoutTail) {
  // The outer factor rounds up, so 12 = 2 * 8 - 4 leaves a tail.
  EXPECT_EQ(splits(12, {.policy = "power2"}), (Values{{12, 1}, {6, 2}, {3, 4}, {2, 8}}));
  EXPECT_EQ(splits(12, {.policy = "power2", .no_tail = true}), (Values{{12, 1}, {6, 2}, {3, 4}}));
  EXPECT_EQ(splits(12, {.policy = "power2", .max_factor = 2}), (Values{{12, 1}, {6, 2}}));
  EXPECT_EQ(splits(100, {.policy = "power2", .num_outputs = 3, .no_tail = true}),
            (Values{{100, 1, 1}, {50, 1, 2}, {25, 1, 4}, {50, 2, 1}, {25, 2, 2}, {25, 4, 1}}));
  // Three outputs of 8: every pair of powers of two whose product is at most 8.
  Values p3 = splits(8, {.policy = "power2", .num_outputs = 3});
  EXPECT_EQ(p3.size(), 10u);
  for (const std::vector<int64_t>& s : p3) EXPECT_EQ(s[0] * s[1] * s[2], 8) << s[1] << "x" << s[2];
}

TEST(ConfigSpace, SplitCandidates) {
  EXPECT_EQ(splits(12, {.policy = "candidate", .candidates = {{-1, 4}, {2, 8}}}),
            (Values{{3, 4}, {2, 8}}));
  expect_error([] { splits(12, {.policy = "candidate", .candidates = {{4, 4}}}); },
               {"'s'", "[4, 4]", "outer factor 3"});
  expect_error([] { splits(12, {.policy = "candidate", .candidates = {{1, 2, 6}}}); },
               {"'s'", "2 factors"});
  expect_error([] { splits(12, {.policy = "candidate", .candidates = {{-1, 24}}}); },
               {"'s'", "exceed"});
  expect_error(
      [] { splits(12, {.policy = "candidate", .no_tail = true, .candidates = {{-1, 8}}}); },
      {"'s'", "tail"});
  expect_error([] { splits(12, {.policy = "candidate", .candidates = {{-1, 4}, {3, 4}}}); },
               {"'s'", "twice"});
  expect_error([] { splits(12, {.policy = "candidate"}); }, {"'s'", "no candidates"});
  expect_error([] { splits(12, {.candidates = {{3, 4}}}); }, {"'s'", "policy \"candidate\""});
}

TEST(ConfigSpace, SplitDefinitionErrors) {
  expect_error([] { splits(12, {.policy = "verbose"}); }, {"'s'", "verbose"});
  expect_error([] { splits(12, {.num_outputs = 1}); }, {"'s'", "num_outputs"});
  expect_error([] { splits(0, {}); }, {"'s'", "extent"});
  expect_error([] { splits(12, {.max_factor = -1}); }, {"'s'", "max_factor"});
}

TEST(ConfigSpace, Reorder) {
  EXPECT_EQ(reorders(3, "identity"), (Values{{0, 1, 2}}));
  EXPECT_EQ(reorders(3, "all"),
            (Values{{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}}));
  EXPECT_EQ(reorders(3, "candidate", {{2, 0, 1}, {0, 1, 2}}), (Values{{2, 0, 1}, {0, 1, 2}}));
  expect_error([] { reorders(3, "candidate", {{0, 0, 1}}); }, {"'r'", "[0, 0, 1]", "permutation"});
  expect_error([] { reorders(3, "candidate", {{0, 1}}); }, {"'r'", "permutation"});
  expect_error([] { reorders(3, "interleave"); }, {"'r'", "interleave"});
  expect_error([] { reorders(9, "all"); }, {"'r'", "9"});
  expect_error([] { reorders(0, "identity"); }, {"'r'", "axes"});
}

TEST(ConfigSpace, Annotate) {
  constexpr Annotation N = Annotation::kNone, U = Annotation::kUnroll, V = Annotation::kVectorize;
  using Anns = std::vector<std::vector<Annotation>>;
  EXPECT_EQ(annotations(3, "unroll"), (Anns{{U, U, U}}));
  EXPECT_EQ(annotations(2, "try_unroll"), (Anns{{N, N}, {N, U}, {U, N}, {U, U}}));
  // Only the innermost axis may be vectorized.
  EXPECT_EQ(annotations(2, "try_unroll_vec"),
            (Anns{{N, N}, {N, U}, {N, V}, {U, N}, {U, U}, {U, V}}));
  expect_error([] { annotations(2, "bind_gpu"); }, {"'a'", "bind_gpu"});
}

TEST(ConfigSpace, KnobAndDefinitionErrors) {
  ConfigSpace space;
  space.define_knob("k", {4, 1, 8});
  EXPECT_EQ(space.size(), 3u);
  EXPECT_EQ(space.get(0).knob("k"), 4);
  EXPECT_EQ(space.get(2).knob("k"), 8);
  expect_error([&] { space.define_knob("k", {1}); }, {"'k'", "twice"});
  expect_error([&] { space.define_split("k", 4); }, {"'k'", "twice"});
  expect_error([&] { space.define_knob("empty", {}); }, {"'empty'", "no candidates"});
  expect_error([&] { space.define_knob("dup", {1, 2, 1}); }, {"'dup'", "[1]", "twice"});
  expect_error([&] { space.define_knob("", {1}); }, {"name"});
  EXPECT_EQ(space.num_knobs(), 1u);
}

TEST(ConfigSpace, EmptySpaceHasOnePoint) {
  ConfigSpace space;
  EXPECT_EQ(space.size(), 1u);
  EXPECT_EQ(space.get(0).to_json(), "{}");
  EXPECT_TRUE(space.fallback().features().empty());
}

TEST(ConfigSpace, SizeOverflowNamesTheKnob) {
  std::vector<int64_t> many(1 << 16);
  for (size_t i = 0; i < many.size(); ++i) many[i] = static_cast<int64_t>(i);
  ConfigSpace space;
  for (const char* name : {"k0", "k1", "k2"}) space.define_knob(name, many);
  EXPECT_EQ(space.size(), uint64_t{1} << 48);
  expect_error([&] { space.define_knob("k3", many); }, {"'k3'", "2^64"});
  EXPECT_EQ(space.num_knobs(), 3u);
  EXPECT_EQ(space.get((uint64_t{1} << 48) - 1).knob("k2"), (1 << 16) - 1);
}

TEST(ConfigSpace, IndexRoundTripOverTheWholeSpace) {
  ConfigSpace space = mixed_space();
  ASSERT_EQ(space.size(), 18u * 6 * 6 * 3);
  EXPECT_EQ(space.knob_sizes(), (std::vector<uint64_t>{18, 6, 6, 3}));
  std::set<std::string> seen;
  for (uint64_t i = 0; i < space.size(); ++i) {
    ConfigEntity e = space.get(i);
    ASSERT_EQ(e.index(), i);
    ASSERT_EQ(space.index_of(e.choices()), i);
    std::string json = e.to_json();
    ASSERT_EQ(ConfigEntity::from_json(space, json).index(), i) << json;
    seen.insert(json);
  }
  EXPECT_EQ(seen.size(), space.size());
  expect_error([&] { space.get(space.size()); }, {"1944", "outside"});
}

TEST(ConfigSpace, FirstKnobIsTheFastestDigit) {
  ConfigSpace space = mixed_space();
  ConfigEntity e = space.get(1 + 18 * 2 + 18 * 6 * 5 + 18 * 6 * 6 * 1);
  EXPECT_EQ(e.choices(), (std::vector<uint64_t>{1, 2, 5, 1}));
  EXPECT_EQ(e.split("tile"), (std::vector<int64_t>{6, 1, 2}));
  EXPECT_EQ(e.reorder("order"), (std::vector<int64_t>{1, 0, 2}));
  EXPECT_EQ(e.annotate("ann"),
            (std::vector<Annotation>{Annotation::kUnroll, Annotation::kVectorize}));
  EXPECT_EQ(e.knob("unroll_max"), 16);
}

TEST(ConfigSpace, AccessorErrorsNameTheKnob) {
  ConfigEntity e = mixed_space().get(0);
  expect_error([&] { e.split("tile_x"); }, {"'tile_x'", "tile, order, ann, unroll_max"});
  expect_error([&] { e.knob("tile"); }, {"'tile'", "is of kind split, not knob"});
  expect_error([&] { e.split("order"); }, {"'order'", "is of kind reorder, not split"});
  expect_error([&] { e.reorder("ann"); }, {"'ann'", "is of kind annotate, not reorder"});
  expect_error([&] { e.annotate("unroll_max"); },
               {"'unroll_max'", "is of kind knob, not annotate"});
}

TEST(ConfigSpace, FeaturesFlattenEveryKnob) {
  ConfigSpace space = mixed_space();
  ConfigEntity e = space.get(1 + 18 * 2 + 18 * 6 * 5 + 18 * 6 * 6 * 1);
  EXPECT_EQ(e.features(), (std::vector<double>{6, 1, 2, 1, 0, 2, 1, 2, 16}));
  for (uint64_t i = 0; i < space.size(); i += 97) EXPECT_EQ(space.get(i).features().size(), 9u);
}

TEST(ConfigSpace, JsonKeepsDefinitionOrder) {
  ConfigSpace space = mixed_space();
  ConfigEntity e = space.get(1 + 18 * 2 + 18 * 6 * 5 + 18 * 6 * 6 * 1);
  EXPECT_EQ(e.to_json(),
            R"({"tile":[6,1,2],"order":[1,0,2],"ann":["unroll","vec"],"unroll_max":16})");
  // Key order and whitespace do not matter when reading.
  ConfigEntity back = ConfigEntity::from_json(
      space,
      R"({ "unroll_max": 16, "ann": ["unroll", "vec"], "order": [1, 0, 2], "tile": [6, 1, 2] })");
  EXPECT_EQ(back.index(), e.index());
}

TEST(ConfigSpace, JsonRejectsConfigsOutsideTheSpace) {
  ConfigSpace space = mixed_space();
  const std::string rest = R"("order":[0,1,2],"ann":["none","none"],"unroll_max":0)";
  auto parse = [&](const std::string& json) { return ConfigEntity::from_json(space, json); };
  EXPECT_EQ(parse(R"({"tile":[12,1,1],)" + rest + "}").index(), 0u);
  expect_error([&] { parse(R"({"tile":[5,1,2],)" + rest + "}"); },
               {"'tile'", "[5, 1, 2]", "not in the config space"});
  expect_error([&] { parse(R"({"tile":[6,2],)" + rest + "}"); },
               {"'tile'", "not in the config space"});
  expect_error([&] { parse(R"({"tile":"6x2",)" + rest + "}"); }, {"'tile'", "array of integers"});
  expect_error([&] { parse(R"({"tile":[6,1.5,2],)" + rest + "}"); },
               {"'tile'", "array of integers"});
  expect_error(
      [&] { parse(R"({"tile":[12,1,1],"order":[0,1,2],"ann":["vec","none"],"unroll_max":0})"); },
      {"'ann'", "not in the config space"});
  expect_error(
      [&] { parse(R"({"tile":[12,1,1],"order":[0,1,2],"ann":["none","par"],"unroll_max":0})"); },
      {"'ann'", "'par'"});
  expect_error(
      [&] { parse(R"({"tile":[12,1,1],"order":[0,1,2],"ann":["none","none"],"unroll_max":32})"); },
      {"'unroll_max'", "[32]"});
  expect_error(
      [&] { parse(R"({"tile":[12,1,1],"order":[0,1,2],"ann":["none","none"],"unroll_max":[0]})"); },
      {"'unroll_max'", "an integer"});
  expect_error([&] { parse(R"({"tile":[12,1,1],"order":[0,1,2],"ann":["none","none"]})"); },
               {"missing knob 'unroll_max'"});
  expect_error([&] { parse(R"({"tile":[12,1,1],"vec":1,)" + rest + "}"); },
               {"'vec'", "not in the config space"});
  expect_error([&] { parse("[1, 2]"); }, {"JSON object"});
  expect_error([&] { parse(R"({"tile":)"); }, {"not valid JSON"});
}

TEST(ConfigSpace, ASplitOfAnotherExtentMatchesByItsInnerFactors) {
  auto space_for = [](int64_t extent) {
    ConfigSpace space;
    space.define_split("tile", extent, {.policy = "power2", .num_outputs = 3});
    space.define_knob("k", {0, 1});
    return space;
  };
  ConfigSpace small = space_for(56), large = space_for(224);
  std::string json = small.get(small.size() - 1).to_json();  // a config tuned for extent 56
  expect_error([&] { ConfigEntity::from_json(large, json); }, {"tile", "not in the config space"});
  ConfigEntity e = ConfigEntity::from_json(large, json, /*match_split_inners=*/true);
  std::vector<int64_t> from = small.get(small.size() - 1).split("tile"), to = e.split("tile");
  EXPECT_EQ(std::vector<int64_t>(to.begin() + 1, to.end()),
            std::vector<int64_t>(from.begin() + 1, from.end()));
  EXPECT_EQ(to[0] * to[1] * to[2], 224);
  // Inner factors the other space lacks still fail, naming the knob.
  ConfigSpace tiny = space_for(4);
  expect_error([&] { ConfigEntity::from_json(tiny, json, true); }, {"tile"});
}

TEST(ConfigSpace, FallbackDefaultsToFirstCandidates) {
  ConfigSpace space = mixed_space();
  ConfigEntity f = space.fallback();
  EXPECT_EQ(f.index(), 0u);
  EXPECT_EQ(f.split("tile"), (std::vector<int64_t>{12, 1, 1}));
  EXPECT_EQ(f.knob("unroll_max"), 0);
}

TEST(ConfigSpace, FallbackSetPerKnob) {
  ConfigSpace space = mixed_space();
  space.set_fallback_split("tile", {1, 4, 3});
  space.set_fallback_annotate("ann", {Annotation::kNone, Annotation::kVectorize});
  space.set_fallback_knob("unroll_max", 64);
  ConfigEntity f = space.fallback();
  EXPECT_EQ(f.split("tile"), (std::vector<int64_t>{1, 4, 3}));
  EXPECT_EQ(f.reorder("order"), (std::vector<int64_t>{0, 1, 2}));  // not set: the first candidate
  EXPECT_EQ(f.annotate("ann"),
            (std::vector<Annotation>{Annotation::kNone, Annotation::kVectorize}));
  EXPECT_EQ(f.knob("unroll_max"), 64);
  EXPECT_EQ(space.get(f.index()).to_json(), f.to_json());
  space.set_fallback_reorder("order", {2, 1, 0});
  EXPECT_EQ(space.fallback().reorder("order"), (std::vector<int64_t>{2, 1, 0}));

  expect_error([&] { space.set_fallback_split("tile", {2, 2, 2}); },
               {"'tile'", "[2, 2, 2]", "not in the config space"});
  expect_error([&] { space.set_fallback_reorder("order", {0, 1}); },
               {"'order'", "not in the config space"});
  expect_error([&] { space.set_fallback_knob("unroll_max", 7); }, {"'unroll_max'", "[7]"});
  expect_error([&] { space.set_fallback_knob("tile", 4); },
               {"'tile'", "is of kind split, not knob"});
  expect_error([&] { space.set_fallback_split("nope", {12, 1, 1}); }, {"'nope'"});
  // A rejected fallback leaves the previous one in place.
  EXPECT_EQ(space.fallback().knob("unroll_max"), 64);
}

}  // namespace
}  // namespace tessel::topi
