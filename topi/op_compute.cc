#include "topi/op_compute.h"

#include <fmt/format.h>

#include "ir/error.h"

namespace tessel::topi {

const graph::TensorType& OpCall::output_type(size_t i) const {
  TESSEL_ICHECK(wants_output(i)) << describe() << ": output " << i << " is not wanted";
  return *outputs[i];
}

const graph::TensorData& OpCall::required_constant(size_t i, const std::string& what) const {
  const graph::TensorData* t = constant(i, what);
  if (!t) throw Error(fmt::format("{}: input {} ({}) is required", describe(), i, what));
  return *t;
}

graph::ops::ParamInput OpCall::params() const {
  return [this](size_t i) { return constant(i, "a parameter"); };
}

const ComputeFn* find_compute(OpKind op) {
  static const std::vector<ComputeFn> table = [] {
    std::vector<ComputeFn> t(graph::kNumOpKinds);
    for (auto part : {elementwise_computes, tensor_computes, reduce_computes, nn_computes,
                      loss_computes, index_computes, einsum_computes, resize_computes}) {
      for (auto& c : part()) t[static_cast<size_t>(c.op)] = std::move(c.compute);
    }
    return t;
  }();
  const ComputeFn& fn = table[static_cast<size_t>(op)];
  return fn ? &fn : nullptr;
}

}  // namespace tessel::topi
