// The one list of te's node kinds. They are numbered after ir's (ir/node_kinds.h), so ir's
// functors, printer, equality and the tir passes never list them: ir's functors hand them to
// visit_non_ir_expr / mutate_non_ir_expr, which te's functors (te/functor.h) override.
#pragma once

#include <cstdint>

#include "ir/node.h"

#define TESSEL_TE_EXPR_KINDS(X) \
  X(ProducerLoad)               \
  X(Reduce)

#define TESSEL_TE_OTHER_KINDS(X) \
  X(IterVar)                     \
  X(CommReducer)                 \
  X(PlaceholderOp)               \
  X(ComputeOp)

namespace tessel::te {

enum class TeKind : uint8_t {
#define TESSEL_TE_KIND_ENUM(Name) Name,
  TESSEL_TE_EXPR_KINDS(TESSEL_TE_KIND_ENUM) TESSEL_TE_OTHER_KINDS(TESSEL_TE_KIND_ENUM)
#undef TESSEL_TE_KIND_ENUM
};

#define TESSEL_TE_KIND_COUNT(Name) +1
inline constexpr int kNumTeKinds =
    0 TESSEL_TE_EXPR_KINDS(TESSEL_TE_KIND_COUNT) TESSEL_TE_OTHER_KINDS(TESSEL_TE_KIND_COUNT);
#undef TESSEL_TE_KIND_COUNT
static_assert(kNumIrNodeKinds + kNumTeKinds <= 256, "node kinds are a uint8_t");

// The NodeKind that tags te's nodes of kind `k`.
constexpr NodeKind node_kind(TeKind k) {
  return static_cast<NodeKind>(kNumIrNodeKinds + static_cast<uint8_t>(k));
}

// The te kind of a node that is not an ir node (InternalError for an ir kind).
TeKind te_kind(NodeKind k);
const char* te_kind_name(TeKind k);

// A case label per te kind, for switches that list kinds with the X-macros above.
#define TESSEL_TE_KIND_CASE(Name) case ::tessel::te::TeKind::Name:

}  // namespace tessel::te
