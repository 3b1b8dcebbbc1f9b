#include "passes/concat_in_place.h"

#include <algorithm>
#include <optional>

#include "ir/ops/shape_util.h"
#include "runtime/ndarray.h"

namespace tessel::passes {

namespace {

// A Concat group whose output is one contiguous run of bytes per input.
struct Candidate {
  size_t group;
  graph::ValueId output;
  std::vector<graph::ValueId> parts;
};

// The Concat groups whose inputs are contiguous ranges of their static output (every dim before
// the axis 1), which is not a graph output.
std::vector<Candidate> candidates(const graph::Graph& g, const std::vector<FusedGroup>& groups,
                                  const std::set<graph::ValueId>& outputs) {
  std::vector<Candidate> found;
  for (size_t i = 0; i < groups.size(); ++i) {
    const FusedGroup& group = groups[i];
    if (group.nodes.size() != 1) continue;
    const graph::Node& concat = g.nodes[static_cast<size_t>(group.nodes[0])];
    if (concat.op != graph::OpKind::Concat) continue;
    graph::ValueId out = concat.outputs[0];
    const graph::TensorType& type = g.value(out).type;
    if (!type.is_static() || outputs.count(out)) continue;
    int64_t axis = graph::ops::normalize_axis(concat.attr_int("axis", 0),
                                              static_cast<int64_t>(type.shape.size()), concat);
    if (std::all_of(type.shape.begin(), type.shape.begin() + axis,
                    [](int64_t d) { return d == 1; }))
      found.push_back({i, out, concat.inputs});
  }
  return found;
}

// The byte offset in `host` of `run` when its parts are consecutive parts of the host; nullopt
// otherwise.
std::optional<int64_t> offset_of_run(const graph::Graph& g, const Candidate& host,
                                     const std::vector<graph::ValueId>& run) {
  auto at = std::search(host.parts.begin(), host.parts.end(), run.begin(), run.end());
  if (run.empty() || at == host.parts.end()) return std::nullopt;
  int64_t offset = 0;
  for (auto it = host.parts.begin(); it != at; ++it) offset += value_bytes(g.value(*it));
  return offset;
}

// Where the first of `hosts` that has `parts` as a run of its parts, in order, has them.
std::optional<ValueAlias> view_in(const graph::Graph& g, const std::vector<const Candidate*>& hosts,
                                  const std::vector<graph::ValueId>& parts) {
  for (const Candidate* host : hosts) {
    if (std::optional<int64_t> offset = offset_of_run(g, *host, parts))
      return ValueAlias{host->output, *offset};
  }
  return std::nullopt;
}

// Each alias re-pointed at the root of its chain of hosts (a nested Concat's output is a part of
// the next), with the offsets added up.
void resolve_chains(std::map<graph::ValueId, ValueAlias>& aliases) {
  for (auto& [value, alias] : aliases) {
    for (auto up = aliases.find(alias.host); up != aliases.end(); up = aliases.find(alias.host))
      alias = ValueAlias{up->second.host, alias.offset + up->second.offset};
  }
}

}  // namespace

InPlaceConcats plan_in_place_concats(const graph::Graph& g, const std::vector<FusedGroup>& groups) {
  std::set<graph::ValueId> outputs(g.outputs.begin(), g.outputs.end());
  std::set<graph::ValueId> computed;  // written by a kernel
  for (const FusedGroup& group : groups) {
    if (!computes_nothing(g, group)) computed.insert(group.outputs.begin(), group.outputs.end());
  }
  // The Concats of most parts first: DenseNet's block, as torchvision writes it, concatenates its
  // input and each layer's features after every layer, each Concat a prefix of the block's last.
  std::vector<Candidate> concats = candidates(g, groups, outputs);
  std::stable_sort(concats.begin(), concats.end(), [](const Candidate& a, const Candidate& b) {
    return a.parts.size() > b.parts.size();
  });
  InPlaceConcats result;
  std::vector<const Candidate*> hosts;
  for (const Candidate& concat : concats) {
    // A view: a run of a host's parts, in order, is already where this Concat would put them.
    // Not for a part of another Concat (a value has one place).
    if (!result.aliases.count(concat.output)) {
      if (std::optional<ValueAlias> view = view_in(g, hosts, concat.parts)) {
        result.aliases.emplace(concat.output, *view);
        result.groups.insert(concat.group);
        continue;
      }
    }
    // A host. Its output may itself be a part of a host (DenseNet's block written as a chain,
    // each Concat of the one before and a layer's features): the parts then live in that one.
    std::map<graph::ValueId, ValueAlias> parts;
    int64_t offset = 0;
    bool ok = true;
    for (graph::ValueId v : concat.parts) {
      // Kernels require their arguments aligned as the runtime allocates buffers.
      ok = ok && computed.count(v) && !outputs.count(v) && !result.aliases.count(v) &&
           offset % static_cast<int64_t>(runtime::kArrayAlignment) == 0 &&
           parts.emplace(v, ValueAlias{concat.output, offset}).second;
      offset += value_bytes(g.value(v));
    }
    if (!ok) continue;
    result.groups.insert(concat.group);
    hosts.push_back(&concat);
    result.aliases.insert(parts.begin(), parts.end());
  }
  resolve_chains(result.aliases);
  return result;
}

}  // namespace tessel::passes
