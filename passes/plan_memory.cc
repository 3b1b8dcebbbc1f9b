#include "passes/plan_memory.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace tessel::passes {

namespace {

std::string mib(int64_t bytes) {
  return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / (1 << 20));
}

}  // namespace

int64_t value_bytes(const graph::Value& v) {
  int64_t n = std::max<int64_t>(v.type.numel(), 0);
  return n * v.type.dtype.bytes() * v.type.dtype.lanes();
}

std::string MemoryPlan::summary() const {
  return fmt::format(
      "memory plan: {} intermediates in {} buffers, {} ({} unplanned); inputs, outputs and weights "
      "{}",
      buffer_of.size(), buffer_bytes.size(), mib(planned_bytes), mib(unplanned_bytes),
      mib(fixed_bytes));
}

MemoryPlan plan_memory(const graph::Graph& g, const std::vector<KernelIO>& kernels,
                       const std::map<graph::ValueId, ValueAlias>& aliases) {
  std::set<graph::ValueId> outputs(g.outputs.begin(), g.outputs.end());
  // The kernel after which each value is dead: its last reader, or its writer when nobody reads it.
  std::map<graph::ValueId, size_t> last_use;
  for (size_t k = 0; k < kernels.size(); ++k) {
    for (graph::ValueId v : kernels[k].writes) last_use.emplace(v, k);
    for (graph::ValueId v : kernels[k].reads) last_use[v] = k;
  }
  // A host lives as long as its parts; a part's death frees nothing.
  for (const auto& [part, alias] : aliases) {
    auto it = last_use.find(part);
    if (it == last_use.end()) continue;
    auto [host, fresh] = last_use.emplace(alias.host, it->second);
    if (!fresh) host->second = std::max(host->second, it->second);
    last_use.erase(it);
  }
  std::vector<std::vector<graph::ValueId>> dying(kernels.size());
  for (const auto& [v, k] : last_use) dying[k].push_back(v);
  MemoryPlan plan;
  std::set<graph::ValueId> seen;
  auto count_fixed = [&](graph::ValueId v) {
    if (seen.insert(v).second) plan.fixed_bytes += value_bytes(g.value(v));
  };
  std::vector<int> free;  // buffers free for reuse
  auto allocate = [&](graph::ValueId v) {
    int64_t bytes = value_bytes(g.value(v));
    plan.unplanned_bytes += bytes;
    auto fits = [&](int b) { return plan.buffer_bytes[b] >= bytes; };
    auto best = free.end();
    for (auto it = free.begin(); it != free.end(); ++it) {
      bool better = best == free.end() ||
                    (fits(*it) ? !fits(*best) || plan.buffer_bytes[*it] < plan.buffer_bytes[*best]
                               : !fits(*best) && plan.buffer_bytes[*it] > plan.buffer_bytes[*best]);
      if (better) best = it;
    }
    int buffer;
    if (best == free.end()) {
      buffer = static_cast<int>(plan.buffer_bytes.size());
      plan.buffer_bytes.push_back(bytes);
    } else {
      buffer = *best;
      free.erase(best);
      plan.buffer_bytes[buffer] = std::max(plan.buffer_bytes[buffer], bytes);
    }
    plan.buffer_of[v] = buffer;
  };
  // An aliased value shares its host's buffer, at its offset.
  auto place = [&](graph::ValueId v, const ValueAlias& alias) {
    plan.buffer_of[v] = plan.buffer_of[alias.host];
    if (alias.offset != 0) plan.offset_of[v] = alias.offset;
  };
  for (size_t k = 0; k < kernels.size(); ++k) {
    for (graph::ValueId v : kernels[k].reads) {
      if (plan.buffer_of.count(v)) continue;
      // A view that no kernel writes (a Concat of some of its host's parts): its parts have
      // been written, so the host has its buffer.
      auto alias = aliases.find(v);
      if (alias != aliases.end() && plan.buffer_of.count(alias->second.host))
        place(v, alias->second);
      else
        count_fixed(v);
    }
    for (graph::ValueId v : kernels[k].writes) {
      if (outputs.count(v) || plan.buffer_of.count(v)) {
        count_fixed(v);
        continue;
      }
      auto alias = aliases.find(v);
      if (alias == aliases.end()) {
        allocate(v);
        continue;
      }
      if (!plan.buffer_of.count(alias->second.host)) allocate(alias->second.host);
      place(v, alias->second);
    }
    for (graph::ValueId v : dying[k]) {
      auto it = plan.buffer_of.find(v);
      if (it != plan.buffer_of.end()) free.push_back(it->second);
    }
  }
  for (int64_t b : plan.buffer_bytes) plan.planned_bytes += b;
  return plan;
}

}  // namespace tessel::passes
