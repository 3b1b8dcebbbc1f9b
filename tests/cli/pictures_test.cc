// The pictures: `tessel inspect --dot/--svg` (the fused graph, for Graphviz) and `tessel tune
// --plot` (tuning curves as SVG that Tessel writes itself).
#include <gtest/gtest.h>
#include <libxml/parser.h>
#include <libxml/tree.h>

#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "cli_runner.h"

namespace tessel::testing {
namespace {

namespace fs = std::filesystem;

class Pictures : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tessel-pictures-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  fs::path dir_;
};

bool have_graphviz() { return run("dot -V").code == 0; }

// The DOT text with every quoted string emptied: what remains is structure.
std::string without_strings(const std::string& dot) {
  std::string out;
  bool in_string = false;
  for (size_t i = 0; i < dot.size(); ++i) {
    if (in_string && dot[i] == '\\') {
      ++i;
    } else if (dot[i] == '"') {
      in_string = !in_string;
      out += '"';
    } else if (!in_string) {
      out += dot[i];
    }
  }
  EXPECT_FALSE(in_string) << "an unterminated string";
  return out;
}

TEST_F(Pictures, InspectDrawsEachFusionGroupAsAClusterWithTypedEdges) {
  Result r = run(tessel("inspect " + kModel + " --dot " + path("fused.dot")));
  ASSERT_EQ(r.code, 0) << r.output;
  std::string dot = contents(path("fused.dot"));
  std::string bare = without_strings(dot);
  EXPECT_EQ(bare.rfind("digraph tessel {", 0), 0u) << dot;
  EXPECT_EQ(std::count(bare.begin(), bare.end(), '{'), std::count(bare.begin(), bare.end(), '}'));

  // One cluster per group that inspect lists, labelled as it lists them, plus the legend.
  std::smatch m;
  std::regex group_line(R"(\n(group \d+ \[[^\]]+\] \(\w+\)))");
  int groups = 0;
  for (auto it = r.output.cbegin(); std::regex_search(it, r.output.cend(), m, group_line);
       it = m[0].second, ++groups) {
    EXPECT_NE(dot.find("label=\"" + m[1].str() + "\""), std::string::npos) << m[1];
  }
  EXPECT_GT(groups, 3) << r.output;
  size_t clusters = 0;
  for (size_t at = 0; (at = bare.find("subgraph cluster_", at)) != std::string::npos; ++at)
    ++clusters;
  EXPECT_EQ(clusters, static_cast<size_t>(groups) + 1);

  // Every edge joins declared nodes; the input's edge carries its type.
  std::set<std::string> declared;
  std::regex decl(R"((\w+) \[)");
  for (auto it = bare.cbegin(); std::regex_search(it, bare.cend(), m, decl); it = m[0].second)
    declared.insert(m[1]);
  std::regex edge(R"((\w+) -> (\w+) \[label=)");
  int edges = 0;
  for (auto it = bare.cbegin(); std::regex_search(it, bare.cend(), m, edge); it = m[0].second) {
    EXPECT_TRUE(declared.count(m[1]) && declared.count(m[2])) << m[0];
    ++edges;
  }
  EXPECT_GT(edges, groups);
  EXPECT_NE(dot.find("[label=\"float32[1, 3, 32, 32]\"]"), std::string::npos) << dot;
  EXPECT_NE(dot.find("label=\"OutEWiseFusable\""), std::string::npos);  // the legend

  if (!have_graphviz()) GTEST_SKIP() << "Graphviz's dot is not installed";
  // Graphviz reads it, and --svg draws it.
  EXPECT_EQ(run("dot -Tsvg " + path("fused.dot") + " -o " + path("check.svg")).code, 0);
  r = run(tessel("inspect " + kModel + " --svg " + path("fused.svg")));
  ASSERT_EQ(r.code, 0) << r.output;
  std::string svg = contents(path("fused.svg"));
  EXPECT_NE(svg.find("<svg"), std::string::npos);
  EXPECT_NE(svg.find("cluster_0"), std::string::npos);
}

// The SVG's polylines: name -> data points, per panel title.
using Series = std::map<std::string, std::vector<std::pair<double, double>>>;

std::string attribute(xmlNode* n, const char* name) {
  xmlChar* v = xmlGetProp(n, reinterpret_cast<const xmlChar*>(name));
  std::string out = v ? reinterpret_cast<const char*>(v) : "";
  xmlFree(v);
  return out;
}

void collect(xmlNode* n, const std::string& panel, std::map<std::string, Series>& out) {
  for (; n; n = n->next) {
    if (n->type != XML_ELEMENT_NODE) continue;
    std::string name = reinterpret_cast<const char*>(n->name);
    std::string inner = panel;
    if (name == "g" && attribute(n, "class") == "panel") inner = attribute(n, "data-title");
    if (name == "polyline" && attribute(n, "class") == "series") {
      std::istringstream points(attribute(n, "data-points"));
      auto& series = out[panel][attribute(n, "data-series")];
      for (std::string xy; points >> xy;) {
        size_t comma = xy.find(',');
        series.emplace_back(std::stod(xy.substr(0, comma)), std::stod(xy.substr(comma + 1)));
      }
    }
    collect(n->children, inner, out);
  }
}

TEST_F(Pictures, TunePlotsEachTasksBestAgainstTrialsAndTime) {
  Result r = run(tessel("tune " + kModel + " -o " + path("records.json") + " --plot " +
                        path("curves.svg") +
                        " --tasks 0,1 --trials 3 --tuner random --number 1 --repeat 1"
                        " --min-repeat-ms 0 --model-check-rounds 0"));
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("tuning curves: " + path("curves.svg")), std::string::npos) << r.output;
  std::string svg = contents(path("curves.svg"));
  xmlDoc* doc = xmlReadMemory(svg.data(), static_cast<int>(svg.size()), "curves.svg", nullptr,
                              XML_PARSE_NONET);
  ASSERT_NE(doc, nullptr) << "not well-formed XML:\n" << svg;
  xmlNode* root = xmlDocGetRootElement(doc);
  EXPECT_STREQ(reinterpret_cast<const char*>(root->name), "svg");
  std::map<std::string, Series> panels;
  collect(root, "", panels);
  xmlFreeDoc(doc);

  ASSERT_EQ(panels.size(), 2u) << svg;
  const Series& by_trial = panels["best GFLOP/s by trial"];
  const Series& by_time = panels["best GFLOP/s by time"];
  ASSERT_EQ(by_trial.size(), 2u) << svg;
  ASSERT_EQ(by_time.size(), 2u) << svg;
  for (const auto& [name, points] : by_trial) {
    EXPECT_EQ(name.rfind("task ", 0), 0u) << name;
    ASSERT_FALSE(points.empty()) << name;
    EXPECT_EQ(points.back().first, 3) << name;  // the last trial
    EXPECT_GT(points.back().second, 0) << name;
    // Trials only grow; the best can fall back a little when re-measurements revise it.
    for (size_t i = 1; i < points.size(); ++i) EXPECT_GE(points[i].first, points[i - 1].first);
    EXPECT_EQ(by_time.at(name).size(), points.size()) << name;
  }
}

}  // namespace
}  // namespace tessel::testing
