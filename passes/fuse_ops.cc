#include "passes/fuse_ops.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <unordered_set>

#include "ir/error.h"

namespace tessel::passes {

using graph::Graph;
using graph::kNoValue;
using graph::NodeId;
using graph::OpPattern;
using graph::ValueId;

namespace {

constexpr NodeId kSink = -1;  // the graph outputs

OpPattern pattern_of(const Graph& g, NodeId n) { return g.nodes[n].def().pattern; }

class Partitioner {
 public:
  Partitioner(const Graph& g, const FuseOptions& opt)
      : g_(g), opt_(opt), n_(static_cast<int>(g.nodes.size())) {
    consumers_.resize(n_);
    auto readers = g.consumers();
    std::vector<bool> is_output(g.values.size(), false);
    for (ValueId v : g.outputs) is_output[v] = true;
    pattern_.resize(n_);
    for (NodeId i = 0; i < n_; ++i) {
      pattern_[i] = pattern_of(g, i);
      for (ValueId out : g.nodes[i].outputs) {
        if (out == kNoValue) continue;
        if (is_output[out]) consumers_[i].push_back({kSink, OpPattern::kOpaque});
        for (NodeId c : readers[out]) consumers_[i].push_back({c, edge_pattern(c, out)});
      }
    }
    build_post_dominators();
    parent_.resize(n_);
    for (NodeId i = 0; i < n_; ++i) parent_[i] = i;
    group_pattern_ = pattern_;
    group_size_.assign(n_, 1);
  }

  std::vector<FusedGroup> run() {
    for (int phase = 0; phase < 3; ++phase) {
      for (NodeId i = 0; i < n_; ++i) fuse_node(i, phase);
    }
    return collect();
  }

 private:
  struct Edge {
    NodeId to;
    OpPattern pattern;
  };

  // A broadcast op reading an input of its own output shape is elementwise along that edge.
  OpPattern edge_pattern(NodeId consumer, ValueId in) const {
    OpPattern p = pattern_of(g_, consumer);
    if (p == OpPattern::kBroadcast) {
      const auto& out = g_.value(g_.nodes[consumer].outputs[0]).type;
      if (g_.value(in).type.shape == out.shape) return OpPattern::kElemWise;
    }
    return p;
  }

  // Immediate post-dominators (kSink when the only common successor is the graph output).
  void build_post_dominators() {
    ipdom_.assign(n_, kSink);
    depth_.assign(n_, 0);
    dom_pattern_.assign(n_, OpPattern::kElemWise);
    for (NodeId i = n_ - 1; i >= 0; --i) {
      if (consumers_[i].empty()) {
        ipdom_[i] = kSink;
        depth_[i] = 1;
        continue;
      }
      NodeId lca = consumers_[i][0].to;
      OpPattern p = consumers_[i][0].pattern;
      for (size_t k = 1; k < consumers_[i].size(); ++k) {
        lca = common_post_dominator(lca, consumers_[i][k].to);
        p = std::max(p, consumers_[i][k].pattern);
      }
      ipdom_[i] = lca;
      dom_pattern_[i] = p;
      depth_[i] = lca == kSink ? 1 : depth_[lca] + 1;
    }
  }

  NodeId common_post_dominator(NodeId a, NodeId b) const {
    while (a != b) {
      if (a == kSink || b == kSink) return kSink;
      if (depth_[a] > depth_[b]) {
        a = ipdom_[a];
      } else if (depth_[b] > depth_[a]) {
        b = ipdom_[b];
      } else {
        a = ipdom_[a];
        b = ipdom_[b];
      }
    }
    return a;
  }

  NodeId find(NodeId i) {
    while (parent_[i] != i) i = parent_[i] = parent_[parent_[i]];
    return i;
  }

  // Calls visit(to) for each edge leaving src or a node reached from it before sink (to may be sink
  // or kSink; each node in between is entered once) and stops when visit returns false. Iterative:
  // an unrolled recurrence makes paths far deeper than the call stack.
  template <class Visit>
  bool walk_to(NodeId src, NodeId sink, Visit visit) {
    std::unordered_set<NodeId> entered;
    std::vector<NodeId> stack{src};
    while (!stack.empty()) {
      NodeId from = stack.back();
      stack.pop_back();
      for (const Edge& e : consumers_[from]) {
        bool inner = e.to != kSink && e.to != sink;
        if (inner && !entered.insert(e.to).second) continue;
        if (!visit(e.to)) return false;
        if (inner) stack.push_back(e.to);
      }
    }
    return true;
  }

  // Every node on a path from `src` (exclusive) to `sink` satisfies cond(pattern, is_sink).
  template <class Cond>
  bool check_path(NodeId src, NodeId sink, Cond cond) {
    return walk_to(src, sink, [&](NodeId to) {
      return to != kSink && cond(group_pattern_[find(to)], to == sink);
    });
  }

  // Joins every node on the paths from src to sink into sink's group.
  void commit(NodeId src, NodeId sink) {
    merge(src, sink);
    walk_to(src, sink, [&](NodeId to) {
      if (to != kSink && to != sink) merge(to, sink);
      return true;
    });
  }

  void merge(NodeId a, NodeId b) {
    NodeId ra = find(a), rb = find(b);
    if (ra == rb) return;
    parent_[ra] = rb;
    group_size_[rb] += group_size_[ra];
    group_pattern_[rb] = std::max(group_pattern_[rb], group_pattern_[ra]);
  }

  // Nodes in the groups that src's paths to sink would join, to apply the size limit up front.
  int joined_size(NodeId src, NodeId sink) {
    std::set<NodeId> groups{find(src)};
    walk_to(src, sink, [&](NodeId to) {
      if (to != kSink) groups.insert(find(to));
      return true;
    });
    int total = 0;
    for (NodeId r : groups) total += group_size_[r];
    return total;
  }

  void fuse_node(NodeId i, int phase) {
    NodeId gi = find(i);
    NodeId sink = ipdom_[i];
    if (sink == kSink || find(sink) == gi) return;
    if (joined_size(i, sink) > opt_.max_fused_ops) return;
    OpPattern p = group_pattern_[gi];
    auto at_most = [](OpPattern limit) {
      return [limit](OpPattern k, bool) { return k <= limit; };
    };
    if (p == OpPattern::kOpaque) return;
    if (p == OpPattern::kOutEWiseFusable) {
      if (phase != 0 || dom_pattern_[i] != OpPattern::kElemWise) return;
      if (check_path(i, sink, at_most(OpPattern::kBroadcast))) commit(i, sink);
    } else if (p <= OpPattern::kBroadcast) {
      if (pattern_[sink] > OpPattern::kCommReduce && pattern_[sink] != OpPattern::kOutEWiseFusable)
        return;
      auto cond = [](OpPattern k, bool is_sink) {
        return is_sink ? k <= OpPattern::kOutEWiseFusable : k <= OpPattern::kBroadcast;
      };
      if (check_path(i, sink, cond)) commit(i, sink);
    } else if (p == OpPattern::kInjective) {
      if (phase != 1) return;  // after OutEWiseFusable ops have taken their epilogues
      if (check_path(i, sink, at_most(OpPattern::kInjective))) commit(i, sink);
    }
  }

  std::vector<FusedGroup> collect() {
    std::vector<int> index(n_, -1);
    std::vector<FusedGroup> groups;
    for (NodeId i = 0; i < n_; ++i) {
      NodeId r = find(i);
      if (index[r] < 0) {
        index[r] = static_cast<int>(groups.size());
        groups.push_back(FusedGroup{{}, i, group_pattern_[r], {}, {}});
      }
      FusedGroup& grp = groups[index[r]];
      grp.nodes.push_back(i);
      if (pattern_[i] > pattern_[grp.master] ||
          (pattern_[i] == pattern_[grp.master] && pattern_[i] >= OpPattern::kCommReduce)) {
        grp.master = i;
      }
    }
    std::vector<int> group_of(n_);
    for (NodeId i = 0; i < n_; ++i) group_of[i] = index[find(i)];
    std::vector<bool> is_output(g_.values.size(), false);
    for (ValueId v : g_.outputs) is_output[v] = true;
    auto readers = g_.consumers();
    for (size_t gi = 0; gi < groups.size(); ++gi) {
      FusedGroup& grp = groups[gi];
      for (NodeId n : grp.nodes) {
        for (ValueId in : g_.nodes[n].inputs) {
          if (in == kNoValue) continue;
          NodeId p = g_.value(in).producer;
          bool outside = p < 0 || group_of[p] != static_cast<int>(gi);
          if (outside && std::find(grp.inputs.begin(), grp.inputs.end(), in) == grp.inputs.end())
            grp.inputs.push_back(in);
        }
        for (ValueId out : g_.nodes[n].outputs) {
          if (out == kNoValue) continue;
          bool escapes = is_output[out] ||
                         std::any_of(readers[out].begin(), readers[out].end(),
                                     [&](NodeId r) { return group_of[r] != static_cast<int>(gi); });
          if (escapes) grp.outputs.push_back(out);
        }
      }
    }
    split_over_limit(groups);
    return topological_order(std::move(groups));
  }

  // Orders groups so that each runs after the groups producing its inputs (Kahn's algorithm,
  // ties broken by first node, so unfused graphs keep their node order).
  std::vector<FusedGroup> topological_order(std::vector<FusedGroup> groups) {
    std::vector<int> group_of(n_);
    for (size_t gi = 0; gi < groups.size(); ++gi) {
      for (NodeId n : groups[gi].nodes) group_of[n] = static_cast<int>(gi);
    }
    std::vector<std::set<int>> succ(groups.size());
    std::vector<int> indegree(groups.size(), 0);
    for (size_t gi = 0; gi < groups.size(); ++gi) {
      for (ValueId in : groups[gi].inputs) {
        NodeId p = g_.value(in).producer;
        if (p >= 0 && succ[group_of[p]].insert(static_cast<int>(gi)).second) ++indegree[gi];
      }
    }
    std::set<std::pair<NodeId, int>> ready;  // (first node, group)
    for (size_t gi = 0; gi < groups.size(); ++gi) {
      if (indegree[gi] == 0) ready.insert({groups[gi].nodes.front(), static_cast<int>(gi)});
    }
    std::vector<FusedGroup> ordered;
    while (!ready.empty()) {
      int gi = ready.begin()->second;
      ready.erase(ready.begin());
      for (int s : succ[gi]) {
        if (--indegree[s] == 0) ready.insert({groups[s].nodes.front(), s});
      }
      ordered.push_back(std::move(groups[gi]));
    }
    TESSEL_ICHECK(ordered.size() == groups.size()) << "fused groups form a cycle";
    return ordered;
  }

  // A group over the argument limit is split back into single nodes (rare; keeps correctness).
  void split_over_limit(std::vector<FusedGroup>& groups) {
    if (opt_.max_function_args <= 0) return;
    std::vector<FusedGroup> out;
    for (auto& grp : groups) {
      if (static_cast<int>(grp.inputs.size() + grp.outputs.size()) <= opt_.max_function_args ||
          grp.nodes.size() == 1) {
        out.push_back(std::move(grp));
        continue;
      }
      for (NodeId n : grp.nodes) {
        FusedGroup single{{n}, n, pattern_[n], {}, {}};
        for (ValueId in : g_.nodes[n].inputs) {
          if (in != kNoValue &&
              std::find(single.inputs.begin(), single.inputs.end(), in) == single.inputs.end())
            single.inputs.push_back(in);
        }
        for (ValueId o : g_.nodes[n].outputs) {
          if (o != kNoValue) single.outputs.push_back(o);
        }
        out.push_back(std::move(single));
      }
    }
    groups = std::move(out);
  }

  const Graph& g_;
  FuseOptions opt_;
  int n_;
  std::vector<std::vector<Edge>> consumers_;
  std::vector<OpPattern> pattern_, group_pattern_, dom_pattern_;
  std::vector<NodeId> ipdom_, parent_;
  std::vector<int> depth_, group_size_;
};

}  // namespace

std::vector<FusedGroup> fuse_ops(const Graph& g, const FuseOptions& opt) {
  return Partitioner(g, opt).run();
}

bool computes_nothing(const Graph& g, const FusedGroup& group) {
  return std::all_of(group.outputs.begin(), group.outputs.end(),
                     [&](graph::ValueId v) { return g.value(v).type.numel() == 0; });
}

std::string to_string(const Graph& g, const std::vector<FusedGroup>& groups) {
  std::string s;
  for (size_t i = 0; i < groups.size(); ++i) {
    std::vector<std::string> ops, names;
    for (NodeId n : groups[i].nodes) {
      ops.emplace_back(graph::op_kind_name(g.nodes[n].op));
      names.push_back(g.nodes[n].name);
    }
    s += fmt::format("group {} [{}] ({}): {}\n", i, fmt::join(ops, "+"),
                     graph::op_pattern_name(groups[i].pattern), fmt::join(names, ", "));
  }
  return s;
}

}  // namespace tessel::passes
