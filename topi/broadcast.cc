#include "topi/broadcast.h"

#include <fmt/format.h>

#include "ir/error.h"
#include "ir/printer.h"

namespace tessel::topi {

std::vector<PrimExpr> broadcast_shape(const std::vector<PrimExpr>& a,
                                      const std::vector<PrimExpr>& b, const std::string& name) {
  size_t rank = std::max(a.size(), b.size());
  std::vector<PrimExpr> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    PrimExpr x = i < rank - a.size() ? PrimExpr(1) : a[i - (rank - a.size())];
    PrimExpr y = i < rank - b.size() ? PrimExpr(1) : b[i - (rank - b.size())];
    if (is_one(x)) {
      out[i] = y;
    } else if (is_one(y) || x.same_as(y) ||
               (as_const_int(x) && as_const_int(y) && *as_const_int(x) == *as_const_int(y))) {
      out[i] = x;
    } else {
      throw Error(
          fmt::format("{}: dims {} and {} do not broadcast", name, to_string(x), to_string(y)));
    }
  }
  return out;
}

std::vector<PrimExpr> broadcast_index(const te::Tensor& t, const std::vector<Var>& out) {
  std::vector<PrimExpr> idx;
  size_t offset = out.size() - t.ndim();
  for (int d = 0; d < t.ndim(); ++d) {
    idx.push_back(is_one(t.shape()[d]) ? PrimExpr(0) : PrimExpr(out[offset + d]));
  }
  return idx;
}

te::Tensor unary(const te::Tensor& x, const std::function<PrimExpr(PrimExpr)>& f,
                 const std::string& name) {
  return te::compute(
      x.shape(),
      [&](const std::vector<Var>& i) { return f(x(std::vector<PrimExpr>(i.begin(), i.end()))); },
      name);
}

te::Tensor binary(const te::Tensor& a, const te::Tensor& b,
                  const std::function<PrimExpr(PrimExpr, PrimExpr)>& f, const std::string& name) {
  return te::compute(
      broadcast_shape(a.shape(), b.shape(), name),
      [&](const std::vector<Var>& i) {
        return f(a(broadcast_index(a, i)), b(broadcast_index(b, i)));
      },
      name);
}

// Rows shorter than this are left to the fused axis: vectors of 2 or 3 lanes gain little.
constexpr int64_t kMinRowVector = 4;
// Fused-axis vectors need a last axis of at least this many vectors (below, rows of two axes).
constexpr int64_t kMinFusedRowVectors = 4;

void schedule_injective(te::Schedule& s, const te::Tensor& out, int vector_lanes) {
  te::Stage st = s[out];
  if (out.ndim() == 0) return;
  int64_t total = 1;
  for (const auto& d : out.shape()) {
    const int64_t* v = as_const_int(d);
    total = v ? total * *v : -1;
    if (!v) break;
  }
  if (total >= 0 && total < vector_lanes) return;  // too small to vectorize
  bool parallel = total < 0 || total >= kParallelMinWork;
  // Rows that are not a whole number of vectors (a padded conv input, 34 wide; a 13 x 13 feature
  // map) are vectorized along the last axis, with a scalar tail, or as one short vector:
  // vectorizing the fused axis would take each row's index apart with vector div/mod, making
  // every access a gather or scatter (a Concat of 13 x 13 maps ran at 3 GB/s).
  const int64_t* last = as_const_int(out.shape().back());
  // A short last axis of whole vectors (a channel block, ir/ops/conv_packing.h): vectors of the
  // fused axis would pay a div/mod per axis for every one or two vectors (a blocked DenseNet
  // Concat ran 1.3-1.9x longer than the NCHW one); rows of the last two axes pay them per row.
  int row_axes = 0;  // the trailing axes that make a row, 0 for vectors of the fused axis
  if (last && *last >= kMinRowVector && *last % vector_lanes != 0 && out.ndim() > 1) {
    row_axes = 1;
  } else if (last && *last % vector_lanes == 0 && *last < kMinFusedRowVectors * vector_lanes &&
             out.ndim() >= 3) {
    row_axes = 2;
  }
  if (row_axes > 0) {
    te::IterVar rows = st.axis(0);
    for (int d = 1; d < out.ndim() - row_axes; ++d) rows = st.fuse(rows, st.axis(d));
    vectorize_last_axis(st, out, vector_lanes);
    if (parallel) st.parallel(rows);
    return;
  }
  te::IterVar fused = st.axis(0);
  for (int d = 1; d < out.ndim(); ++d) fused = st.fuse(fused, st.axis(d));
  auto [outer, inner] = st.split(fused, vector_lanes);
  st.vectorize(inner);
  if (parallel) st.parallel(outer);
}

te::IterVar parallel_outer(te::Stage& st, const std::vector<te::IterVar>& outer) {
  te::IterVar fused = outer[0];
  for (size_t i = 1; i < outer.size(); ++i) fused = st.fuse(fused, outer[i]);
  st.parallel(fused);
  return fused;
}

te::IterVar vectorize_last_axis(te::Stage& st, const te::Tensor& out, int vector_lanes) {
  te::IterVar columns = st.axis(out.ndim() - 1);
  const int64_t* last = as_const_int(out.shape().back());
  if (!last || *last > vector_lanes) columns = st.split(columns, vector_lanes).second;
  st.vectorize(columns);
  return columns;
}

}  // namespace tessel::topi
