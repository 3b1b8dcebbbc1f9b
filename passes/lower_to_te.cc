#include "passes/lower_to_te.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <unordered_map>

#include "ir/error.h"
#include "ir/op_table.h"
#include "ir/ops/shape_util.h"
#include "topi/op_compute.h"
#include "topi/strategy.h"

namespace tessel::passes {

namespace {

std::string identifier(const std::string& s) {
  std::string out;
  for (char ch : s) out += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out = "v" + out;
  return out;
}

std::vector<PrimExpr> shape_exprs(const graph::TensorType& t) {
  std::vector<PrimExpr> shape;
  for (int64_t d : t.shape) shape.emplace_back(static_cast<int>(d));
  return shape;
}

// bfloat16 has no arithmetic in tir/codegen (it is i16 storage there); only Cast converts it.
void check_bfloat_use(const graph::Graph& g, const graph::Node& node) {
  if (node.op == graph::OpKind::Cast || node.op == graph::OpKind::CastLike) return;
  for (const auto* values : {&node.inputs, &node.outputs}) {
    for (graph::ValueId v : *values) {
      if (v != graph::kNoValue && g.value(v).type.dtype.is_bfloat()) {
        throw Error(fmt::format(
            "{}: bfloat16 tensors are supported only by Cast and CastLike in the compiled engine",
            node.describe()));
      }
    }
  }
}

// The anchor's op family and the parameters of the node that its schedule reads.
topi::AnchorOp anchor_of(const graph::Graph& g, const graph::Node& node) {
  topi::AnchorOp anchor{graph::op_family(node.def())};
  if (anchor.family == graph::OpFamily::kConv || anchor.family == graph::OpFamily::kConvNCHWc)
    anchor.groups = node.attr_int("group", 1);  // a depthwise ConvNCHWc keeps its group
  if (anchor.family == graph::OpFamily::kConv) {
    // ConvTranspose's strides dilate its input instead: it reads unit-stride columns.
    std::vector<int64_t> strides = node.attr_ints("strides", {});
    if (node.op == graph::OpKind::Conv && !strides.empty()) anchor.column_stride = strides.back();
  }
  if (anchor.family == graph::OpFamily::kDense) {
    auto is_vector = [&](graph::ValueId v) { return g.value(v).type.shape.size() == 1; };
    anchor.matrix_vector = is_vector(node.inputs[0]) || is_vector(node.inputs[1]);
    const std::vector<int64_t>& rhs = g.value(node.inputs[1]).type.shape;
    // MatMulPacked's B is one matrix in panels [N / b, K, b].
    anchor.shared_rhs = node.op == graph::OpKind::MatMulPacked ||
                        (!anchor.matrix_vector &&
                         std::all_of(rhs.begin(), rhs.end() - 2, [](int64_t d) { return d == 1; }));
  }
  return anchor;
}

// What topi's compute reads of `node`: its attributes, output types and constant inputs.
topi::OpCall op_call(const graph::Graph& g, const graph::Node& node) {
  topi::OpCall call{node, {}, {}, {}};
  for (graph::ValueId v : node.outputs) {
    call.outputs.push_back(v == graph::kNoValue ? std::nullopt : std::optional(g.value(v).type));
  }
  call.constant = [&g, &node](size_t i, const std::string& what) -> const graph::TensorData* {
    if (!graph::ops::has_input(node, i)) return nullptr;
    return &graph::ops::required_constant(g, node, i, what);
  };
  call.constant_if_known = [&g, &node](size_t i) -> const graph::TensorData* {
    return graph::ops::has_input(node, i) ? graph::ops::constant_input(g, node, i) : nullptr;
  };
  return call;
}

}  // namespace

LoweredGroup compute_group(const graph::Graph& g, const FusedGroup& group, int index,
                           StageNames names) {
  LoweredGroup out;
  std::vector<std::string> ops;
  for (graph::NodeId n : group.nodes) ops.emplace_back(graph::op_kind_name(g.nodes[n].op));
  out.name = fmt::format(
      "fused_{}_{}",
      fmt::join(ops.size() > 4 ? std::vector<std::string>(ops.begin(), ops.begin() + 4) : ops, "_"),
      index);
  std::transform(out.name.begin(), out.name.end(), out.name.begin(),
                 [](unsigned char ch) { return std::tolower(ch); });

  std::unordered_map<graph::ValueId, te::Tensor> tensors;
  bool by_position = names == StageNames::kByPosition;
  for (graph::ValueId v : group.inputs) {
    const graph::Value& val = g.value(v);
    std::string name = by_position ? fmt::format("in{}", out.args.size()) : identifier(val.name);
    tensors[v] = te::placeholder(shape_exprs(val.type), val.type.dtype, name);
    out.args.push_back(tensors[v]);
    out.arg_values.push_back(v);
  }
  std::vector<te::Tensor> computed;
  for (size_t j = 0; j < group.nodes.size(); ++j) {
    const graph::Node& node = g.nodes[group.nodes[j]];
    const topi::ComputeFn* fn = topi::find_compute(node.op);
    if (!fn) throw Error(fmt::format("{}: the op has no te lowering yet", node.describe()));
    check_bfloat_use(g, node);
    std::vector<te::Tensor> in;
    for (graph::ValueId v : node.inputs)
      in.push_back(v == graph::kNoValue ? te::Tensor() : tensors.at(v));
    std::vector<te::Tensor> results =
        (*fn)(op_call(g, node), in, by_position ? fmt::format("n{}", j) : identifier(node.name));
    for (size_t i = 0; i < node.outputs.size() && i < results.size(); ++i) {
      if (node.outputs[i] == graph::kNoValue) continue;
      const graph::TensorType& want = g.value(node.outputs[i]).type;
      if (results[i].dtype() != want.dtype ||
          results[i].ndim() != static_cast<int>(want.shape.size())) {
        throw InternalError(fmt::format("{}: te lowering gives {} with rank {}, the graph says {}",
                                        node.describe(), results[i].dtype().str(),
                                        results[i].ndim(), want.str()));
      }
      tensors[node.outputs[i]] = results[i];
      computed.push_back(results[i]);
    }
  }
  std::vector<te::Tensor> outputs;
  for (graph::ValueId v : group.outputs) {
    outputs.push_back(tensors.at(v));
    out.args.push_back(tensors.at(v));
    out.arg_values.push_back(v);
  }
  out.schedule = te::create_schedule(outputs);
  // Shape-steering constants (Reshape's shape, Slice's starts, ...) are read while lowering, not by
  // the kernel: drop the group inputs that no stage reads.
  for (size_t i = group.inputs.size(); i-- > 0;) {
    if (!out.schedule->find(out.args[i].op())) {
      out.args.erase(out.args.begin() + static_cast<std::ptrdiff_t>(i));
      out.arg_values.erase(out.arg_values.begin() + static_cast<std::ptrdiff_t>(i));
    }
  }
  return out;
}

std::optional<topi::ConfigSpace> template_space(const graph::Graph& g, const FusedGroup& group,
                                                const CpuModel& cpu) {
  topi::AnchorOp anchor = anchor_of(g, g.nodes[group.master]);
  const topi::Strategy& strategy = topi::strategy_for(topi::target_kind(cpu), anchor.family);
  if (!strategy.space) return std::nullopt;
  return strategy.space(compute_group(g, group, 0).schedule, anchor, cpu);
}

LoweredGroup lower_to_te(const graph::Graph& g, const FusedGroup& group, int index,
                         const CpuModel& cpu, const ConfigPicker& pick, StageNames names) {
  LoweredGroup out = compute_group(g, group, index, names);
  std::vector<te::Tensor> outputs(
      out.args.end() - static_cast<std::ptrdiff_t>(group.outputs.size()), out.args.end());
  topi::AnchorOp anchor = anchor_of(g, g.nodes[group.master]);
  const topi::Strategy& strategy = topi::strategy_for(topi::target_kind(cpu), anchor.family);
  if (strategy.space) out.space = strategy.space(out.schedule, anchor, cpu);
  if (out.space) {
    strategy.fallback(*out.space, out.schedule, anchor, cpu);
    std::optional<topi::ConfigEntity> picked = pick ? pick(*out.space) : std::nullopt;
    out.tuned = picked.has_value();
    out.config = picked ? *picked : out.space->fallback();
  }
  strategy.schedule(out.schedule, outputs, anchor, cpu, out.config ? &*out.config : nullptr);
  return out;
}

}  // namespace tessel::passes
