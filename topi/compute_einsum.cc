// Einsum as one te compute: the equation is parsed once (ir/ops/sequence_shapes.h, shared with type
// inference and the reference), output labels become the compute axes and every other label a
// reduce axis. Each operand reads at its labels' variables, so a repeated label reads a diagonal
// and a size-1 dim broadcasts (index 0), as in reference/sequence.cc.
#include <fmt/format.h>

#include "ir/error.h"
#include "ir/ops/sequence_shapes.h"
#include "topi/compute_util.h"
#include "topi/op_compute.h"

namespace tessel::topi {
namespace {

Outputs einsum(const OpCall& call, const Inputs& in, const std::string& name) {
  std::vector<std::vector<int64_t>> shapes;
  for (const te::Tensor& t : in) shapes.push_back(const_shape(t, call.describe()));
  graph::ops::EinsumSpec spec = graph::ops::parse_einsum(call, shapes);
  // Summed labels: those an operand uses that the output does not, in first-use order.
  std::vector<bool> is_output(spec.label_dims.size(), false), summed(spec.label_dims.size(), false);
  for (int l : spec.output_labels) is_output[l] = true;
  std::vector<te::IterVar> axes;
  std::vector<int> axis_label;
  for (const auto& labels : spec.operand_labels) {
    for (int l : labels) {
      if (is_output[l] || summed[l]) continue;
      summed[l] = true;
      axes.push_back(
          te::reduce_axis(0, static_cast<int>(spec.label_dims[l]), fmt::format("k{}", l)));
      axis_label.push_back(l);
    }
  }
  return {te::compute(
      output_shape(call, 0),
      [&](const std::vector<Var>& o) {
        std::vector<PrimExpr> label_var(spec.label_dims.size());
        for (size_t d = 0; d < o.size(); ++d) label_var[spec.output_labels[d]] = o[d];
        for (size_t k = 0; k < axes.size(); ++k) label_var[axis_label[k]] = axes[k];
        PrimExpr term;
        for (size_t i = 0; i < in.size(); ++i) {
          std::vector<PrimExpr> idx;
          for (size_t d = 0; d < shapes[i].size(); ++d) {
            idx.push_back(shapes[i][d] == 1 ? PrimExpr(0) : label_var[spec.operand_labels[i][d]]);
          }
          term = term.defined() ? term * in[i](idx) : in[i](idx);
        }
        return axes.empty() ? term : te::sum(term, axes);
      },
      name)};
}

}  // namespace

std::vector<OpCompute> einsum_computes() { return {{OpKind::Einsum, einsum}}; }

}  // namespace tessel::topi
