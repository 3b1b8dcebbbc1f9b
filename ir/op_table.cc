#include "ir/op_table.h"

#include <optional>
#include <unordered_map>

#include "ir/error.h"
#include "ir/ops/op_defs.h"

namespace tessel::graph {

const char* op_pattern_name(OpPattern p) {
  switch (p) {
    case OpPattern::kElemWise:
      return "ElemWise";
    case OpPattern::kBroadcast:
      return "Broadcast";
    case OpPattern::kInjective:
      return "Injective";
    case OpPattern::kCommReduce:
      return "CommReduce";
    case OpPattern::kOutEWiseFusable:
      return "OutEWiseFusable";
    case OpPattern::kOpaque:
      return "Opaque";
  }
  return "?";
}

const char* op_family_name(OpFamily f) {
  switch (f) {
    case OpFamily::kInjective:
      return "injective";
    case OpFamily::kReduction:
      return "reduction";
    case OpFamily::kConv:
      return "conv";
    case OpFamily::kConvNCHWc:
      return "conv_nchwc";
    case OpFamily::kConvWinograd:
      return "conv_winograd";
    case OpFamily::kDense:
      return "dense";
    case OpFamily::kPool:
      return "pool";
    case OpFamily::kSoftmaxLike:
      return "softmax_like";
    case OpFamily::kOpaque:
      return "opaque";
  }
  return "?";
}

OpFamily op_family(const OpDef& def) {
  if (def.family) return *def.family;
  switch (def.pattern) {
    case OpPattern::kElemWise:
    case OpPattern::kBroadcast:
    case OpPattern::kInjective:
      return OpFamily::kInjective;
    case OpPattern::kCommReduce:
      return OpFamily::kReduction;
    case OpPattern::kOutEWiseFusable:
    case OpPattern::kOpaque:
      return OpFamily::kOpaque;
  }
  return OpFamily::kOpaque;
}

std::string_view op_kind_name(OpKind kind) {
  static constexpr std::string_view kNames[] = {
#define TESSEL_OP_KIND_NAME(name) #name,
      TESSEL_OP_KINDS(TESSEL_OP_KIND_NAME)
#undef TESSEL_OP_KIND_NAME
  };
  return kNames[static_cast<size_t>(kind)];
}

const std::vector<OpDef>& all_ops() {
  // Each family file defines its ops in any order; the table puts them at their kind.
  static const std::vector<OpDef> table = [] {
    std::vector<std::optional<OpDef>> slots(kNumOpKinds);
    for (auto part : {ops::elementwise_defs, ops::reduce_defs, ops::tensor_defs, ops::nn_defs,
                      ops::sequence_defs, ops::loss_defs}) {
      for (OpDef& def : part()) {
        auto& slot = slots[static_cast<size_t>(def.kind)];
        TESSEL_ICHECK(!slot) << "op " << def.name() << " is defined twice";
        slot = std::move(def);
      }
    }
    std::vector<OpDef> all;
    for (size_t k = 0; k < slots.size(); ++k) {
      TESSEL_ICHECK(slots[k]) << "op " << op_kind_name(static_cast<OpKind>(k)) << " has no OpDef";
      all.push_back(std::move(*slots[k]));
    }
    return all;
  }();
  return table;
}

const OpDef& op_def(OpKind kind) { return all_ops()[static_cast<size_t>(kind)]; }

const OpDef& OpAttrs::def() const { return op_def(op); }

const OpDef* find_op(std::string_view op_type) {
  static const std::unordered_map<std::string_view, const OpDef*> index = [] {
    std::unordered_map<std::string_view, const OpDef*> m;
    for (const auto& d : all_ops()) m[d.name()] = &d;
    return m;
  }();
  auto it = index.find(op_type);
  return it == index.end() ? nullptr : it->second;
}

}  // namespace tessel::graph
