#include "passes/infer_type.h"

#include <fmt/format.h>

#include "ir/error.h"
#include "ir/op_table.h"
#include "ir/ops/conv_packing.h"
#include "passes/fold_constant.h"
#include "passes/graph_util.h"

namespace tessel::passes {
namespace {

// `where()`: "node 'x' (Add): output 'y'" or "graph input 'x'".
template <class Where>
void check_element_count(const graph::TensorType& t, Where where) {
  if (t.numel() > graph::kMaxTensorElements) {
    throw Error(
        fmt::format("{} is {}, more than {} elements (kernels index tensors with 32-bit "
                    "integers)",
                    where(), t.str(), graph::kMaxTensorElements));
  }
}

}  // namespace

void infer_type(graph::Graph& g) {
  for (graph::ValueId v : g.inputs)
    check_element_count(g.value(v).type,
                        [&] { return fmt::format("graph input '{}'", g.value(v).name); });
  bool folded = false;
  for (graph::NodeId n = 0; n < static_cast<graph::NodeId>(g.nodes.size()); ++n) {
    const graph::Node& node = g.nodes[n];
    if (try_fold_node(g, n, kShapeFoldLimit)) {
      folded = true;
      continue;
    }
    graph::ops::check_channel_blocks(node);
    std::vector<graph::TensorType> types = node.def().infer_type(g, node);
    if (types.size() < node.outputs.size()) {
      throw InternalError(fmt::format("{}: type inference gave {} types for {} outputs",
                                      node.describe(), types.size(), node.outputs.size()));
    }
    for (size_t i = 0; i < node.outputs.size(); ++i) {
      if (node.outputs[i] == graph::kNoValue) continue;
      if (!types[i].is_static()) {
        throw Error(fmt::format(
            "{}: output '{}' has a shape that is not static ({}); give all input shapes",
            node.describe(), g.value(node.outputs[i]).name, types[i].str()));
      }
      check_element_count(types[i], [&] {
        return fmt::format("{}: output '{}'", node.describe(), g.value(node.outputs[i]).name);
      });
      g.value(node.outputs[i]).type = types[i];
    }
  }
  if (folded) remove_dead_code(g);
}

}  // namespace tessel::passes
