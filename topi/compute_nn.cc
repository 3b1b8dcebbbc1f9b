// The nn op table and the window helpers shared by convolutions and pools.
#include "topi/compute_nn.h"

#include <fmt/format.h>

#include "ir/error.h"
#include "topi/compute_util.h"

namespace tessel::topi {

namespace nn {

std::vector<PrimExpr> idx_exprs(const std::vector<int64_t>& v) {
  std::vector<PrimExpr> out;
  for (int64_t x : v) out.push_back(idx(x));
  return out;
}

std::vector<int64_t> static_shape(const te::Tensor& t) { return const_shape(t, t.name()); }

te::Tensor pad_spatial(const te::Tensor& x, const std::vector<int64_t>& shift,
                       const std::vector<int64_t>& stride, const std::vector<int64_t>& extent,
                       PrimExpr fill, const std::string& name) {
  size_t rank = extent.size();
  std::vector<int64_t> in;
  bool identity = true;
  for (size_t d = 0; d < rank; ++d) {
    in.push_back(*as_const_int(x.shape()[d + 2]));
    identity = identity && shift[d] == 0 && stride[d] == 1 && extent[d] <= in[d];
  }
  if (identity) return x;
  std::vector<PrimExpr> shape{x.shape()[0], x.shape()[1]};
  for (int64_t e : extent) shape.push_back(idx(e));
  shape.insert(shape.end(), x.shape().begin() + 2 + rank, x.shape().end());
  return te::compute(
      shape,
      [&](const std::vector<Var>& i) {
        std::vector<PrimExpr> at{i[0], i[1]};
        PrimExpr inside = make_const(DataType::boolean(), 1);
        for (size_t d = 0; d < rank; ++d) {
          PrimExpr p = i[d + 2] - idx(shift[d]);
          PrimExpr q = stride[d] == 1 ? p : floordiv(p, idx(stride[d]));
          inside = inside && p >= 0 && q < idx(in[d]);
          if (stride[d] != 1) inside = inside && floormod(p, idx(stride[d])) == 0;
          at.push_back(q);
        }
        at.insert(at.end(), i.begin() + 2 + rank, i.end());
        // Only the lanes inside read x (masked loads in vector code), so its index needs no
        // clamp: a clamped index made every vector of a padded row a gather (ResNet's 112 x 112
        // max pool took 10% of the model).
        return if_then_else(inside, x(at), fill);
      },
      name);
}

std::vector<int64_t> window_extent(const graph::ops::WindowGeometry& geo) {
  std::vector<int64_t> e;
  for (size_t d = 0; d < geo.kernel.size(); ++d) {
    e.push_back((geo.out[d] - 1) * geo.strides[d] + (geo.kernel[d] - 1) * geo.dilations[d] + 1);
  }
  return e;
}

std::vector<PrimExpr> window_index(PrimExpr n, PrimExpr c, const std::vector<PrimExpr>& out,
                                   const std::vector<te::IterVar>& r,
                                   const graph::ops::WindowGeometry& geo) {
  std::vector<PrimExpr> at{std::move(n), std::move(c)};
  for (size_t d = 0; d < out.size(); ++d) {
    at.push_back(out[d] * idx(geo.strides[d]) + PrimExpr(r[d]) * idx(geo.dilations[d]));
  }
  return at;
}

std::vector<te::IterVar> kernel_axes(const std::vector<int64_t>& kernel) {
  std::vector<te::IterVar> r;
  for (size_t d = 0; d < kernel.size(); ++d)
    r.push_back(te::reduce_axis(0, idx(kernel[d]), fmt::format("rk{}", d)));
  return r;
}

}  // namespace nn

std::vector<OpCompute> nn_computes() {
  std::vector<OpCompute> ops;
  for (auto part : {nn::conv_computes, nn::winograd_computes, nn::pool_computes, nn::dense_computes,
                    nn::norm_computes}) {
    for (auto& op : part()) ops.push_back(std::move(op));
  }
  return ops;
}

}  // namespace tessel::topi
