#include "topi/schedule_nn.h"

#include <algorithm>
#include <optional>
#include <set>

#include "topi/broadcast.h"

namespace tessel::topi {

namespace {

using graph::Graph;
using graph::Node;

// Below this much work (points x reduction length) a thread-pool launch costs more than it saves.
constexpr int64_t kParallelMinWork = 1 << 14;

struct TileSpec {
  int row_axis = -1;        // output axis blocked into unrolled register rows; -1 for none
  int64_t row_divisor = 0;  // row blocks divide this (a conv's channels per group); 0: the axis extent
};

std::optional<TileSpec> tile_spec(const Graph& g, const Node& node) {
  const std::string& op = node.op_type;
  auto rank = [&](graph::ValueId v) { return static_cast<int>(g.value(v).type.shape.size()); };
  if (op == "Conv" || op == "ConvTranspose") {
    int64_t groups = node.attr_int("group", 1);
    const std::vector<int64_t>& w = g.value(node.inputs[1]).type.shape;
    return TileSpec{1, op == "Conv" ? w[0] / groups : w[1]};
  }
  if (op == "Gemm") return TileSpec{0, 0};
  if (op == "MatMul") {
    bool vector_operand = rank(node.inputs[0]) == 1 || rank(node.inputs[1]) == 1;
    return TileSpec{vector_operand ? -1 : rank(node.outputs[0]) - 2, 0};
  }
  static const std::set<std::string> pools = {"MaxPool",       "AveragePool",       "LpPool",
                                               "GlobalMaxPool", "GlobalAveragePool", "GlobalLpPool"};
  if (pools.count(op)) return TileSpec{};
  return std::nullopt;
}

bool is_statistics_op(const std::string& op) {
  static const std::set<std::string> ops = {"Softmax",           "LogSoftmax",         "Hardmax", "LRN",
                                            "LayerNormalization", "InstanceNormalization"};
  return ops.count(op) != 0;
}

const te::ComputeOpNode* compute_of(const te::Stage& st) { return st->op.as<te::ComputeOpNode>(); }
bool is_reduction(const te::Stage& st) { return compute_of(st) && !compute_of(st)->reduce_axis.empty(); }

int64_t extent(const IterVar& iv) { return *as_const_int(iv->dom.extent); }

int64_t product(const std::vector<int64_t>& v) {
  int64_t p = 1;
  for (int64_t x : v) p *= x;
  return p;
}

std::vector<int64_t> static_shape(const te::Tensor& t) {
  std::vector<int64_t> s;
  for (const PrimExpr& d : t.shape()) {
    const int64_t* c = as_const_int(d);
    s.push_back(c ? *c : -1);
  }
  return s;
}

// Output columns per tile: one vector (the whole row when shorter). Measured on AVX-512 convs:
// wider tiles of odd widths (28, 24-column tails) ran 3-8x slower; a short tail tile is cheap.
int64_t col_block(int64_t width, int lanes) { return std::min<int64_t>(width, lanes); }

// Unrolled rows per tile: one accumulator vector each, within the register budget (32 vector
// registers with 16 lanes on AVX-512, 16 with 8 lanes on AVX2).
int64_t row_block(int64_t divisor, int lanes) {
  int64_t budget = lanes >= 16 ? 16 : 8;
  for (int64_t r : {16, 8, 4, 2}) {
    if (r <= budget && divisor % r == 0) return r;
  }
  return 1;
}

// Fuses the loops `outer` of `st` (adjacent, outermost first) and runs them in parallel.
void parallel_outer(te::Stage& st, const std::vector<IterVar>& outer, int64_t work) {
  if (outer.empty() || work < kParallelMinWork) return;
  IterVar fused = outer[0];
  for (size_t i = 1; i < outer.size(); ++i) fused = st.fuse(fused, outer[i]);
  st.parallel(fused);
}

// Inlines the elementwise stages into their readers, except the master's direct inputs (padded
// or transposed copies), which are computed at root so the reduction reads them without checks.
void inline_all_but_inputs(te::Schedule& s, const te::Stage& master, int lanes) {
  std::vector<Operation> inputs;
  for (const Operation& op : te::input_ops(master->op)) {
    if (op.as<te::ComputeOpNode>()) inputs.push_back(op);
  }
  auto is_input = [&](const Operation& op) {
    return std::any_of(inputs.begin(), inputs.end(), [&](const Operation& i) { return i.same_as(op); });
  };
  for (te::Stage st : s.stages()) {
    if (compute_of(st) && !is_reduction(st) && !st->is_output && !is_input(st->op)) st.compute_inline();
  }
  for (const Operation& op : inputs) {
    if (!s[op]->is_output) schedule_injective(s, te::Tensor(op), lanes);
  }
}

struct OutputTile {
  IterVar attach;   // the loop of the output that the tile is computed under
  int row = -1;     // the blocked row axis, if any
  int64_t rows = 1, cols = 1;
};

// Splits the output into tiles of `rows` x `cols`, tile loops outside, and runs the outer tile
// loops in parallel.
OutputTile tile_output(te::Stage& os, const std::vector<int64_t>& shape, const TileSpec& spec, int64_t work,
                       int lanes) {
  int rank = static_cast<int>(shape.size());
  OutputTile t;
  t.row = spec.row_axis < rank - 1 ? spec.row_axis : -1;
  t.cols = col_block(shape.back(), lanes);
  if (t.row >= 0) t.rows = row_block(spec.row_divisor ? spec.row_divisor : shape[t.row], lanes);
  std::vector<IterVar> axes;
  for (int d = 0; d < rank; ++d) axes.push_back(os.axis(d));
  auto [col_o, col_i] = os.split(axes.back(), t.cols);
  IterVar row_o, row_i;
  if (t.row >= 0) std::tie(row_o, row_i) = os.split(axes[t.row], t.rows);
  std::vector<IterVar> outer;
  int64_t row_tiles = 1;
  for (int d = 0; d < rank - 1; ++d) {
    outer.push_back(d == t.row ? row_o : axes[d]);
    row_tiles *= d == t.row ? (shape[d] + t.rows - 1) / t.rows : shape[d];
  }
  // With too few row tiles to share out (a matrix-vector product), the column tiles go outermost.
  int64_t col_tiles = (shape.back() + t.cols - 1) / t.cols;
  outer.insert(row_tiles < 4 && col_tiles > row_tiles ? outer.begin() : outer.end(), col_o);
  std::vector<IterVar> order = outer;
  if (t.row >= 0) order.push_back(row_i);
  order.push_back(col_i);
  os.reorder(order);
  t.attach = outer.back();
  parallel_outer(os, outer.size() == 1 ? outer : std::vector<IterVar>(outer.begin(), outer.end() - 1), work);
  if (t.cols > 1) os.vectorize(col_i);
  if (t.rows > 1) os.unroll(row_i);
  return t;
}

// The single reduction of the group computed in register tiles of its output (see the header).
bool schedule_tiled(te::Schedule& s, const std::vector<te::Tensor>& outputs, const TileSpec& spec, int lanes) {
  std::vector<te::Stage> reductions;
  for (const te::Stage& st : s.stages()) {
    if (is_reduction(st)) reductions.push_back(st);
  }
  if (reductions.size() != 1) return false;
  te::Stage master = reductions[0];
  te::Tensor master_t(master->op);
  std::vector<int64_t> shape = static_shape(master_t);
  if (shape.empty() || product(shape) <= 0) return false;
  int64_t work = product(shape);
  for (const IterVar& r : compute_of(master)->reduce_axis) work *= extent(r);
  // A lone elementwise output of the master's shape takes the tile; otherwise the master is
  // tiled at root and every output reads it.
  bool fuse_epilogue = outputs.size() == 1 && !master->is_output && static_shape(outputs[0]) == shape;

  inline_all_but_inputs(s, master, lanes);
  te::Tensor out = fuse_epilogue ? outputs[0] : master_t;
  te::Tensor acc = fuse_epilogue ? master_t : s.cache_write(master_t, MemScope::kLocal);
  for (const te::Tensor& o : outputs) {
    if (!o.same_as(out)) schedule_injective(s, o, lanes);
  }
  te::Stage os = s[out];
  OutputTile tile = tile_output(os, shape, spec, work, lanes);

  // The tile: reduction loops outside, the unrolled rows and vectorized columns inside.
  te::Stage as = s[acc];
  as.compute_at(os, tile.attach);
  int rank = static_cast<int>(shape.size());
  std::vector<IterVar> order;
  for (int d = 0; d < rank - 1; ++d) {
    if (d != tile.row) order.push_back(as.axis(d));
  }
  for (size_t r = 0; r < compute_of(as)->reduce_axis.size(); ++r) order.push_back(as.reduce_axis(static_cast<int>(r)));
  if (tile.row >= 0) order.push_back(as.axis(tile.row));
  order.push_back(as.axis(rank - 1));
  as.reorder(order);
  if (tile.cols > 1) as.vectorize(as.axis(rank - 1));
  if (tile.rows > 1) as.unroll(as.axis(tile.row));
  return true;
}

// Softmax and normalizations: statistics (reductions) at root, parallel over their points; the
// elementwise outputs vectorized.
void schedule_statistics(te::Schedule& s, const std::vector<te::Tensor>& outputs, int lanes) {
  for (te::Stage st : s.stages()) {
    if (compute_of(st) && !is_reduction(st) && !st->is_output) st.compute_inline();
  }
  for (te::Stage st : s.stages()) {
    if (!is_reduction(st)) continue;
    const te::ComputeOpNode* c = compute_of(st);
    int64_t points = 1, len = 1;
    std::vector<IterVar> data;
    for (size_t d = 0; d < c->axis.size(); ++d) {
      points *= extent(c->axis[d]);
      data.push_back(st.axis(static_cast<int>(d)));
    }
    for (const IterVar& r : c->reduce_axis) len *= extent(r);
    if (points > 1) parallel_outer(st, data, points * len);
  }
  for (const te::Tensor& o : outputs) {
    if (!is_reduction(s[o])) schedule_injective(s, o, lanes);
  }
}

}  // namespace

bool schedule_for_master(te::Schedule& s, const Graph& g, const Node& master, const std::vector<te::Tensor>& outputs,
                         int vector_lanes) {
  if (std::optional<TileSpec> spec = tile_spec(g, master)) return schedule_tiled(s, outputs, *spec, vector_lanes);
  if (!is_statistics_op(master.op_type)) return false;
  schedule_statistics(s, outputs, vector_lanes);
  return true;
}

}  // namespace tessel::topi
