// ConvWinograd's CPU schedule (the stages are topi/compute_nn_winograd.cc's):
// - V, the transformed input tiles, at root, parallel over (channel, row of tiles); under each
//   task the padded input rows that its row of tiles reads (m + 2), vectorized, and each row's T;
//   the loops over the transform's points unrolled (their selects fold to the matrix's constants)
//   and the tiles of a row one vector (read with stride m); on blocked input over (channel block,
//   row of tiles), T per tile, a block's channels one vector;
// - the GEMMs in register tiles like ConvNCHWc's packed fallback: blocks of output channels (one
//   vector) x tiles (unrolled), the reduction over input channels outside, parallel over (point,
//   channel blocks);
// - the output in tiles of m x m pixels x one block of channels, parallel over (image, channel
//   block, row of tiles), with Z (Aᵀ M) computed per tile and the elementwise epilogue inlined;
//   blocked, Z's vectors stored whole.
#include <algorithm>
#include <numeric>

#include "ir/error.h"
#include "topi/broadcast.h"
#include "topi/register_tile.h"
#include "topi/schedule_nn.h"

namespace tessel::topi {

namespace {

const te::ComputeOpNode* compute_of(const te::Operation& op) { return op.as<te::ComputeOpNode>(); }

int64_t dim(const te::Tensor& t, int i) { return *as_const_int(t.shape()[i]); }

// The compute stage among `op`'s inputs (a placeholder when none).
te::Operation compute_input(const te::Operation& op) {
  for (const te::Operation& in : te::input_ops(op)) {
    if (compute_of(in)) return in;
  }
  return te::Operation();
}

// The stage of `s` that reads `op`.
te::Operation reader_of(const te::Schedule& s, const te::Operation& op) {
  for (const te::Stage& st : s.stages()) {
    for (const te::Operation& in : te::input_ops(st->op)) {
      if (in.same_as(op)) return st->op;
    }
  }
  return te::Operation();
}

// The GEMM's register tile: two blocks of channels where a block is one vector (each broadcast
// element of V feeds two FMAs), and as many tiles as keep the accumulators within half the
// register file, the cheapest row of them (cheapest_tile_columns, as packed_fallback).
struct GemmTile {
  int64_t blocks = 1, tiles = 1;
};

GemmTile gemm_tile(int64_t blocks, int64_t tiles, int64_t block, const CpuModel& cpu) {
  int lanes = cpu.lanes(DataType::f32());
  int64_t vectors = (block + lanes - 1) / lanes;
  GemmTile g;
  if (vectors == 1 && blocks % 2 == 0) g.blocks = 2;
  int64_t cap = std::max<int64_t>(1, cpu.vector_registers / 2 / (g.blocks * vectors));
  std::vector<int64_t> counts(cap);
  std::iota(counts.begin(), counts.end(), 1);
  g.tiles = cheapest_tile_columns(tiles, counts, cap, g.blocks * vectors, cpu);
  return g;
}

// V is [e, c, p] or, blocked, [e, c / bi, p, c % bi]: NCHW, a row of tiles one vector (read with
// stride m) and T computed per row; blocked, a vector of a block's channels, T per tile. Returns
// the parallel loop over (channel or channel block, row of tiles), under which the padded input is
// computed: at root it wrote the whole padded map (0.8 MB for ResNet-50's convs at 56x56) in a
// launch of its own and V read it back; its rows per task cost (m + 2) / m the padding's work.
// ResNet-50's Winograd convs on the Intel Xeon, timed in the model in turns: 0.90-0.95x the time
// at 56x56 and 28x28 at one thread, 0.97-1.00x at 14x14 (the sum 0.96x); 0.94x at two threads;
// ResNet-18's 0.98x / 0.93x; SqueezeNet's 0.96x / 0.96x; with AVX2 code ResNet-50's 0.95x / 0.93x.
te::IterVar schedule_input_transform(te::Schedule& s, const te::Operation& v,
                                     const te::Operation& rows, int64_t tile_cols) {
  te::Stage vs = s[v];
  te::Stage rs = s[rows];
  bool blocked = vs.leaf_iter_vars().size() == 4;
  auto [q, tx] = vs.split(vs.axis(2), tile_cols);
  te::IterVar e = vs.axis(0), c = vs.axis(1);
  if (blocked) {
    vs.reorder({c, q, tx, e, vs.axis(3)});
  } else {
    vs.reorder({c, q, e, tx});
  }
  te::IterVar row = parallel_outer(vs, {c, q});
  vs.unroll(e);
  if (blocked) {
    vs.vectorize(vs.axis(3));
    rs.compute_at(vs, tx);
    rs.vectorize(rs.axis(4));
  } else {
    if (tile_cols > 1) vs.vectorize(tx);
    rs.compute_at(vs, row);
    if (tile_cols > 1) rs.vectorize(rs.axis(3));
  }
  rs.unroll(rs.axis(0));
  rs.unroll(rs.axis(1));
  return row;
}

void schedule_gemm(te::Schedule& s, const te::Operation& gemm, const CpuModel& cpu) {
  te::Tensor out(gemm);
  GemmTile tile = gemm_tile(dim(out, 1), dim(out, 2), dim(out, 3), cpu);
  te::Tensor acc = s.cache_write(out, MemScope::kLocal);
  te::Stage gs = s[out];
  auto [kbo, kbi] = gs.split(gs.axis(1), tile.blocks);
  auto [po, pi] = gs.split(gs.axis(2), tile.tiles);
  te::IterVar e = gs.axis(0), b = gs.axis(3);
  gs.reorder({e, kbo, po, kbi, pi, b});
  parallel_outer(gs, {e, kbo});
  gs.vectorize(b);
  te::Stage as = s[acc];
  as.compute_at(gs, po);
  std::vector<te::IterVar> order{as.axis(0)};
  for (const te::IterVar& r : compute_of(acc.op())->reduce_axis) order.push_back(r);
  order.insert(order.end(), {as.axis(1), as.axis(2), as.axis(3)});
  as.reorder(order);
  if (tile.blocks > 1) as.unroll(as.axis(1));
  if (tile.tiles > 1) as.unroll(as.axis(2));
  as.vectorize(as.axis(3));
}

// The output [n, k, y, x] (or the group's output of that shape) in m x m tiles of one block of
// channels, Z computed per tile; each channel's row of a tile one vector of m pixels. (Vectors of
// the block's channels instead, as Z has them, were stores to 16 channel planes: scatters that
// took most of the kernel's time.) Blocked, [n, k / b, y, x, b]: Z's vectors stored whole, the
// tile's pixels unrolled.
void schedule_output(te::Schedule& s, const te::Tensor& out, const te::Operation& cols, int64_t m,
                     int64_t block) {
  te::Stage os = s[out];
  bool blocked = out.ndim() == 5;
  te::IterVar kb = os.axis(1), bi;
  if (!blocked) std::tie(kb, bi) = os.split(os.axis(1), block);
  auto [ty, u] = os.split(os.axis(2), m);
  auto [tx, vx] = os.split(os.axis(3), m);
  if (blocked) {
    os.reorder({os.axis(0), kb, ty, tx, u, vx, os.axis(4)});
    os.unroll(vx);
    os.vectorize(os.axis(4));
  } else {
    os.reorder({os.axis(0), kb, ty, tx, bi, u, vx});
    os.vectorize(vx);
  }
  parallel_outer(os, {os.axis(0), kb, ty});
  os.unroll(u);
  te::Stage cs = s[cols];
  cs.compute_at(os, tx);
  cs.unroll(cs.axis(0));
  cs.unroll(cs.axis(1));
  cs.vectorize(cs.axis(4));
}

}  // namespace

void schedule_winograd(te::Schedule& s, const std::vector<te::Tensor>& outputs,
                       const AnchorOp& anchor, const CpuModel& cpu, const ConfigEntity*) {
  te::Operation gemm;
  for (const te::Stage& st : s.stages()) {
    if (compute_of(st->op) && !compute_of(st->op)->reduce_axis.empty()) gemm = st->op;
  }
  te::Operation v = gemm.defined() ? compute_input(gemm) : te::Operation();
  te::Operation rows = v.defined() ? compute_input(v) : te::Operation();
  te::Operation cols = gemm.defined() ? reader_of(s, gemm) : te::Operation();
  te::Operation conv = cols.defined() ? reader_of(s, cols) : te::Operation();
  if (!rows.defined() || !conv.defined()) return schedule_default(s, outputs, anchor, cpu, nullptr);
  te::Operation pad = compute_input(rows);
  te::Tensor conv_t(conv), cols_t(cols);
  int64_t m = dim(cols_t, 0), block = dim(cols_t, 4);
  int64_t tile_cols = (dim(conv_t, 3) + m - 1) / m;
  // The output tiles the conv's values: the group's one output of its shape (the epilogue inlined
  // into it), else the conv itself.
  te::Tensor tiled = conv_t;
  if (outputs.size() == 1 && outputs[0].ndim() == conv_t.ndim()) {
    bool same = true;
    for (int d = 0; d < conv_t.ndim(); ++d)
      same = same && as_const_int(outputs[0].shape()[d]) &&
             *as_const_int(outputs[0].shape()[d]) == dim(conv_t, d);
    if (same) tiled = outputs[0];
  }
  for (te::Stage st : s.stages()) {
    const te::Operation& op = st->op;
    bool kept = op.same_as(pad) || op.same_as(rows) || op.same_as(v) || op.same_as(gemm) ||
                op.same_as(cols) || op.same_as(tiled.op());
    if (compute_of(op) && !kept && !st->is_output) st.compute_inline();
  }
  int lanes = cpu.lanes(DataType::f32());
  te::IterVar row = schedule_input_transform(s, v, rows, tile_cols);
  if (pad.defined()) {
    te::Stage ps = s[pad];
    ps.compute_at(s[v], row);
    vectorize_last_axis(ps, te::Tensor(pad), lanes);
  }
  schedule_gemm(s, gemm, cpu);
  schedule_output(s, tiled, cols, m, block);
  for (const te::Tensor& o : outputs) {
    if (!o.same_as(tiled)) schedule_injective(s, o, lanes);
  }
}

}  // namespace tessel::topi
