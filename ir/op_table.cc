#include "ir/op_table.h"

#include <unordered_map>

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

const std::vector<OpDef>& all_ops() {
  static const std::vector<OpDef> table = [] {
    std::vector<OpDef> all;
    for (auto part : {ops::elementwise_defs, ops::reduce_defs, ops::tensor_defs, ops::nn_defs,
                      ops::sequence_defs, ops::loss_defs}) {
      auto defs = part();
      all.insert(all.end(), defs.begin(), defs.end());
    }
    return all;
  }();
  return table;
}

const OpDef* find_op(const std::string& op_type) {
  static const std::unordered_map<std::string, const OpDef*> index = [] {
    std::unordered_map<std::string, const OpDef*> m;
    for (const auto& d : all_ops()) m[d.name] = &d;
    return m;
  }();
  auto it = index.find(op_type);
  return it == index.end() ? nullptr : it->second;
}

}  // namespace tessel::graph
