// The loss ops as te computes, following ONNX (and reference/loss.cc): for scores x[N, C, d1..dk]
// and targets t[N, d1..dk], loss[n, d..] = -w[t] * x[n, t, d..] where w is the optional per-class
// weight (1 without one) and 0 where t == ignore_index. "sum" adds the losses; "mean" divides that
// sum by the sum of the w, so ignored targets count in neither. SoftmaxCrossEntropyLoss is the same
// loss of LogSoftmax(x) over the class dim, which is its optional second output.
#include <fmt/format.h>

#include <functional>
#include <optional>

#include "topi/compute_nn.h"
#include "topi/compute_util.h"
#include "topi/op_compute.h"

namespace tessel::topi {
namespace {

// The per-target terms of the loss, at target indices [n, d1..dk].
struct NllTerms {
  te::Tensor scores;  // x (NLL) or log-probabilities (SCE), [N, C, d1..dk]
  te::Tensor target;
  te::Tensor weight;  // undefined without the optional input
  std::optional<int64_t> ignore_index;
  int64_t classes = 0;

  PrimExpr ignored(const std::vector<PrimExpr>& o) const {
    const DataType i64 = DataType::i64();
    return cast(i64, target(o)) == make_const(i64, static_cast<double>(*ignore_index));
  }
  // The class index, clamped: an ignored (or, undefined behaviour, out-of-range) target still loads
  // inside the tensors, since a select evaluates both branches.
  PrimExpr cls(const std::vector<PrimExpr>& o) const { return clamp_index(target(o), classes); }
  PrimExpr class_weight(const std::vector<PrimExpr>& o) const {
    return weight.defined() ? weight(cls(o)) : make_const(scores.dtype(), 1);
  }
  // w[t], 0 where ignored.
  PrimExpr weight_of(const std::vector<PrimExpr>& o) const {
    PrimExpr w = class_weight(o);
    return ignore_index ? select(ignored(o), make_zero(w.dtype()), w) : w;
  }
  PrimExpr loss(const std::vector<PrimExpr>& o) const {
    std::vector<PrimExpr> at = o;
    at.insert(at.begin() + 1, cls(o));
    PrimExpr l = -(class_weight(o) * scores(at));
    // Selected rather than multiplied by the zero weight: an ignored inf score must not give NaN.
    return ignore_index ? select(ignored(o), make_zero(l.dtype()), l) : l;
  }
};

// A 0-d stage summing `term` over every target index.
te::Tensor sum_over_targets(const std::vector<int64_t>& target_shape,
                            const std::function<PrimExpr(const std::vector<PrimExpr>&)>& term,
                            const std::string& name) {
  return te::compute(
      {},
      [&](const std::vector<Var>&) {
        std::vector<te::IterVar> axes;
        std::vector<PrimExpr> at;
        for (size_t d = 0; d < target_shape.size(); ++d) {
          axes.push_back(
              te::reduce_axis(0, static_cast<int>(target_shape[d]), fmt::format("r{}", d)));
          at.push_back(axes.back());
        }
        return te::sum(term(at), axes);
      },
      name);
}

// The loss output for `scores` (graph input 0 or its log-softmax) under the node's reduction.
te::Tensor nll_loss(const OpCall& call, const te::Tensor& scores, const Inputs& in,
                    const std::string& name) {
  NllTerms terms{scores, in[1], in.size() > 2 ? in[2] : te::Tensor(), std::nullopt,
                 const_shape(scores, call.describe())[1]};
  if (call.has_attr("ignore_index")) terms.ignore_index = call.attr_int("ignore_index", 0);
  std::string reduction = call.attr_string("reduction", "mean");  // validated by type inference
  if (reduction == "none") {
    return te::compute(
        output_shape(call, 0), [&](const std::vector<Var>& o) { return terms.loss(exprs(o)); },
        name);
  }
  std::vector<int64_t> target_shape = const_shape(in[1], call.describe());
  auto loss = [&](const std::vector<PrimExpr>& o) { return terms.loss(o); };
  if (reduction == "sum") return sum_over_targets(target_shape, loss, name);
  te::Tensor loss_sum = sum_over_targets(target_shape, loss, name + "_loss_sum");
  PrimExpr denominator;
  if (terms.weight.defined() || terms.ignore_index) {
    auto weight = [&](const std::vector<PrimExpr>& o) { return terms.weight_of(o); };
    denominator = sum_over_targets(target_shape, weight, name + "_weight_sum")();
  } else {  // every weight is 1: the count of targets
    int64_t count = 1;
    for (int64_t d : target_shape) count *= d;
    denominator = make_const(scores.dtype(), static_cast<double>(count));
  }
  // All targets ignored (or all weights 0) gives 0 / 0 = NaN, as in the reference.
  return te::compute({}, [&](const std::vector<Var>&) { return loss_sum() / denominator; }, name);
}

Outputs negative_log_likelihood(const OpCall& call, const Inputs& in, const std::string& name) {
  return {nll_loss(call, in[0], in, name)};
}

Outputs softmax_cross_entropy(const OpCall& call, const Inputs& in, const std::string& name) {
  te::Tensor log_prob = nn::softmax_over(in[0], {1}, true, name + "_log_prob");
  Outputs out{nll_loss(call, log_prob, in, name)};
  if (call.outputs.size() > 1) out.push_back(log_prob);
  return out;
}

}  // namespace

std::vector<OpCompute> loss_computes() {
  return {
      {OpKind::NegativeLogLikelihoodLoss, negative_log_likelihood},
      {OpKind::SoftmaxCrossEntropyLoss, softmax_cross_entropy},
  };
}

}  // namespace tessel::topi
