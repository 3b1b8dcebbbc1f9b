#include "passes/decompose_recurrent.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <tuple>

#include "ir/error.h"
#include "ir/ops/op_params.h"
#include "passes/graph_util.h"

namespace tessel::passes {

using graph::Attr;
using graph::Graph;
using graph::kNoValue;
using graph::Node;
using graph::TensorData;
using graph::ValueId;

namespace {

enum class Cell { kRnn, kGru, kLstm };

using Activation = graph::ops::RnnActivation;
using graph::OpKind;

// A weight input: its contents when constant (a copy sharing the bytes, as adding values to the
// graph moves its constants), else sliced at run time.
struct Operand {
  ValueId value = kNoValue;
  std::optional<TensorData> data;
  bool present() const { return value != kNoValue; }
};

// What an unrollable node reads, parsed once. W is [D, G*H, I], R [D, G*H, H], B [D, 2*G*H], P [D,
// 3*H].
struct Recurrence {
  Cell cell;
  int64_t gates, seq, batch, input, hidden, dirs;
  bool batch_first, reverse, input_forget, linear_before_reset;
  double clip;
  DataType dtype;
  Operand w, r, b, p;         // b and p may be absent
  ValueId x, h0, c0;          // h0 / c0 may be kNoValue
  std::vector<int64_t> lens;  // constant sequence_lens; empty: all T steps or runtime_lens
  ValueId runtime_lens = kNoValue;
  std::vector<std::vector<Activation>> acts;  // per direction, in f, g, h order
};

const TensorData* constant_input(const Graph& g, const Node& n, size_t i) {
  if (i >= n.inputs.size() || n.inputs[i] == kNoValue) return nullptr;
  const auto& c = g.value(n.inputs[i]).constant;
  return c ? &*c : nullptr;
}

bool has_input(const Node& n, size_t i) { return i < n.inputs.size() && n.inputs[i] != kNoValue; }

// The activations per direction; nullopt for one the pass cannot express (left unchanged then).
std::optional<std::vector<std::vector<Activation>>> parse_activations(const Node& node,
                                                                      int64_t dirs) {
  try {
    return graph::ops::rnn_activations(node, dirs);
  } catch (const Error&) {
    return std::nullopt;
  }
}

// nullopt when the node cannot be unrolled statically (it is then left unchanged).
std::optional<Recurrence> parse(const Graph& g, const Node& node) {
  Recurrence rc;
  if (node.op == graph::OpKind::LSTM) {
    rc.cell = Cell::kLstm, rc.gates = 4;
  } else if (node.op == graph::OpKind::GRU) {
    rc.cell = Cell::kGru, rc.gates = 3;
  } else if (node.op == graph::OpKind::RNN) {
    rc.cell = Cell::kRnn, rc.gates = 1;
  } else {
    return std::nullopt;
  }
  if (node.inputs.size() < 3 || !has_input(node, 0)) return std::nullopt;
  const graph::TensorType& xt = g.value(node.inputs[0]).type;
  rc.dtype = xt.dtype;
  if (!xt.is_static() || xt.shape.size() != 3 ||
      (rc.dtype != DataType::f32() && rc.dtype != DataType::f64())) {
    return std::nullopt;
  }
  auto operand = [&](size_t i) {
    Operand o;
    if (!has_input(node, i)) return o;
    o.value = node.inputs[i];
    if (const TensorData* c = constant_input(g, node, i)) o.data = *c;
    return o;
  };
  rc.w = operand(1), rc.r = operand(2), rc.b = operand(3);
  if (rc.cell == Cell::kLstm) rc.p = operand(7);
  if (!rc.w.present() || !rc.r.present()) return std::nullopt;
  auto shape = [&](const Operand& o) { return g.value(o.value).type.shape; };
  for (const Operand* o : {&rc.w, &rc.r, &rc.b, &rc.p}) {
    if (o->present() &&
        (!g.value(o->value).type.is_static() || g.value(o->value).type.dtype != rc.dtype)) {
      return std::nullopt;
    }
  }
  if (shape(rc.w).size() != 3 || shape(rc.r).size() != 3) return std::nullopt;
  rc.batch_first = node.attr_int("layout", 0) != 0;
  rc.seq = xt.shape[rc.batch_first ? 1 : 0];
  rc.batch = xt.shape[rc.batch_first ? 0 : 1];
  rc.input = xt.shape[2];
  rc.dirs = shape(rc.w)[0];
  rc.hidden = shape(rc.r)[2];
  if (shape(rc.w) != std::vector<int64_t>{rc.dirs, rc.gates * rc.hidden, rc.input} ||
      shape(rc.r) != std::vector<int64_t>{rc.dirs, rc.gates * rc.hidden, rc.hidden} ||
      (rc.b.present() && shape(rc.b) != std::vector<int64_t>{rc.dirs, 2 * rc.gates * rc.hidden}) ||
      (rc.p.present() && shape(rc.p) != std::vector<int64_t>{rc.dirs, 3 * rc.hidden})) {
    return std::nullopt;  // type inference or the reference reports malformed weights
  }
  std::string direction = node.attr_string("direction", "forward");
  rc.reverse = direction == "reverse";
  if (rc.dirs != (direction == "bidirectional" ? 2 : 1)) return std::nullopt;
  if (has_input(node, 4)) {
    const TensorData* lens = constant_input(g, node, 4);
    const graph::TensorType& lt = g.value(node.inputs[4]).type;
    if (lt.shape != std::vector<int64_t>{rc.batch} ||
        (lt.dtype != DataType::i32() && lt.dtype != DataType::i64())) {
      return std::nullopt;
    }
    if (!lens) rc.runtime_lens = node.inputs[4];
    bool all_full = lens != nullptr;
    for (int64_t i = 0; lens && i < rc.batch; ++i) {
      rc.lens.push_back(lens->get_int(i));
      if (rc.lens.back() < 0 || rc.lens.back() > rc.seq) return std::nullopt;
      all_full = all_full && rc.lens.back() == rc.seq;
    }
    if (all_full) rc.lens.clear();
  }
  rc.x = node.inputs[0];
  rc.h0 = has_input(node, 5) ? node.inputs[5] : kNoValue;
  rc.c0 = rc.cell == Cell::kLstm && has_input(node, 6) ? node.inputs[6] : kNoValue;
  rc.clip = node.attr_float("clip", 0.0);
  rc.input_forget = node.attr_int("input_forget", 0) != 0;
  rc.linear_before_reset = node.attr_int("linear_before_reset", 0) != 0;
  auto acts = parse_activations(node, rc.dirs);
  if (!acts) return std::nullopt;
  rc.acts = std::move(*acts);
  return rc;
}

TensorData make_tensor(DataType dtype, std::vector<int64_t> shape, const std::vector<double>& v) {
  TensorData t(dtype, std::move(shape));
  TESSEL_ICHECK(t.numel() == static_cast<int64_t>(v.size()))
      << "tensor of " << t.numel() << " from " << v.size();
  for (size_t i = 0; i < v.size(); ++i) {
    if (dtype == DataType::f32())
      t.data<float>()[i] = static_cast<float>(v[i]);
    else
      t.data<double>()[i] = v[i];
  }
  return t;
}

// Emits the unrolled subgraph of one node into `nodes`, with typed values.
class Unroller {
 public:
  Unroller(Graph& g, std::vector<Node>& nodes, const Node& node, const Recurrence& rc)
      : g_(g),
        nodes_(nodes),
        node_(node),
        rc_(rc),
        name_(node.name.empty() ? std::string(graph::op_kind_name(node.op)) : node.name) {}

  void run() {
    std::vector<std::vector<ValueId>> y(static_cast<size_t>(rc_.seq));  // [t][d]
    std::vector<ValueId> last_h, last_c;
    std::vector<ValueId> h0 = initial_state(rc_.h0, "h0"), c0 = initial_state(rc_.c0, "c0");
    for (int64_t d = 0; d < rc_.dirs; ++d) {
      std::string prefix = direction_prefix(d);
      std::vector<ValueId> xw = input_projections(d, prefix);
      bool reverse = rc_.reverse || d == 1;
      ValueId h = h0[d], c = c0[d];
      for (int64_t step = 0; step < rc_.seq; ++step) {
        int64_t t = reverse ? rc_.seq - 1 - step : step;
        // Steps at t >= lens[b] keep batch b's state; going backwards this starts b at lens[b] - 1.
        std::vector<bool> active(static_cast<size_t>(rc_.batch), true);
        if (!rc_.lens.empty()) {
          for (int64_t b = 0; b < rc_.batch; ++b) active[b] = t < rc_.lens[b];
        }
        bool any = std::find(active.begin(), active.end(), true) != active.end();
        bool all = rc_.runtime_lens == kNoValue &&
                   std::find(active.begin(), active.end(), false) == active.end();
        std::string p = fmt::format("{}_t{}", prefix, t);
        if (!any) {
          y[t].push_back(zeros());
          continue;
        }
        auto [h_new, c_new] = step_cell(d, p, xw[t], h, c);
        if (all) {
          h = h_new, c = c_new;
          y[t].push_back(h_new);
          continue;
        }
        ValueId mask =
            rc_.runtime_lens != kNoValue ? runtime_mask(t) : mask_constant(active, p + "_mask");
        h = op(OpKind::Where, {mask, h_new, h}, state_shape(), p + "_h_kept");
        if (rc_.cell == Cell::kLstm)
          c = op(OpKind::Where, {mask, c_new, c}, state_shape(), p + "_c_kept");
        y[t].push_back(op(OpKind::Where, {mask, h_new, zeros()}, state_shape(), p + "_y"));
      }
      last_h.push_back(h);
      last_c.push_back(c);
    }
    std::vector<ValueId> y_flat;
    for (const auto& per_dir : y) y_flat.insert(y_flat.end(), per_dir.begin(), per_dir.end());
    emit_output(0, y_flat, "Y");
    emit_output(1, last_h, "Y_h");
    if (rc_.cell == Cell::kLstm) emit_output(2, last_c, "Y_c");
  }

 private:
  int64_t gh() const { return rc_.gates * rc_.hidden; }
  std::string direction_prefix(int64_t d) const {
    return rc_.dirs == 2 ? fmt::format("{}_{}", name_, d == 0 ? "fw" : "bw") : name_;
  }
  std::vector<int64_t> state_shape() const { return {rc_.batch, rc_.hidden}; }
  std::vector<int64_t> shape_of(ValueId v) const { return g_.value(v).type.shape; }

  ValueId constant(const std::string& name, TensorData data) {
    return g_.add_constant(name, std::move(data));
  }
  ValueId constant(const std::string& name, std::vector<int64_t> shape,
                   const std::vector<double>& v) {
    return constant(name, make_tensor(rc_.dtype, std::move(shape), v));
  }
  ValueId scalar(const std::string& name, double v) { return constant(name, {}, {v}); }
  // Shape / split-size constants, one per distinct contents.
  ValueId int_constant(const std::vector<int64_t>& v) {
    auto it = int_constants_.find(v);
    if (it != int_constants_.end()) return it->second;
    TensorData t(DataType::i64(), {static_cast<int64_t>(v.size())});
    std::copy(v.begin(), v.end(), t.data<int64_t>());
    return int_constants_[v] =
               constant(fmt::format("{}_ints{}", name_, int_constants_.size()), std::move(t));
  }

  // Adds a node named like its first output; `out` reuses an existing value (the node's outputs).
  ValueId op(OpKind kind, std::vector<ValueId> inputs, std::vector<int64_t> shape,
             const std::string& name, std::map<std::string, Attr> attrs = {},
             ValueId out = kNoValue, std::optional<DataType> dtype = std::nullopt) {
    if (out == kNoValue)
      out = g_.add_value(name, {dtype.value_or(rc_.dtype), std::move(shape), {}});
    nodes_.push_back(Node{kind, name, std::move(inputs), {out}, std::move(attrs)});
    return out;
  }

  // Split with explicit sizes.
  std::vector<ValueId> split(ValueId x, int64_t axis, const std::vector<int64_t>& sizes,
                             const std::vector<std::string>& names) {
    std::vector<ValueId> outs;
    for (size_t i = 0; i < sizes.size(); ++i) {
      std::vector<int64_t> shape = shape_of(x);
      shape[axis] = sizes[i];
      outs.push_back(g_.add_value(names[i], {rc_.dtype, shape, {}}));
    }
    nodes_.push_back(
        Node{graph::OpKind::Split, names[0], {x, int_constant(sizes)}, outs, {{"axis", axis}}});
    return outs;
  }

  ValueId reshape(ValueId x, std::vector<int64_t> shape, const std::string& name,
                  ValueId out = kNoValue) {
    ValueId target = int_constant(shape);
    return op(OpKind::Reshape, {x, target}, std::move(shape), name, {}, out,
              g_.value(x).type.dtype);
  }

  // x[index, begin:end] of a rank-2 or rank-3 value, reshaped to drop the leading dim.
  ValueId slice_row(ValueId x, int64_t index, int64_t begin, int64_t end, const std::string& name) {
    std::vector<int64_t> starts{index, begin}, ends{index + 1, end}, axes{0, 1},
        shape = shape_of(x);
    shape[0] = 1, shape[1] = end - begin;
    ValueId sliced =
        op(OpKind::Slice, {x, int_constant(starts), int_constant(ends), int_constant(axes)}, shape,
           name + "_slice");
    shape.erase(shape.begin());
    return reshape(sliced, shape, name);
  }

  ValueId zeros() {
    if (zeros_ == kNoValue) {
      zeros_ = constant(name_ + "_zeros", state_shape(),
                        std::vector<double>(rc_.batch * rc_.hidden, 0.0));
    }
    return zeros_;
  }

  // [B, 1]: t < sequence_lens[b], computed at run time.
  ValueId runtime_mask(int64_t t) {
    auto it = runtime_masks_.find(t);
    if (it != runtime_masks_.end()) return it->second;
    const graph::TensorType& lt = g_.value(rc_.runtime_lens).type;
    TensorData step(lt.dtype, {});
    if (lt.dtype == DataType::i32())
      step.data<int32_t>()[0] = static_cast<int32_t>(t);
    else
      step.data<int64_t>()[0] = t;
    std::string p = fmt::format("{}_t{}", name_, t);
    ValueId less = op(OpKind::Less, {constant(p + "_index", std::move(step)), rc_.runtime_lens},
                      {rc_.batch}, p + "_active", {}, kNoValue, DataType::boolean());
    return runtime_masks_[t] = reshape(less, {rc_.batch, 1}, p + "_mask");
  }

  ValueId mask_constant(const std::vector<bool>& active, const std::string& name) {
    TensorData t(DataType::boolean(), {rc_.batch, 1});
    for (int64_t b = 0; b < rc_.batch; ++b) t.data<uint8_t>()[b] = active[b] ? 1 : 0;
    return constant(name, std::move(t));
  }

  // Rows [row_begin, row_end) of matrix d of a [D, rows, cols] weight, transposed: [cols, rows].
  ValueId transposed_rows(const Operand& w, int64_t d, int64_t row_begin, int64_t row_end,
                          const std::string& name) {
    std::vector<int64_t> wshape = shape_of(w.value);
    int64_t rows = wshape[1], cols = wshape[2], n = row_end - row_begin;
    if (!w.data) {
      ValueId sliced = slice_row(w.value, d, row_begin, row_end, name + "_rows");
      return op(OpKind::Transpose, {sliced}, {cols, n}, name,
                {{"perm", std::vector<int64_t>{1, 0}}});
    }
    std::vector<double> v(static_cast<size_t>(cols * n));
    for (int64_t i = row_begin; i < row_end; ++i) {
      for (int64_t k = 0; k < cols; ++k)
        v[k * n + (i - row_begin)] = w.data->get_double((d * rows + i) * cols + k);
    }
    return constant(name, {cols, n}, v);
  }

  // Entries [begin, end) of row d of a [D, n] weight: [end - begin].
  ValueId row_part(const Operand& w, int64_t d, int64_t begin, int64_t end,
                   const std::string& name) {
    if (!w.data) return slice_row(w.value, d, begin, end, name);
    std::vector<double> v;
    int64_t n = shape_of(w.value)[1];
    for (int64_t i = begin; i < end; ++i) v.push_back(w.data->get_double(d * n + i));
    return constant(name, {end - begin}, v);
  }

  // Direction d's Wb, Rb or Wb + Rb as one [G*H] value; kNoValue without B.
  ValueId bias(int64_t d, bool with_w, bool with_r, const std::string& name) {
    if (!rc_.b.present()) return kNoValue;
    if (rc_.b.data) {
      std::vector<double> v(static_cast<size_t>(gh()), 0.0);
      for (int64_t i = 0; i < gh(); ++i) {
        if (with_w) v[i] += rc_.b.data->get_double(d * 2 * gh() + i);
        if (with_r) v[i] += rc_.b.data->get_double(d * 2 * gh() + gh() + i);
      }
      return constant(name, {gh()}, v);
    }
    ValueId wb = with_w ? row_part(rc_.b, d, 0, gh(), name + "_w") : kNoValue;
    ValueId rb = with_r ? row_part(rc_.b, d, gh(), 2 * gh(), name + "_r") : kNoValue;
    if (wb == kNoValue || rb == kNoValue) return wb == kNoValue ? rb : wb;
    return op(OpKind::Add, {wb, rb}, {gh()}, name);
  }

  ValueId add_bias(ValueId x, ValueId bias, const std::string& name) {
    return bias == kNoValue ? x : op(OpKind::Add, {x, bias}, shape_of(x), name);
  }

  // Per direction [B, H] initial states: computed here when constant, else Split + Reshape at run
  // time.
  std::vector<ValueId> initial_state(ValueId v, const std::string& what) {
    std::vector<ValueId> out;
    int64_t axis = rc_.batch_first ? 1 : 0;
    if (v == kNoValue) return std::vector<ValueId>(static_cast<size_t>(rc_.dirs), zeros());
    if (std::optional<TensorData> c =
            g_.value(v).constant) {  // a copy: constant() below adds values
      for (int64_t d = 0; d < rc_.dirs; ++d) {
        std::vector<double> s;
        for (int64_t b = 0; b < rc_.batch; ++b) {
          for (int64_t k = 0; k < rc_.hidden; ++k) {
            int64_t at = rc_.batch_first ? (b * rc_.dirs + d) * rc_.hidden + k
                                         : (d * rc_.batch + b) * rc_.hidden + k;
            s.push_back(c->get_double(at));
          }
        }
        out.push_back(constant(fmt::format("{}_{}_{}", name_, what, d), state_shape(), s));
      }
      return out;
    }
    std::vector<ValueId> parts{v};
    if (rc_.dirs == 2)
      parts =
          split(v, axis, {1, 1}, {name_ + "_" + what + "_fw_in", name_ + "_" + what + "_bw_in"});
    for (int64_t d = 0; d < rc_.dirs; ++d) {
      out.push_back(reshape(parts[d], state_shape(), fmt::format("{}_{}_{}", name_, what, d)));
    }
    return out;
  }

  // X W^T + biases for all steps in one MatMul, then one [B, G*H] value per time step. With
  // linear_before_reset, Rb is added to h R^T instead (the reset gate scales its h part).
  std::vector<ValueId> input_projections(int64_t d, const std::string& prefix) {
    ValueId wt = transposed_rows(rc_.w, d, 0, gh(), prefix + "_W_t");
    bool rb_here = !(rc_.cell == Cell::kGru && rc_.linear_before_reset);
    std::vector<int64_t> all_shape = shape_of(rc_.x);
    all_shape[2] = gh();
    ValueId xw = op(OpKind::MatMul, {rc_.x, wt}, all_shape, prefix + "_xw");
    ValueId xwb = add_bias(xw, bias(d, true, rb_here, prefix + "_xw_bias"), prefix + "_xwb");
    int64_t axis = rc_.batch_first ? 1 : 0;
    std::vector<ValueId> steps{xwb};
    if (rc_.seq > 1) {
      std::vector<std::string> names;
      for (int64_t t = 0; t < rc_.seq; ++t) names.push_back(fmt::format("{}_t{}_xwb", prefix, t));
      steps = split(xwb, axis, std::vector<int64_t>(static_cast<size_t>(rc_.seq), 1), names);
    }
    std::vector<ValueId> out;
    for (int64_t t = 0; t < rc_.seq; ++t) {
      out.push_back(reshape(steps[t], {rc_.batch, gh()}, fmt::format("{}_t{}_x", prefix, t)));
    }
    return out;
  }

  ValueId clipped(ValueId x, const std::string& name) {
    if (rc_.clip <= 0) return x;
    return op(OpKind::Clip, {x, scalar(name + "_min", -rc_.clip), scalar(name + "_max", rc_.clip)},
              shape_of(x), name);
  }

  ValueId activate(const Activation& a, ValueId x, const std::string& name) {
    std::vector<int64_t> s = shape_of(x);
    if (a.op) {
      std::map<std::string, Attr> attrs;
      if (a.takes_alpha) attrs["alpha"] = a.alpha;
      if (a.takes_beta) attrs["beta"] = a.beta;
      return op(*a.op, {x}, s, name, std::move(attrs));
    }
    if (a.name == "Affine") {  // alpha * x + beta
      ValueId scaled = op(OpKind::Mul, {x, scalar(name + "_alpha", a.alpha)}, s, name + "_scaled");
      return op(OpKind::Add, {scaled, scalar(name + "_beta", a.beta)}, s, name);
    }
    // ScaledTanh: alpha * tanh(beta * x)
    ValueId inner = op(OpKind::Mul, {x, scalar(name + "_beta", a.beta)}, s, name + "_scaled");
    ValueId th = op(OpKind::Tanh, {inner}, s, name + "_tanh");
    return op(OpKind::Mul, {th, scalar(name + "_alpha", a.alpha)}, s, name);
  }

  ValueId gate(int64_t d, size_t act, ValueId pre, const std::string& name) {
    return activate(rc_.acts[d][act], clipped(pre, name + "_clip"), name);
  }

  ValueId add(ValueId a, ValueId b, const std::string& name) {
    return op(OpKind::Add, {a, b}, shape_of(a), name);
  }
  ValueId mul(ValueId a, ValueId b, const std::string& name) {
    return op(OpKind::Mul, {a, b}, shape_of(a), name);
  }

  ValueId recurrent_matmul(ValueId h, ValueId rt, const std::string& name) {
    return op(OpKind::MatMul, {h, rt}, {rc_.batch, shape_of(rt)[1]}, name);
  }

  // Per direction constants, made once: R^T (whole, or GRU's [z r] and h parts) and peepholes.
  ValueId recurrent_weight(int64_t d, int64_t row_begin, int64_t row_end, const std::string& name) {
    auto key = std::make_tuple(d, row_begin, row_end);
    auto it = weights_.find(key);
    if (it == weights_.end())
      it = weights_.emplace(key, transposed_rows(rc_.r, d, row_begin, row_end, name)).first;
    return it->second;
  }

  ValueId peephole(int64_t d, int64_t gate_index, const std::string& name) {
    auto key = std::make_pair(d, gate_index);
    auto it = peepholes_.find(key);
    if (it == peepholes_.end()) {
      int64_t begin = gate_index * rc_.hidden;
      it = peepholes_.emplace(key, row_part(rc_.p, d, begin, begin + rc_.hidden, name)).first;
    }
    return it->second;
  }

  std::pair<ValueId, ValueId> step_cell(int64_t d, const std::string& p, ValueId xw, ValueId h,
                                        ValueId c) {
    std::string wname = direction_prefix(d);
    const int64_t H = rc_.hidden;
    if (rc_.cell == Cell::kRnn) {
      ValueId pre =
          add(xw, recurrent_matmul(h, recurrent_weight(d, 0, H, wname + "_R_t"), p + "_hr"),
              p + "_pre");
      return {gate(d, 0, pre, p + "_h"), kNoValue};
    }
    if (rc_.cell == Cell::kGru) return gru_step(d, p, wname, xw, h);
    // LSTM, gate order i o f c; peepholes P are ordered i o f.
    ValueId pre =
        add(xw, recurrent_matmul(h, recurrent_weight(d, 0, 4 * H, wname + "_R_t"), p + "_hr"),
            p + "_pre");
    auto parts =
        split(pre, 1, {H, H, H, H}, {p + "_i_pre", p + "_o_pre", p + "_f_pre", p + "_c_pre"});
    auto with_peephole = [&](ValueId pre_gate, int64_t gate_index, ValueId cell,
                             const std::string& name) {
      if (!rc_.p.present()) return pre_gate;
      ValueId pc = mul(cell, peephole(d, gate_index, wname + "_P" + std::to_string(gate_index)),
                       name + "_pc");
      return add(pre_gate, pc, name + "_pre_p");
    };
    ValueId i = gate(d, 0, with_peephole(parts[0], 0, c, p + "_i"), p + "_i");
    ValueId f = rc_.input_forget
                    ? op(OpKind::Sub, {scalar(p + "_one", 1.0), i}, state_shape(), p + "_f")
                    : gate(d, 0, with_peephole(parts[2], 2, c, p + "_f"), p + "_f");
    ValueId cand = gate(d, 1, parts[3], p + "_g");
    ValueId c_new = add(mul(f, c, p + "_fc"), mul(i, cand, p + "_ig"), p + "_c");
    ValueId o = gate(d, 0, with_peephole(parts[1], 1, c_new, p + "_o"), p + "_o");
    ValueId h_new = mul(o, activate(rc_.acts[d][2], c_new, p + "_c_act"), p + "_h");
    return {h_new, c_new};
  }

  // GRU, gate order z r h. With linear_before_reset the reset gate scales (h R_h^T + Rb_h);
  // without, it scales h before R_h multiplies it.
  std::pair<ValueId, ValueId> gru_step(int64_t d, const std::string& p, const std::string& wname,
                                       ValueId xw, ValueId h) {
    const int64_t H = rc_.hidden;
    auto x_parts = split(xw, 1, {2 * H, H}, {p + "_x_zr", p + "_x_h"});
    ValueId hh_pre, z;
    if (rc_.linear_before_reset) {
      ValueId hr = recurrent_matmul(h, recurrent_weight(d, 0, 3 * H, wname + "_R_t"), p + "_hr");
      if (!hidden_bias_.count(d)) hidden_bias_[d] = bias(d, false, true, wname + "_Rb");
      ValueId hrb = add_bias(hr, hidden_bias_[d], p + "_hrb");
      auto h_parts = split(hrb, 1, {2 * H, H}, {p + "_hr_zr", p + "_hr_h"});
      ValueId zr = gate(d, 0, add(x_parts[0], h_parts[0], p + "_zr_pre"), p + "_zr");
      auto gates = split(zr, 1, {H, H}, {p + "_z", p + "_r"});
      hh_pre = add(x_parts[1], mul(gates[1], h_parts[1], p + "_r_hr"), p + "_hh_pre");
      z = gates[0];
    } else {
      ValueId hr =
          recurrent_matmul(h, recurrent_weight(d, 0, 2 * H, wname + "_R_zr_t"), p + "_hr_zr");
      ValueId act = gate(d, 0, add(x_parts[0], hr, p + "_zr_pre"), p + "_zr");
      auto gates = split(act, 1, {H, H}, {p + "_z", p + "_r"});
      ValueId rh = mul(gates[1], h, p + "_rh");
      ValueId rhr =
          recurrent_matmul(rh, recurrent_weight(d, 2 * H, 3 * H, wname + "_R_h_t"), p + "_rh_r");
      hh_pre = add(x_parts[1], rhr, p + "_hh_pre");
      z = gates[0];
    }
    ValueId hh = gate(d, 1, hh_pre, p + "_hh");
    // (1 - z) hh + z h, written as hh + z (h - hh).
    ValueId diff = op(OpKind::Sub, {h, hh}, state_shape(), p + "_h_minus_hh");
    return {add(hh, mul(z, diff, p + "_z_diff"), p + "_h"), kNoValue};
  }

  // Stacks [B, H] pieces along the direction / time axis into the node's output `index`.
  void emit_output(size_t index, const std::vector<ValueId>& pieces, const std::string& what) {
    if (index >= node_.outputs.size() || node_.outputs[index] == kNoValue) return;
    ValueId out = node_.outputs[index];
    std::vector<int64_t> final_shape = shape_of(out);
    int64_t axis = rc_.batch_first ? 1 : 0;
    std::vector<int64_t> piece_shape = rc_.batch_first
                                           ? std::vector<int64_t>{rc_.batch, 1, rc_.hidden}
                                           : std::vector<int64_t>{1, rc_.batch, rc_.hidden};
    std::vector<int64_t> cat_shape = piece_shape;
    cat_shape[axis] = static_cast<int64_t>(pieces.size());
    if (pieces.size() == 1) {
      reshape(pieces[0], final_shape, name_ + "_" + what, out);
      return;
    }
    std::vector<ValueId> parts;
    for (size_t i = 0; i < pieces.size(); ++i) {
      parts.push_back(reshape(pieces[i], piece_shape, fmt::format("{}_{}_{}", name_, what, i)));
    }
    bool direct = cat_shape == final_shape;
    ValueId cat = op(OpKind::Concat, parts, cat_shape, name_ + "_" + what + (direct ? "" : "_cat"),
                     {{"axis", axis}}, direct ? out : kNoValue);
    if (!direct) reshape(cat, final_shape, name_ + "_" + what, out);
  }

  Graph& g_;
  std::vector<Node>& nodes_;
  const Node& node_;
  const Recurrence& rc_;
  std::string name_;
  ValueId zeros_ = kNoValue;
  std::map<std::tuple<int64_t, int64_t, int64_t>, ValueId> weights_;
  std::map<std::pair<int64_t, int64_t>, ValueId> peepholes_;
  std::map<int64_t, ValueId> hidden_bias_;  // GRU with linear_before_reset: Rb per direction
  std::map<int64_t, ValueId> runtime_masks_;
  std::map<std::vector<int64_t>, ValueId> int_constants_;
};

}  // namespace

void decompose_recurrent(Graph& g) {
  std::vector<Node> nodes;
  bool changed = false;
  int64_t steps = 0;
  for (const Node& node : g.nodes) {
    std::optional<Recurrence> rc = parse(g, node);
    if (!rc) {
      nodes.push_back(node);
      continue;
    }
    steps += rc->seq * rc->dirs;
    if (steps > kMaxUnrolledSteps) {
      throw Error(
          fmt::format("{} takes the model's recurrences to {} time steps; Tessel unrolls "
                      "recurrences step by step and compiles at most {} per model",
                      node.describe(), steps, kMaxUnrolledSteps));
    }
    Unroller(g, nodes, node, *rc).run();
    changed = true;
  }
  if (changed) set_nodes(g, std::move(nodes));
}

}  // namespace tessel::passes
