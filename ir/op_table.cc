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
