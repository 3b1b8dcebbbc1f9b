// The softmax family (Softmax, LogSoftmax, Hardmax) and the normalizations (BatchNormalization in
// inference and training form, InstanceNormalization, LayerNormalization, LRN). Statistics are
// reduce stages with the reduced dims kept as size 1, so every later stage indexes them with the
// reduced dims at 0.
#include <fmt/format.h>

#include <set>

#include "ir/error.h"
#include "ir/ops/shape_util.h"
#include "topi/broadcast.h"
#include "topi/compute_nn.h"

namespace tessel::topi::nn {

namespace {

PrimExpr c(DataType t, double v) { return make_const(t, v); }

// A reduction over a set of dims of a tensor of `shape`, with the reduced dims kept as size 1.
struct Reduction {
  std::vector<PrimExpr> shape;
  std::set<size_t> dims;

  std::vector<PrimExpr> kept_shape() const {
    std::vector<PrimExpr> s = shape;
    for (size_t d : dims) s[d] = idx(1);
    return s;
  }
  int64_t count() const {
    int64_t n = 1;
    for (size_t d : dims) n *= *as_const_int(shape[d]);
    return n;
  }
  // Indices into a kept-dims statistic for full indices `at` (reduced dims read 0).
  std::vector<PrimExpr> kept(std::vector<PrimExpr> at) const {
    for (size_t d : dims) at[d] = idx(0);
    return at;
  }
  // A kept-dims reduce stage: `reducer(source(full indices), axes)`, the reduced dims walked by
  // fresh axes.
  te::Tensor reduce(const std::function<PrimExpr(const std::vector<PrimExpr>&)>& source,
                    const std::function<PrimExpr(PrimExpr, std::vector<te::IterVar>)>& reducer,
                    const std::string& name) const {
    return te::compute(
        kept_shape(),
        [&](const std::vector<Var>& i) {
          std::vector<PrimExpr> at(i.begin(), i.end());
          std::vector<te::IterVar> axes;
          for (size_t d : dims) {
            axes.push_back(te::reduce_axis(0, shape[d], fmt::format("r{}", d)));
            at[d] = axes.back();
          }
          return reducer(source(at), axes);
        },
        name);
  }
  // Row-major position of `at` within the reduced dims (Hardmax's first-maximum tie break).
  PrimExpr flat(const std::vector<PrimExpr>& at) const {
    PrimExpr f = idx(0);
    for (size_t d : dims) f = f * shape[d] + at[d];
    return f;
  }
};

auto sum_reducer = [](PrimExpr v, std::vector<te::IterVar> axes) {
  return te::sum(v, std::move(axes));
};
auto max_reducer = [](PrimExpr v, std::vector<te::IterVar> axes) {
  return te::max(v, std::move(axes));
};
auto min_reducer = [](PrimExpr v, std::vector<te::IterVar> axes) {
  return te::min(v, std::move(axes));
};

std::vector<PrimExpr> full(const std::vector<Var>& i) { return {i.begin(), i.end()}; }

}  // namespace

te::Tensor softmax_over(const te::Tensor& x, const std::set<size_t>& dims, bool log_softmax,
                        const std::string& name) {
  Reduction red{x.shape(), dims};
  te::Tensor mx = red.reduce([&](const std::vector<PrimExpr>& at) { return x(at); }, max_reducer,
                             name + "_max");
  auto shifted = [&](const std::vector<PrimExpr>& at) { return x(at) - mx(red.kept(at)); };
  if (log_softmax) {
    te::Tensor sum =
        red.reduce([&](const auto& at) { return exp(shifted(at)); }, sum_reducer, name + "_sum");
    return te::compute(
        x.shape(),
        [&](const std::vector<Var>& i) { return shifted(full(i)) - log(sum(red.kept(full(i)))); },
        name);
  }
  // The exponentials are a stage that the sum and the quotient both read: a schedule that keeps
  // it (topi/schedule_statistics.cc) computes each exp once. Each is multiplied by the sum's
  // reciprocal, which the row's loop computes once, rather than divided by the sum (a vector
  // division per vector of the row).
  te::Tensor e = te::compute(
      x.shape(), [&](const std::vector<Var>& i) { return exp(shifted(full(i))); }, name + "_exp");
  te::Tensor sum = red.reduce([&](const auto& at) { return e(at); }, sum_reducer, name + "_sum");
  return te::compute(
      x.shape(),
      [&](const std::vector<Var>& i) {
        return e(full(i)) * (c(x.dtype(), 1.0) / sum(red.kept(full(i))));
      },
      name);
}

namespace {

enum class SoftmaxKind { kSoftmax, kLogSoftmax, kHardmax };

// Normalizes along the one axis (default -1); the importer rewrites the pre-13 2-D coercion into
// that form (frontend/canonicalize_ops.h).
ComputeFn softmax_like(SoftmaxKind kind) {
  return [kind](const OpCall& call, const std::vector<te::Tensor>& in, const std::string& name) {
    const te::Tensor& x = in[0];
    int64_t rank = x.ndim();
    if (rank == 0)
      throw Error(fmt::format("{}: a scalar input has no axis to normalize", call.describe()));
    auto axis =
        static_cast<size_t>(graph::ops::normalize_axis(call.attr_int("axis", -1), rank, call));
    Reduction red{x.shape(), {axis}};
    if (kind == SoftmaxKind::kHardmax) {
      auto xv = [&](const std::vector<PrimExpr>& at) { return x(at); };
      te::Tensor mx = red.reduce(xv, max_reducer, name + "_max");
      DataType t = x.dtype();
      te::Tensor first = red.reduce(
          [&](const std::vector<PrimExpr>& at) {
            return select(x(at) == mx(red.kept(at)), red.flat(at), idx(red.count()));
          },
          min_reducer, name + "_argmax");
      return std::vector<te::Tensor>{te::compute(
          x.shape(),
          [&](const std::vector<Var>& i) {
            return select(red.flat(full(i)) == first(red.kept(full(i))), c(t, 1), c(t, 0));
          },
          name)};
    }
    return std::vector<te::Tensor>{
        softmax_over(x, red.dims, kind == SoftmaxKind::kLogSoftmax, name)};
  };
}

// Mean and population variance of x over `red` (two passes, as the reference computes them).
struct Moments {
  te::Tensor sum, sq_sum;
  PrimExpr mean(const std::vector<PrimExpr>& kept, DataType t, int64_t n) const {
    return sum(kept) / c(t, n);
  }
  PrimExpr var(const std::vector<PrimExpr>& kept, DataType t, int64_t n) const {
    return sq_sum(kept) / c(t, n);
  }
};

Moments moments(const te::Tensor& x, const Reduction& red, const std::string& name) {
  DataType t = x.dtype();
  auto n = static_cast<double>(red.count());
  Moments m;
  m.sum = red.reduce([&](const std::vector<PrimExpr>& at) { return x(at); }, sum_reducer,
                     name + "_sum");
  m.sq_sum = red.reduce(
      [&](const std::vector<PrimExpr>& at) {
        PrimExpr d = x(at) - m.sum(red.kept(at)) / c(t, n);
        return d * d;
      },
      sum_reducer, name + "_sqsum");
  return m;
}

using ParamIndexFn =
    std::function<std::vector<PrimExpr>(const te::Tensor& param, const std::vector<Var>& i)>;

// y = (x - mean) / sqrt(var + eps) * scale + bias, the statistics over `red`; scale and bias are
// read at `param_index(param, i)`.

te::Tensor normalize(const te::Tensor& x, const Reduction& red, const Moments& m, double eps,
                     const te::Tensor& scale, const te::Tensor& bias,
                     const ParamIndexFn& param_index, const std::string& name) {
  DataType t = x.dtype();
  int64_t n = red.count();
  return te::compute(
      x.shape(),
      [&](const std::vector<Var>& i) {
        std::vector<PrimExpr> k = red.kept(full(i));
        // The reciprocal of the deviation is one per statistic, computed outside the loop over
        // the normalized points (a multiplication each, not a division).
        PrimExpr y = (x(full(i)) - m.mean(k, t, n)) *
                     (c(t, 1.0) / sqrt(m.var(k, t, n) + c(t, eps))) * scale(param_index(scale, i));
        return bias.defined() ? y + bias(param_index(bias, i)) : y;
      },
      name);
}

std::vector<PrimExpr> channel_index(const te::Tensor&, const std::vector<Var>& i) { return {i[1]}; }

void check_unused_outputs(const OpCall& call, size_t from, const char* why) {
  for (size_t o = from; o < call.outputs.size(); ++o) {
    if (call.wants_output(o)) throw Error(fmt::format("{}: {}", call.describe(), why));
  }
}

// training_mode=1 (opset 14): Y is normalized with the batch statistics over every dim but C
// (population variance), and the running statistics outputs are input * momentum + batch * (1 -
// momentum).
std::vector<te::Tensor> batch_norm_training(const OpCall& call, const std::vector<te::Tensor>& in,
                                            const std::string& name) {
  const te::Tensor& x = in[0];
  DataType t = x.dtype();
  Reduction red{x.shape(), {0}};
  for (int d = 2; d < x.ndim(); ++d) red.dims.insert(static_cast<size_t>(d));
  Moments m = moments(x, red, name);
  std::vector<te::Tensor> out{
      normalize(x, red, m, call.attr_float("epsilon", 1e-5), in[1], in[2], channel_index, name)};
  double momentum = call.attr_float("momentum", 0.9);
  int64_t n = red.count();
  auto running = [&](const te::Tensor& input, bool is_var, const std::string& suffix) {
    return te::compute(
        {x.shape()[1]},
        [&](const std::vector<Var>& i) {
          std::vector<PrimExpr> k(static_cast<size_t>(x.ndim()), idx(0));
          k[1] = i[0];
          PrimExpr batch = is_var ? m.var(k, t, n) : m.mean(k, t, n);
          return cast(t, input(i[0])) * c(t, momentum) + batch * c(t, 1 - momentum);
        },
        name + suffix);
  };
  out.push_back(running(in[3], false, "_running_mean"));
  out.push_back(running(in[4], true, "_running_var"));
  return out;
}

std::vector<te::Tensor> batch_norm(const OpCall& call, const std::vector<te::Tensor>& in,
                                   const std::string& name) {
  if (call.attr_int("training_mode", 0) != 0) return batch_norm_training(call, in, name);
  check_unused_outputs(call, 1,
                       "BatchNormalization's running-statistics outputs have no te lowering");
  const te::Tensor &x = in[0], &scale = in[1], &bias = in[2], &mean = in[3], &var = in[4];
  DataType t = x.dtype();
  double eps = call.attr_float("epsilon", 1e-5);
  return {te::compute(
      x.shape(),
      [&](const std::vector<Var>& i) {
        PrimExpr ch = i[1];
        return (x(full(i)) - mean(ch)) / sqrt(var(ch) + c(t, eps)) * scale(ch) + bias(ch);
      },
      name)};
}

std::vector<te::Tensor> instance_norm(const OpCall& call, const std::vector<te::Tensor>& in,
                                      const std::string& name) {
  const te::Tensor& x = in[0];
  Reduction red{x.shape(), {}};
  for (int d = 2; d < x.ndim(); ++d) red.dims.insert(static_cast<size_t>(d));
  Moments m = moments(x, red, name);
  return {
      normalize(x, red, m, call.attr_float("epsilon", 1e-5), in[1], in[2], channel_index, name)};
}

// Normalizes over the dims from `axis` on; also yields Mean and InvStdDev with those dims kept
// as 1.
std::vector<te::Tensor> layer_norm(const OpCall& call, const std::vector<te::Tensor>& in,
                                   const std::string& name) {
  const te::Tensor& x = in[0];
  auto axis =
      static_cast<size_t>(graph::ops::normalize_axis(call.attr_int("axis", -1), x.ndim(), call));
  Reduction red{x.shape(), {}};
  for (size_t d = axis; d < static_cast<size_t>(x.ndim()); ++d) red.dims.insert(d);
  Moments m = moments(x, red, name);
  double eps = call.attr_float("epsilon", 1e-5);
  te::Tensor bias = in.size() > 2 ? in[2] : te::Tensor();
  std::vector<te::Tensor> out{normalize(x, red, m, eps, in[1], bias, broadcast_index, name)};
  DataType t = x.dtype();
  int64_t n = red.count();
  out.push_back(te::compute(
      red.kept_shape(), [&](const std::vector<Var>& i) { return m.mean(full(i), t, n); },
      name + "_mean"));
  out.push_back(te::compute(
      red.kept_shape(),
      [&](const std::vector<Var>& i) { return c(t, 1) / sqrt(m.var(full(i), t, n) + c(t, eps)); },
      name + "_inv_std"));
  return out;
}

// y = x / (bias + alpha / size * (sum of squares over the channel window))^beta.
std::vector<te::Tensor> lrn(const OpCall& call, const std::vector<te::Tensor>& in,
                            const std::string& name) {
  const te::Tensor& x = in[0];
  DataType t = x.dtype();
  int64_t size = call.attr_int("size", 1), channels = *as_const_int(x.shape()[1]);
  double alpha = call.attr_float("alpha", 1e-4), beta = call.attr_float("beta", 0.75),
         bias = call.attr_float("bias", 1.0);
  int64_t below = (size - 1) / 2;
  te::IterVar rk = te::reduce_axis(0, idx(size), "rk");
  te::Tensor sq = te::compute(
      x.shape(),
      [&](const std::vector<Var>& i) {
        std::vector<PrimExpr> at = full(i);
        PrimExpr ch = i[1] + rk - idx(below);
        at[1] = min(max(ch, 0), idx(channels - 1));
        return te::sum(select(ch >= 0 && ch < idx(channels), x(at) * x(at), c(t, 0)), {rk});
      },
      name + "_sqsum");
  return {te::compute(
      x.shape(),
      [&](const std::vector<Var>& i) {
        return x(full(i)) /
               pow(c(t, bias) + c(t, alpha / static_cast<double>(size)) * sq(full(i)), c(t, beta));
      },
      name)};
}

}  // namespace

std::vector<OpCompute> norm_computes() {
  return {
      {OpKind::Softmax, softmax_like(SoftmaxKind::kSoftmax)},
      {OpKind::LogSoftmax, softmax_like(SoftmaxKind::kLogSoftmax)},
      {OpKind::Hardmax, softmax_like(SoftmaxKind::kHardmax)},
      {OpKind::BatchNormalization, batch_norm},
      {OpKind::InstanceNormalization, instance_norm},
      {OpKind::LayerNormalization, layer_norm},
      {OpKind::LRN, lrn},
  };
}

}  // namespace tessel::topi::nn
