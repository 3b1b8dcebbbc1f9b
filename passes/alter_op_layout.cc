#include "passes/alter_op_layout.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <optional>

#include "ir/error.h"
#include "ir/op_table.h"
#include "ir/ops/conv_packing.h"
#include "passes/infer_type.h"
#include "passes/pack_conv_weights.h"

namespace tessel::passes {

namespace {

using graph::Graph;
using graph::Node;
using graph::OpKind;
using graph::ValueId;

// Union-find over values: the classes that share a layout.
class LayoutClasses {
 public:
  explicit LayoutClasses(size_t values) : parent_(values) {
    std::iota(parent_.begin(), parent_.end(), ValueId{0});
  }
  ValueId find(ValueId v) {
    while (parent_[v] != v) v = parent_[v] = parent_[parent_[v]];
    return v;
  }
  void unite(ValueId a, ValueId b) { parent_[find(a)] = find(b); }

 private:
  std::vector<ValueId> parent_;
};

bool is_windowed_pool(const Node& n) {
  return (n.op == OpKind::MaxPool || n.op == OpKind::AveragePool) && n.outputs.size() == 1;
}

// The convs that read and write blocks in place of NCHW.
bool is_blocked_conv(const Node& n) {
  return n.op == OpKind::ConvNCHWc || n.op == OpKind::ConvWinograd;
}

bool is_global_pool(const Node& n) {
  return n.op == OpKind::GlobalAveragePool || n.op == OpKind::GlobalMaxPool;
}

bool is_elementwise(const Node& n) {
  graph::OpPattern p = n.def().pattern;
  return (p == graph::OpPattern::kElemWise || p == graph::OpPattern::kBroadcast) &&
         n.outputs.size() == 1;
}

bool is_channel_concat(const Graph& g, const Node& n) {
  if (n.op != OpKind::Concat || n.outputs.size() != 1) return false;
  auto rank = static_cast<int64_t>(g.value(n.outputs[0]).type.shape.size());
  int64_t axis = n.attr_int("axis", 0);
  return axis == 1 || axis == 1 - rank;
}

// The shape that constant operand `s` of an elementwise op takes when the op's [N, C, s...] output
// of rank `rank` is blocked: unchanged when it is constant along the channels, C / b with a
// trailing b when it holds one value per channel (its elements keep their order), none when it
// varies along another axis.
std::optional<std::vector<int64_t>> blocked_operand_shape(const std::vector<int64_t>& s,
                                                          size_t rank, int64_t block) {
  if (s.size() > rank) return std::nullopt;
  size_t offset = rank - s.size();  // s aligns with the output's trailing axes
  std::optional<size_t> channel;
  for (size_t d = 0; d < s.size(); ++d) {
    if (s[d] == 1) continue;
    if (d + offset != 1) return std::nullopt;
    channel = d;
  }
  if (!channel) return s;
  if (s[*channel] % block != 0) return std::nullopt;  // a padded block has no values to hold
  std::vector<int64_t> blocked = s;
  blocked[*channel] /= block;
  blocked.push_back(block);
  return blocked;
}

// A Conv that packs once its input and output are blocked: a depthwise one (group = C = M, constant
// weights, whole blocks of channels), which then reads and writes vectors of a block, or one that
// pack_conv_weights could have packed and left direct (its rule and the tuning records weigh an
// NCHW input and output).
bool packs_on_blocks(const Graph& g, const Node& n, int64_t block) {
  if (n.op != OpKind::Conv || n.inputs.size() < 2) return false;
  if (is_packable(g, n, block)) return true;
  const graph::TensorType& x = g.value(n.inputs[0]).type;
  const graph::Value& w = g.value(n.inputs[1]);
  int64_t group = n.attr_int("group", 1);
  return w.constant && w.type.dtype.is_float() && w.type.shape.size() >= 3 &&
         w.type.shape[1] == 1 && group > 1 && group % block == 0 && w.type.shape[0] == group &&
         x.is_static() && x.shape[1] == group;
}

// Whether a conv's bias, if it has one, is a constant vector that pad_bias can pad.
bool paddable_bias(const Graph& g, const Node& conv) {
  if (conv.inputs.size() < 3 || conv.inputs[2] == graph::kNoValue) return true;
  const graph::Value& b = g.value(conv.inputs[2]);
  return b.constant && b.type.shape.size() == 1;
}

bool blockable(const graph::Value& v) {
  const std::vector<int64_t>& s = v.type.shape;
  return !v.constant && v.type.is_static() && s.size() >= 3;
}

// A value whose channels leave the last block padded: blocked, it is read only by ops that
// compute the padding as channels of their own (elementwise ops without per-channel constants)
// or skip it (the global pools, given "output_channels"), and written only by a packed conv.
bool padded(const graph::Value& v, int64_t block) {
  return v.type.shape.size() >= 3 && v.type.shape[1] % block != 0;
}

// Whether each value is blocked. `forced`: values that must stay NCHW whatever the graph says
// (both sides of convs that pack on blocks but had one side NCHW, found by the caller).
std::vector<bool> plan(const Graph& g, const std::vector<bool>& forced, int64_t block) {
  size_t n = g.values.size();
  LayoutClasses classes(n);
  std::vector<bool> nchw(n), conv(n);  // a member needs NCHW / touches a packed or Winograd conv
  auto is_padded = [&](ValueId v) { return padded(g.value(v), block); };
  for (size_t v = 0; v < n; ++v) nchw[v] = forced[v] || !blockable(g.values[v]);
  for (ValueId v : g.inputs) nchw[v] = true;
  for (ValueId v : g.outputs) nchw[v] = true;
  for (const Node& node : g.nodes) {
    if (is_blocked_conv(node) || packs_on_blocks(g, node, block)) {
      ValueId in = node.inputs[0], out = node.outputs[0];
      conv[in] = conv[out] = true;
      // A padded block in reads as channels of X; out, it needs a bias that pad_bias pads.
      if (is_padded(in)) nchw[in] = true;
      if (is_padded(out) && !paddable_bias(g, node)) nchw[out] = true;
    } else if (is_windowed_pool(node)) {
      classes.unite(node.inputs[0], node.outputs[0]);
      if (is_padded(node.inputs[0])) nchw[node.inputs[0]] = true;
    } else if (is_global_pool(node)) {
      nchw[node.outputs[0]] = true;
    } else if (is_channel_concat(g, node)) {
      for (ValueId v : node.inputs) classes.unite(v, node.outputs[0]);
      if (std::any_of(node.inputs.begin(), node.inputs.end(), is_padded))
        nchw[node.outputs[0]] = true;
    } else if (is_elementwise(node)) {
      ValueId out = node.outputs[0];
      const std::vector<int64_t>& shape = g.value(out).type.shape;
      for (ValueId v : node.inputs) {
        if (v == graph::kNoValue) continue;
        const graph::Value& in = g.value(v);
        if (in.constant) {
          if (!blocked_operand_shape(in.type.shape, shape.size(), block)) nchw[out] = true;
        } else if (in.type.shape == shape) {
          classes.unite(v, out);
        } else {
          nchw[v] = nchw[out] = true;
        }
      }
    } else {  // any other op reads and writes NCHW
      for (ValueId v : node.inputs) {
        if (v != graph::kNoValue) nchw[v] = true;
      }
      for (ValueId v : node.outputs) nchw[v] = true;
    }
  }
  std::vector<bool> class_nchw(n), class_conv(n);
  for (size_t v = 0; v < n; ++v) {
    ValueId root = classes.find(static_cast<ValueId>(v));
    class_nchw[root] = class_nchw[root] || nchw[v];
    class_conv[root] = class_conv[root] || conv[v];
  }
  std::vector<bool> blocked(n);
  for (size_t v = 0; v < n; ++v) {
    ValueId root = classes.find(static_cast<ValueId>(v));
    blocked[v] = !class_nchw[root] && class_conv[root];
  }
  return blocked;
}

// Plans until every Conv that packs on blocks reads and writes blocks or neither: packed with one
// side NCHW it ran slower than direct (MobileNetV2 on Zen 3: its depthwise conv of 96 channels
// at stride 2, 0.38 -> 0.82 ms with an NCHW output; its 1x1 16 -> 96 conv at 112x112, 0.63 ms
// direct, 0.46 blocked, 1.11 packed in NCHW). Each round forces both sides of the others to NCHW.
std::vector<bool> plan(const Graph& g, int64_t block) {
  std::vector<bool> forced(g.values.size());
  for (;;) {
    std::vector<bool> blocked = plan(g, forced, block);
    bool changed = false;
    for (const Node& node : g.nodes) {
      if (!packs_on_blocks(g, node, block)) continue;
      ValueId in = node.inputs[0], out = node.outputs[0];
      if (blocked[in] != blocked[out]) changed = forced[in] = forced[out] = true;
    }
    if (!changed) return blocked;
  }
}

// A packed conv writing its padded last block whole: its bias with zeros for the padding, one
// padded copy per bias (`padded_of`).
void pad_bias(Graph& g, Node& conv, int64_t block, std::map<ValueId, ValueId>& padded_of) {
  if (conv.inputs.size() < 3 || conv.inputs[2] == graph::kNoValue) return;
  TESSEL_ICHECK(paddable_bias(g, conv)) << conv.describe() << ": a bias that cannot be padded";
  auto [it, fresh] = padded_of.emplace(conv.inputs[2], conv.inputs[2]);
  if (fresh) {
    const graph::Value& b = g.value(conv.inputs[2]);
    int64_t channels = b.type.shape[0], whole = graph::ops::padded_channels(channels, block);
    graph::TensorData padded =
        graph::ops::resize_channels(b.constant->reshaped({1, channels}), whole);
    std::string name = b.name + "_padded";
    it->second = g.add_constant(std::move(name), padded.reshaped({whole}));  // may move g's values
  }
  conv.inputs[2] = it->second;
}

}  // namespace

void alter_op_layout(Graph& g, const CpuModel& cpu) {
  int64_t block = conv_channel_block(cpu);
  std::vector<bool> blocked = plan(g, block);
  std::map<ValueId, ValueId> blocked_constant, padded_bias;
  PackedWeights packed_of;
  for (Node& node : g.nodes) {  // adding constants leaves g.nodes in place
    if (node.outputs.empty()) continue;
    bool in = !node.inputs.empty() && node.inputs[0] != graph::kNoValue && blocked[node.inputs[0]];
    bool out = blocked[node.outputs[0]];
    if (packs_on_blocks(g, node, block) && in) pack_conv(g, node, block, packed_of);
    if (graph::ops::reads_channel_blocks(node.op)) {  // the convs and the pools
      if (in) node.attrs["input_block"] = graph::Attr(block);
      if (out) node.attrs["output_block"] = graph::Attr(block);
      if (in && is_global_pool(node) && padded(g.value(node.inputs[0]), block)) {
        node.attrs["output_channels"] = graph::Attr(g.value(node.inputs[0]).type.shape[1]);
      }
      if (out && node.has_attr("output_channels")) pad_bias(g, node, block, padded_bias);
    } else if (out && node.op == OpKind::Concat) {
      node.attrs["axis"] = graph::Attr(int64_t{1});
    } else if (out) {  // elementwise: block its per-channel constants
      size_t rank = g.value(node.outputs[0]).type.shape.size();
      for (ValueId& v : node.inputs) {
        if (v == graph::kNoValue || !g.value(v).constant) continue;
        auto [it, fresh] = blocked_constant.emplace(v, v);
        if (fresh) {
          const graph::Value& c = g.value(v);
          std::vector<int64_t> shape = *blocked_operand_shape(c.type.shape, rank, block);
          if (shape != c.type.shape) {
            std::string name = c.name + "_blocked";
            graph::TensorData data = c.constant->reshaped(std::move(shape));
            it->second = g.add_constant(std::move(name), std::move(data));  // may move g's values
          }
        }
        v = it->second;
      }
    }
  }
  infer_type(g);
}

}  // namespace tessel::passes
