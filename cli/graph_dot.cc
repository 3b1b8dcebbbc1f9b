#include "cli/graph_dot.h"

#include <fmt/format.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "ir/error.h"
#include "ir/op_table.h"

extern char** environ;

namespace tessel::cli {

namespace {

// Fill colors by pattern, light enough for black text; a stronger pattern is a warmer color.
const char* pattern_color(graph::OpPattern p) {
  switch (p) {
    case graph::OpPattern::kElemWise:
      return "#d8ecd0";
    case graph::OpPattern::kBroadcast:
      return "#cfe3f2";
    case graph::OpPattern::kInjective:
      return "#e3d9f0";
    case graph::OpPattern::kCommReduce:
      return "#fbe6b8";
    case graph::OpPattern::kOutEWiseFusable:
      return "#f7cdbf";
    case graph::OpPattern::kOpaque:
      return "#dddddd";
  }
  return "#ffffff";
}

// A DOT string literal.
std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

std::string input_id(graph::ValueId v) { return fmt::format("in{}", v); }
std::string output_id(graph::ValueId v) { return fmt::format("out{}", v); }
std::string node_id(graph::NodeId n) { return fmt::format("n{}", n); }

}  // namespace

std::string fused_graph_dot(const graph::Graph& g, const std::vector<passes::FusedGroup>& groups,
                            const std::string& title) {
  std::string out = fmt::format(
      "digraph tessel {{\n  label={};\n  labelloc=t;\n  fontname=\"Helvetica\";\n"
      "  node [fontname=\"Helvetica\", fontsize=10];\n  edge [fontname=\"Helvetica\", "
      "fontsize=8];\n",
      quoted(title));
  for (graph::ValueId v : g.inputs) {
    out += fmt::format("  {} [shape=ellipse, label={}];\n", input_id(v),
                       quoted(g.value(v).name + "\n" + g.value(v).type.str()));
  }
  std::set<graph::OpPattern> patterns;
  for (size_t i = 0; i < groups.size(); ++i) {
    const passes::FusedGroup& group = groups[i];
    patterns.insert(group.pattern);
    std::string ops;
    for (graph::NodeId n : group.nodes)
      ops += (ops.empty() ? "" : "+") + std::string(g.nodes[n].def().name());
    // A group that computes nothing (its outputs are empty) gets no kernel: dashed.
    out += fmt::format(
        "  subgraph cluster_{} {{\n    label={};\n    style={};\n    fillcolor={};\n", i,
        quoted(fmt::format("group {} [{}] ({})", i, ops, op_pattern_name(group.pattern))),
        quoted(passes::computes_nothing(g, group) ? "filled,rounded,dashed" : "filled,rounded"),
        quoted(pattern_color(group.pattern)));
    for (graph::NodeId n : group.nodes) {
      const graph::Node& node = g.nodes[n];
      out +=
          fmt::format("    {} [shape=box, style=\"rounded,filled\", fillcolor=white, label={}];\n",
                      node_id(n), quoted(std::string(node.def().name()) + "\n" + node.name));
    }
    out += "  }\n";
  }
  // Edges carry the tensor's type; weights and other constants are left out.
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    for (graph::ValueId v : g.nodes[n].inputs) {
      if (v == graph::kNoValue || g.value(v).constant) continue;
      const graph::Value& value = g.value(v);
      std::string from = value.producer < 0 ? input_id(v) : node_id(value.producer);
      out += fmt::format("  {} -> {} [label={}];\n", from, node_id(static_cast<graph::NodeId>(n)),
                         quoted(value.type.str()));
    }
  }
  for (graph::ValueId v : g.outputs) {
    const graph::Value& value = g.value(v);
    out += fmt::format("  {} [shape=ellipse, label={}];\n", output_id(v),
                       quoted(value.name + "\n" + value.type.str()));
    std::string from = value.producer < 0 ? input_id(v) : node_id(value.producer);
    out += fmt::format("  {} -> {} [label={}];\n", from, output_id(v), quoted(value.type.str()));
  }
  out += "  subgraph cluster_legend {\n    label=\"patterns\";\n    style=rounded;\n";
  for (graph::OpPattern p : patterns) {
    out += fmt::format("    legend_{} [shape=box, style=filled, fillcolor={}, label={}];\n",
                       static_cast<int>(p), quoted(pattern_color(p)), quoted(op_pattern_name(p)));
  }
  return out + "  }\n}\n";
}

void render_svg_with_graphviz(const std::string& dot_text, const std::string& svg_path) {
  // dot reads a file rather than a pipe, so a failure cannot leave it blocked on a full pipe.
  std::filesystem::path dot_file =
      std::filesystem::temp_directory_path() / fmt::format("tessel-{}.dot", getpid());
  std::ofstream(dot_file) << dot_text;
  std::string out_flag = "-o" + svg_path;
  std::string in = dot_file.string();
  char* argv[] = {const_cast<char*>("dot"), const_cast<char*>("-Tsvg"), out_flag.data(), in.data(),
                  nullptr};
  pid_t pid;
  int err = posix_spawnp(&pid, "dot", nullptr, nullptr, argv, environ);
  int status = 0;
  if (err == 0) waitpid(pid, &status, 0);
  std::filesystem::remove(dot_file);
  if (err != 0) {
    throw Error(
        "--svg needs Graphviz's dot, which is not installed (Debian: apt-get install graphviz); "
        "--dot FILE writes the graph without it");
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    throw Error(fmt::format("Graphviz's dot failed to write {}", svg_path));
  }
}

}  // namespace tessel::cli
