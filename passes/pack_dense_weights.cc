#include "passes/pack_dense_weights.h"

#include <algorithm>
#include <map>
#include <utility>

#include "ir/ops/conv_packing.h"
#include "passes/graph_util.h"
#include "topi/matmul.h"
#include "topi/register_tile.h"

namespace tessel::passes {

namespace {

using graph::Node;
using graph::OpKind;
using graph::ValueId;

// Whether `node` is A [..., K] x B [K, N] with a constant float B (Gemm: A not transposed, alpha
// 1, and C, if any, added with beta 1), and a static output.
bool is_packable_dense(const graph::Graph& g, const Node& node) {
  if (node.op == OpKind::Gemm) {
    if (node.attr_int("transA", 0) != 0 || node.attr_int("transB", 0) != 0 ||
        node.attr_float("alpha", 1.0) != 1.0)
      return false;
    if (node.inputs.size() > 2 && node.inputs[2] != graph::kNoValue &&
        node.attr_float("beta", 1.0) != 1.0)
      return false;
  } else if (node.op != OpKind::MatMul) {
    return false;
  }
  if (node.inputs.size() < 2) return false;
  const graph::Value &a = g.value(node.inputs[0]), &b = g.value(node.inputs[1]);
  return a.type.shape.size() >= 2 && b.constant && b.constant->shape().size() == 2 &&
         b.constant->numel() > 0 && b.type.dtype.is_float() &&
         g.value(node.outputs[0]).type.is_static();
}

// The rows of the GEMM's register tiles: A's longest leading dim (topi's dense row axis).
int64_t gemm_rows(const std::vector<int64_t>& a) {
  return *std::max_element(a.begin(), a.end() - 1);
}

// Whether panels beat B's rows: always for a GEMM with the micro-kernel's rows, which reads each
// panel once per block of rows; for fewer rows (a matrix-vector product, all of B streamed once)
// only when B stays near the core. Measured (AVX-512, 1 thread, Zen 5 with 1 MiB of L2): an LSTM
// step's 1 MiB B 12 -> 9.5 us, the MLP's 1.6 MB first layer faster too (model 0.040 -> 0.031
// ms), but MobileNetV2's 5 MB classifier 0.16 -> 0.22 ms: B's rows are eight strided streams
// that the prefetchers fetch from memory in parallel, a panel is one.
bool panels_pay(const CpuModel& cpu, int64_t rows, size_t b_bytes) {
  return rows >= topi::matmul_cpu_config(cpu).mr ||
         b_bytes <= 2 * static_cast<size_t>(cpu.l2_bytes);
}

// B [K, N] as panels [ceil(N / b), K, b]: B^T's rows packed in blocks of b.
graph::TensorData column_panels(const graph::TensorData& b, int64_t block) {
  int64_t k = b.shape()[0], n = b.shape()[1];
  graph::TensorData bt = graph::ops::pack_output_channels(b, k).reshaped({n, k});
  return graph::ops::pack_output_channels(bt, block);
}

}  // namespace

void pack_dense_weights(graph::Graph& g, const CpuModel& cpu) {
  std::map<std::pair<ValueId, int64_t>, ValueId> packed_of;  // products sharing B share its panels
  std::vector<Node> nodes;
  for (Node& node : g.nodes) {
    if (!is_packable_dense(g, node)) {
      nodes.push_back(std::move(node));
      continue;
    }
    int64_t n = g.value(node.inputs[1]).type.shape[1];
    int64_t rows = gemm_rows(g.value(node.inputs[0]).type.shape);
    int64_t block = topi::gemm_tile_columns(cpu, rows, n);
    if (block >= n || !panels_pay(cpu, rows, g.value(node.inputs[1]).constant->nbytes())) {
      nodes.push_back(std::move(node));
      continue;
    }
    auto [it, fresh] = packed_of.emplace(std::pair(node.inputs[1], block), graph::kNoValue);
    if (fresh) {
      const graph::Value& b = g.value(node.inputs[1]);
      graph::TensorData panels = column_panels(*b.constant, block);
      it->second = g.add_constant(b.name + "_panels", std::move(panels));  // may move b
    }
    std::map<std::string, graph::Attr> attrs;
    if (n % block != 0) attrs["columns"] = graph::Attr(n);
    ValueId c = node.inputs.size() > 2 ? node.inputs[2] : graph::kNoValue;
    ValueId y = node.outputs[0];
    if (c == graph::kNoValue) {
      nodes.emplace_back(OpKind::MatMulPacked, node.name, std::vector{node.inputs[0], it->second},
                         std::vector{y}, std::move(attrs));
      continue;
    }
    // Y = A B + C: the product into a new value, then the Add of C.
    ValueId product = g.add_value(g.value(y).name + "_product", g.value(y).type);
    nodes.emplace_back(OpKind::MatMulPacked, node.name, std::vector{node.inputs[0], it->second},
                       std::vector{product}, std::move(attrs));
    nodes.emplace_back(OpKind::Add, node.name + "_c", std::vector{product, c}, std::vector{y});
  }
  set_nodes(g, std::move(nodes));
}

}  // namespace tessel::passes
