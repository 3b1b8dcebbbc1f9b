// Reference Gemm, MatMul and MatMulPacked, and the nn op list (convolutions and pools in
// nn_conv.cc, normalizations and the softmax family in nn_norm.cc).
#include <fmt/format.h>

#include "ir/error.h"
#include "ir/ops/shape_util.h"
#include "reference/nn_util.h"
#include "reference/ref_ops.h"

namespace tessel::reference {

namespace {

using graph::Node;
using nn::from_doubles;
using nn::product;
using nn::to_doubles;

std::vector<TensorData> eval_gemm(const graph::Graph&, const Node& node,
                                  const std::vector<TensorData>& in) {
  const TensorData &a = in.at(0), &b = in.at(1);
  bool ta = node.attr_int("transA", 0) != 0, tb = node.attr_int("transB", 0) != 0;
  double alpha = node.attr_float("alpha", 1.0), beta = node.attr_float("beta", 1.0);
  int64_t m = a.shape()[ta ? 1 : 0], k = a.shape()[ta ? 0 : 1], n = b.shape()[tb ? 0 : 1];
  if (b.shape()[tb ? 1 : 0] != k)
    throw Error(fmt::format("{}: inner dims of A and B differ", node.describe()));
  std::vector<double> av = to_doubles(a), bv = to_doubles(b), y(static_cast<size_t>(m * n), 0.0);
  bool has_c = in.size() > 2 && in[2].defined();
  std::vector<double> cv = has_c ? to_doubles(in[2]) : std::vector<double>{};
  // C broadcasts from its trailing dims: [], [1], [N], [1, N], [M, 1] or [M, N].
  std::vector<int64_t> c_shape = has_c ? in[2].shape() : std::vector<int64_t>{};
  while (c_shape.size() < 2) c_shape.insert(c_shape.begin(), 1);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double acc = 0;
      for (int64_t p = 0; p < k; ++p)
        acc += av[ta ? p * m + i : i * k + p] * bv[tb ? j * k + p : p * n + j];
      double c =
          has_c ? cv[(c_shape[0] == 1 ? 0 : i) * c_shape[1] + (c_shape[1] == 1 ? 0 : j)] : 0.0;
      y[i * n + j] = alpha * acc + beta * c;
    }
  }
  return {from_doubles(a.dtype(), {m, n}, y)};
}

// Batched numpy matmul; the batch index of each operand is the broadcast index with size-1 dims
// pinned to 0.
std::vector<TensorData> eval_matmul(const graph::Graph&, const Node& node,
                                    const std::vector<TensorData>& in) {
  std::vector<int64_t> as = in.at(0).shape(), bs = in.at(1).shape();
  bool a_vec = as.size() == 1, b_vec = bs.size() == 1;
  if (a_vec) as.insert(as.begin(), 1);
  if (b_vec) bs.push_back(1);
  int64_t m = as[as.size() - 2], k = as.back(), n = bs.back();
  if (bs[bs.size() - 2] != k)
    throw Error(
        fmt::format("{}: inner dims {} and {} differ", node.describe(), k, bs[bs.size() - 2]));
  std::vector<int64_t> a_batch(as.begin(), as.end() - 2), b_batch(bs.begin(), bs.end() - 2);
  std::vector<int64_t> batch = graph::ops::broadcast_shapes(a_batch, b_batch, node);
  a_batch.insert(a_batch.begin(), batch.size() - a_batch.size(), 1);
  b_batch.insert(b_batch.begin(), batch.size() - b_batch.size(), 1);
  std::vector<double> av = to_doubles(in[0]), bv = to_doubles(in[1]);
  int64_t batches = product(batch, 0, batch.size());
  std::vector<double> y(static_cast<size_t>(batches * m * n));
  for (int64_t bi = 0; bi < batches; ++bi) {
    int64_t rest = bi, a_off = 0, b_off = 0, a_stride = 1, b_stride = 1;
    for (size_t d = batch.size(); d-- > 0;) {
      int64_t idx = rest % batch[d];
      rest /= batch[d];
      a_off += (a_batch[d] == 1 ? 0 : idx) * a_stride;
      b_off += (b_batch[d] == 1 ? 0 : idx) * b_stride;
      a_stride *= a_batch[d];
      b_stride *= b_batch[d];
    }
    const double* ap = &av[a_off * m * k];
    const double* bp = &bv[b_off * k * n];
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double acc = 0;
        for (int64_t p = 0; p < k; ++p) acc += ap[i * k + p] * bp[p * n + j];
        y[(bi * m + i) * n + j] = acc;
      }
    }
  }
  std::vector<int64_t> out = batch;
  if (!a_vec) out.push_back(m);
  if (!b_vec) out.push_back(n);
  return {from_doubles(in[0].dtype(), out, y)};
}

// MatMulPacked: A [..., K] times B [K, N] read from its column panels Bp [P, K, b] (column j is
// Bp[j / b, :, j % b]), one row of A at a time.
std::vector<TensorData> eval_matmul_packed(const graph::Graph&, const Node& node,
                                           const std::vector<TensorData>& in) {
  std::vector<int64_t> as = in.at(0).shape(), ps = in.at(1).shape();
  int64_t k = as.back(), block = ps.at(2), n = node.attr_int("columns", ps.at(0) * block);
  if (ps[1] != k)
    throw Error(fmt::format("{}: inner dims {} and {} differ", node.describe(), k, ps[1]));
  std::vector<double> av = to_doubles(in[0]), pv = to_doubles(in[1]);
  int64_t rows = product(as, 0, as.size() - 1);
  std::vector<double> y(static_cast<size_t>(rows * n));
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double acc = 0;
      for (int64_t p = 0; p < k; ++p)
        acc += av[i * k + p] * pv[((j / block) * k + p) * block + j % block];
      y[i * n + j] = acc;
    }
  }
  std::vector<int64_t> out(as.begin(), as.end() - 1);
  out.push_back(n);
  return {from_doubles(in[0].dtype(), out, y)};
}

}  // namespace

std::vector<RefOp> nn_ref_ops() {
  std::vector<RefOp> ops{{OpKind::Gemm, eval_gemm},
                         {OpKind::MatMul, eval_matmul},
                         {OpKind::MatMulPacked, eval_matmul_packed}};
  for (auto part : {nn::conv_pool_ref_ops, nn::norm_ref_ops}) {
    for (auto& op : part()) ops.push_back(std::move(op));
  }
  return ops;
}

}  // namespace tessel::reference
