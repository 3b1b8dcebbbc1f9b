// Gemm (alpha, beta, transA, transB, broadcast C), MatMul (2-D, batched with broadcast batch dims,
// 1-D operands) and MatMulPacked (B in column panels) as one sum over k. Gemm's transposed B is
// copied into a [K, N] stage first so the schedule's vectorized columns read it contiguously.
#include <fmt/format.h>

#include "ir/error.h"
#include "topi/broadcast.h"
#include "topi/compute_nn.h"

namespace tessel::topi::nn {

namespace {

std::vector<te::Tensor> gemm(const OpCall& call, const std::vector<te::Tensor>& in,
                             const std::string& name) {
  std::vector<int64_t> as = static_shape(in[0]), bs = static_shape(in[1]);
  bool ta = call.attr_int("transA", 0) != 0, tb = call.attr_int("transB", 0) != 0;
  double alpha = call.attr_float("alpha", 1.0), beta = call.attr_float("beta", 1.0);
  int64_t m = as[ta ? 1 : 0], k = as[ta ? 0 : 1], n = bs[tb ? 0 : 1];
  if (bs[tb ? 1 : 0] != k)
    throw Error(fmt::format("{}: inner dims {} and {} differ", call.describe(), k, bs[tb ? 1 : 0]));
  const te::Tensor &a = in[0], &b_in = in[1];
  te::Tensor b =
      tb ? te::compute(
               {idx(k), idx(n)}, [&](te::Expr p, te::Expr j) { return b_in(j, p); }, name + "_bt")
         : b_in;
  te::IterVar rk = te::reduce_axis(0, idx(k), "rk");
  bool has_c = in.size() > 2 && in[2].defined() && beta != 0;
  bool scaled = alpha != 1 || has_c;
  te::Tensor prod = te::compute(
      {idx(m), idx(n)},
      [&](te::Expr i, te::Expr j) { return te::sum((ta ? a(rk, i) : a(i, rk)) * b(rk, j), {rk}); },
      scaled ? name + "_matmul" : name);
  if (!scaled) return {prod};
  DataType t = prod.dtype();
  return {te::compute(
      {idx(m), idx(n)},
      [&](const std::vector<Var>& i) {
        PrimExpr y = prod(i[0], i[1]);
        if (alpha != 1) y = make_const(t, alpha) * y;
        if (has_c) y = y + make_const(t, beta) * in[2](broadcast_index(in[2], i));
        return y;
      },
      name)};
}

// numpy matmul: batch dims broadcast (size-1 dims read index 0); a 1-D A is a row, a 1-D B a
// column, and their dim is dropped from the result.
std::vector<te::Tensor> matmul(const OpCall& call, const std::vector<te::Tensor>& in,
                               const std::string& name) {
  std::vector<int64_t> as = static_shape(in[0]), bs = static_shape(in[1]);
  std::vector<int64_t> out = call.output_type(0).shape;
  bool a_vec = as.size() == 1, b_vec = bs.size() == 1;
  int64_t k = as.back();
  if (bs[b_vec ? 0 : bs.size() - 2] != k) {
    throw Error(fmt::format("{}: inner dims {} and {} differ", call.describe(), k,
                            bs[b_vec ? 0 : bs.size() - 2]));
  }
  if (out.empty())
    throw Error(fmt::format("{}: a rank-0 result has no te lowering yet", call.describe()));
  size_t batch = out.size() - (a_vec ? 0 : 1) - (b_vec ? 0 : 1);
  te::IterVar rk = te::reduce_axis(0, idx(k), "rk");
  // Operand `shape` (with `mat_dims` matrix dims) indexed from the output's batch indices.
  auto batch_index = [&](const std::vector<int64_t>& shape, size_t mat_dims,
                         const std::vector<Var>& i) {
    std::vector<PrimExpr> at;
    size_t own = shape.size() - mat_dims;
    for (size_t d = 0; d < own; ++d)
      at.push_back(shape[d] == 1 ? PrimExpr(0) : PrimExpr(i[batch - own + d]));
    return at;
  };
  return {te::compute(
      idx_exprs(out),
      [&](const std::vector<Var>& i) {
        std::vector<PrimExpr> ai = batch_index(as, a_vec ? 1 : 2, i),
                              bi = batch_index(bs, b_vec ? 1 : 2, i);
        if (!a_vec) ai.push_back(i[batch]);
        ai.push_back(rk);
        bi.push_back(rk);
        if (!b_vec) bi.push_back(i.back());
        return te::sum(in[0](ai) * in[1](bi), {rk});
      },
      name)};
}

// MatMulPacked: A [..., K] times B's column panels Bp [P, K, b]: column j is Bp[j / b, :, j % b],
// so a register tile of b columns (or a divisor of b) reads one contiguous run of Bp per k.
std::vector<te::Tensor> matmul_packed(const OpCall& call, const std::vector<te::Tensor>& in,
                                      const std::string& name) {
  std::vector<int64_t> as = static_shape(in[0]), ps = static_shape(in[1]);
  int64_t k = as.back(), block = ps.at(2);
  if (ps[1] != k)
    throw Error(fmt::format("{}: inner dims {} and {} differ", call.describe(), k, ps[1]));
  te::IterVar rk = te::reduce_axis(0, idx(k), "rk");
  return {te::compute(
      idx_exprs(call.output_type(0).shape),
      [&](const std::vector<Var>& i) {
        std::vector<PrimExpr> ai(i.begin(), i.end() - 1);
        ai.push_back(rk);
        PrimExpr j = i.back();
        return te::sum(
            in[0](ai) * in[1]({floordiv(j, idx(block)), PrimExpr(rk), floormod(j, idx(block))}),
            {rk});
      },
      name)};
}

}  // namespace

std::vector<OpCompute> dense_computes() {
  return {{OpKind::Gemm, gemm}, {OpKind::MatMul, matmul}, {OpKind::MatMulPacked, matmul_packed}};
}

}  // namespace tessel::topi::nn
