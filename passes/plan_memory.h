// Memory planning: the values that kernels compute and that are not graph outputs share buffers
// when their lifetimes do not overlap. A value lives from the kernel that writes it to the last
// kernel that reads it; a buffer is free again only after that kernel, so no kernel reads and
// writes the same buffer. Buffers are reused best-fit (the smallest free buffer that is large
// enough, else the largest free one, grown). Graph inputs, outputs and constants are not planned.
// An aliased value (a Concat input that its producer writes in place, or a Concat of a run of
// another's inputs, passes/concat_in_place.h) is a view at an offset into its host's buffer: the
// host's buffer is taken when the first of its parts is written, and lives until the last reader
// of the host or of any part or view.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace tessel::passes {

struct KernelIO {
  std::vector<graph::ValueId> reads, writes;
};

// The bytes of a value's array.
int64_t value_bytes(const graph::Value& v);

// A value computed in place inside another: bytes [offset, offset + its size) of `host`.
struct ValueAlias {
  graph::ValueId host;
  int64_t offset = 0;
};

struct MemoryPlan {
  std::vector<int64_t> buffer_bytes;            // one entry per shared buffer
  std::map<graph::ValueId, int> buffer_of;      // planned value → its buffer
  std::map<graph::ValueId, int64_t> offset_of;  // byte offset in its buffer, where not 0
  int64_t planned_bytes = 0;                    // sum of buffer_bytes: the intermediates' peak
  int64_t unplanned_bytes = 0;                  // what the intermediates take with a buffer each
  int64_t fixed_bytes = 0;                      // inputs, outputs and constants (not shared)
  // "memory plan: 12 intermediates in 3 buffers, 1.2 MiB (4.5 MiB unplanned); weights/IO 98.0 MiB"
  std::string summary() const;
};

// `aliases`: value → where it lives inside another value; the hosts, and the aliased values that
// no kernel writes (views), are written by no kernel and are neither graph inputs nor outputs.
MemoryPlan plan_memory(const graph::Graph& g, const std::vector<KernelIO>& kernels,
                       const std::map<graph::ValueId, ValueAlias>& aliases = {});

}  // namespace tessel::passes
