#include "topi/op_compute.h"

#include <unordered_map>

namespace tessel::topi {

const ComputeFn* find_compute(const std::string& op_type) {
  static const std::unordered_map<std::string, ComputeFn> table = [] {
    std::unordered_map<std::string, ComputeFn> m;
    for (auto part : {elementwise_computes, tensor_computes, reduce_computes, nn_computes,
                      loss_computes, index_computes, einsum_computes, resize_computes}) {
      for (auto& op : part()) m[op.name] = std::move(op.compute);
    }
    return m;
  }();
  auto it = table.find(op_type);
  return it == table.end() ? nullptr : &it->second;
}

}  // namespace tessel::topi
