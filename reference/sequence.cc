// Reference Einsum and If, and the sequence op list (recurrent ops in sequence_rnn.cc, Resize in
// sequence_resize.cc).
#include <fmt/format.h>

#include "ir/error.h"
#include "ir/ops/sequence_shapes.h"
#include "reference/nn_util.h"
#include "reference/ref_ops.h"

namespace tessel::reference {

namespace {

using graph::Node;

// Loops over every used label (output labels first, then the summed ones); each operand reads at
// the sum over its dims of label index x stride, so repeated labels read diagonals and size-1 dims
// broadcast with stride 0.
std::vector<TensorData> eval_einsum(const graph::Graph&, const Node& node,
                                    const std::vector<TensorData>& in) {
  std::vector<std::vector<int64_t>> shapes;
  for (const TensorData& t : in) shapes.push_back(t.shape());
  graph::ops::EinsumSpec spec = graph::ops::parse_einsum(node, shapes);
  std::vector<int> loops = spec.output_labels;
  std::vector<bool> used(spec.label_dims.size(), false);
  for (int l : loops) used[l] = true;
  for (const auto& labels : spec.operand_labels) {
    for (int l : labels) {
      if (!used[l]) loops.push_back(l);
      used[l] = true;
    }
  }
  std::vector<int64_t> extent;
  for (int l : loops) extent.push_back(spec.label_dims[l]);
  // strides[i][k]: how far operand i moves when loop k advances.
  std::vector<std::vector<int64_t>> strides(in.size(), std::vector<int64_t>(loops.size(), 0));
  std::vector<std::vector<double>> values;
  for (size_t i = 0; i < in.size(); ++i) {
    std::vector<int64_t> dim_strides = strides_of(in[i].shape());
    for (size_t d = 0; d < shapes[i].size(); ++d) {
      if (shapes[i][d] == 1) continue;
      size_t k = static_cast<size_t>(
          std::find(loops.begin(), loops.end(), spec.operand_labels[i][d]) - loops.begin());
      strides[i][k] += dim_strides[d];
    }
    values.push_back(nn::to_doubles(in[i]));
  }
  size_t out_rank = spec.output_labels.size();
  std::vector<int64_t> out_shape(extent.begin(),
                                 extent.begin() + static_cast<std::ptrdiff_t>(out_rank));
  int64_t out_size = nn::product(out_shape, 0, out_rank),
          inner = nn::product(extent, out_rank, extent.size());
  std::vector<double> y(static_cast<size_t>(out_size), 0.0);
  std::vector<int64_t> idx(loops.size(), 0);
  for (int64_t o = 0; o < out_size && inner > 0; ++o) {
    for (int64_t s = 0; s < inner; ++s) {
      // Loop indices from the flat (output, summed) position.
      int64_t rest = o * inner + s;
      for (size_t k = loops.size(); k-- > 0;) {
        idx[k] = rest % extent[k];
        rest /= extent[k];
      }
      double term = 1;
      for (size_t i = 0; i < in.size(); ++i) {
        int64_t off = 0;
        for (size_t k = 0; k < loops.size(); ++k) off += idx[k] * strides[i][k];
        term *= values[i][off];
      }
      y[o] += term;
    }
  }
  return {nn::from_doubles(in.at(0).dtype(), out_shape, y)};
}

// Runs the chosen branch; its inputs are looked up by name among the If's inputs 1...
std::vector<TensorData> eval_if(const graph::Graph& g, const Node& node,
                                const std::vector<TensorData>& in) {
  if (in.empty() || !in[0].defined() || in[0].numel() != 1) {
    throw Error(fmt::format("{}: the condition must be a single bool", node.describe()));
  }
  std::shared_ptr<graph::Graph> branch =
      node.attr_graph(in[0].get_int(0) != 0 ? "then_branch" : "else_branch");
  if (!branch)
    throw Error(fmt::format("{}: needs then_branch and else_branch graphs", node.describe()));
  std::map<std::string, TensorData> outer;
  for (size_t i = 1; i < in.size(); ++i) {
    if (node.inputs[i] != graph::kNoValue) outer[g.value(node.inputs[i]).name] = in[i];
  }
  return run(*branch, outer);
}

}  // namespace

std::vector<RefOp> sequence_ref_ops() {
  std::vector<RefOp> ops{{OpKind::Einsum, eval_einsum}, {OpKind::If, eval_if}};
  for (auto part : {nn::rnn_ref_ops, nn::resize_ref_ops}) {
    for (auto& op : part()) ops.push_back(std::move(op));
  }
  return ops;
}

}  // namespace tessel::reference
