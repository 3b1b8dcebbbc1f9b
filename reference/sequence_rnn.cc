// Reference LSTM, GRU and RNN (ONNX gate orders iofc / zrh / i), forward, reverse or bidirectional,
// with optional B, sequence_lens, initial_h, initial_c, P, clip, input_forget, linear_before_reset,
// activation lists with alpha/beta, and layout 1 (batch-first) handled by transposing at the edges.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "ir/error.h"
#include "ir/ops/op_params.h"
#include "reference/nn_util.h"

namespace tessel::reference::nn {

namespace {

using graph::Node;

enum class CellKind { kRnn, kGru, kLstm };

struct Activation : graph::ops::RnnActivation {
  double operator()(double x) const {
    if (name == "Sigmoid") return 1.0 / (1.0 + std::exp(-x));
    if (name == "Tanh") return std::tanh(x);
    if (name == "Relu") return std::max(0.0, x);
    if (name == "Affine") return alpha * x + beta;
    if (name == "LeakyRelu") return x >= 0 ? x : alpha * x;
    if (name == "ThresholdedRelu") return x > alpha ? x : 0.0;
    if (name == "ScaledTanh") return alpha * std::tanh(beta * x);
    if (name == "HardSigmoid") return std::clamp(alpha * x + beta, 0.0, 1.0);
    if (name == "Elu") return x >= 0 ? x : alpha * (std::exp(x) - 1);
    if (name == "Softsign") return x / (1 + std::fabs(x));
    if (name == "Softplus") return std::log1p(std::exp(x));
    TESSEL_UNREACHABLE("activation names are checked in rnn_activations");
  }
};

// Swaps the two leading dims of a [a, b, rest] array.
std::vector<double> swap_leading(const std::vector<double>& v, int64_t a, int64_t b, int64_t rest) {
  std::vector<double> out(v.size());
  for (int64_t i = 0; i < a; ++i) {
    for (int64_t j = 0; j < b; ++j) {
      for (int64_t k = 0; k < rest; ++k) out[(j * a + i) * rest + k] = v[(i * b + j) * rest + k];
    }
  }
  return out;
}

std::vector<double> optional_doubles(const std::vector<TensorData>& in, size_t i, size_t zeros) {
  return i < in.size() && in[i].defined() ? to_doubles(in[i]) : std::vector<double>(zeros, 0.0);
}

std::vector<TensorData> eval_recurrent(const Node& node, const std::vector<TensorData>& in,
                                       CellKind kind) {
  const int64_t gates = kind == CellKind::kLstm ? 4 : kind == CellKind::kGru ? 3 : 1;
  const TensorData& xt = in.at(0);
  bool batch_first = node.attr_int("layout", 0) != 0;
  int64_t seq = xt.shape()[batch_first ? 1 : 0], batch = xt.shape()[batch_first ? 0 : 1],
          input = xt.shape()[2];
  int64_t dirs = in.at(1).shape()[0], hidden = in.at(2).shape()[2];
  std::string direction = node.attr_string("direction", "forward");
  std::vector<double> x = to_doubles(xt), w = to_doubles(in[1]), r = to_doubles(in[2]);
  if (batch_first) x = swap_leading(x, batch, seq, input);
  std::vector<double> bias =
      optional_doubles(in, 3, static_cast<size_t>(dirs * 2 * gates * hidden));
  std::vector<double> h0 = optional_doubles(in, 5, static_cast<size_t>(dirs * batch * hidden));
  std::vector<double> c0 = optional_doubles(in, 6, static_cast<size_t>(dirs * batch * hidden));
  std::vector<double> peep = optional_doubles(in, 7, static_cast<size_t>(dirs * 3 * hidden));
  if (batch_first) {
    h0 = swap_leading(h0, batch, dirs, hidden);
    c0 = swap_leading(c0, batch, dirs, hidden);
  }
  std::vector<int64_t> lens(static_cast<size_t>(batch), seq);
  if (in.size() > 4 && in[4].defined()) {
    for (int64_t b = 0; b < batch; ++b) lens[b] = in[4].get_int(b);
  }
  double clip = node.attr_float("clip", 0.0);
  auto clipped = [clip](double v) { return clip > 0 ? std::clamp(v, -clip, clip) : v; };
  bool input_forget = node.attr_int("input_forget", 0) != 0;
  bool linear_before_reset = node.attr_int("linear_before_reset", 0) != 0;
  std::vector<std::vector<Activation>> acts;
  for (const auto& dir : graph::ops::rnn_activations(node, dirs)) {
    acts.emplace_back();
    for (const auto& a : dir) acts.back().push_back(Activation{a});
  }

  std::vector<double> y(static_cast<size_t>(seq * dirs * batch * hidden), 0.0);
  std::vector<double> y_h(h0), y_c(c0);
  for (int64_t d = 0; d < dirs; ++d) {
    bool reverse = direction == "reverse" || d == 1;
    const double* wd = &w[d * gates * hidden * input];
    const double* rd = &r[d * gates * hidden * hidden];
    const double* wb = &bias[d * 2 * gates * hidden];
    const double* rb = wb + gates * hidden;
    const double* pd = &peep[d * 3 * hidden];
    const auto& f = acts[d][0];
    for (int64_t b = 0; b < batch; ++b) {
      double* h = &y_h[(d * batch + b) * hidden];
      double* c = &y_c[(d * batch + b) * hidden];
      for (int64_t step = 0; step < lens[b]; ++step) {
        int64_t t = reverse ? lens[b] - 1 - step : step;
        const double* xt_row = &x[(t * batch + b) * input];
        // Per gate row: the input part W x + Wb and the recurrent part R h + Rb.
        std::vector<double> xp(gates * hidden), hp(gates * hidden);
        for (int64_t row = 0; row < gates * hidden; ++row) {
          double sx = wb[row], sh = rb[row];
          for (int64_t i = 0; i < input; ++i) sx += wd[row * input + i] * xt_row[i];
          for (int64_t k = 0; k < hidden; ++k) sh += rd[row * hidden + k] * h[k];
          xp[row] = sx;
          hp[row] = sh;
        }
        std::vector<double> next_h(hidden), reset(kind == CellKind::kGru ? hidden : 0);
        for (size_t k = 0; k < reset.size(); ++k)
          reset[k] = f(clipped(xp[hidden + k] + hp[hidden + k]));
        for (int64_t j = 0; j < hidden; ++j) {
          auto pre = [&](int64_t gate) { return xp[gate * hidden + j] + hp[gate * hidden + j]; };
          if (kind == CellKind::kRnn) {
            next_h[j] = f(clipped(pre(0)));
          } else if (kind == CellKind::kGru) {
            double z = f(clipped(pre(0)));
            // Without linear_before_reset the reset gate scales h before R_h multiplies it.
            double hh = xp[2 * hidden + j];
            if (linear_before_reset) {
              hh += reset[j] * hp[2 * hidden + j];
            } else {
              hh += rb[2 * hidden + j];
              for (int64_t k = 0; k < hidden; ++k)
                hh += rd[(2 * hidden + j) * hidden + k] * reset[k] * h[k];
            }
            next_h[j] = (1 - z) * acts[d][1](clipped(hh)) + z * h[j];
          } else {
            double ig = f(clipped(pre(0) + pd[j] * c[j]));
            double fg = input_forget ? 1 - ig : f(clipped(pre(2) + pd[2 * hidden + j] * c[j]));
            double cand = acts[d][1](clipped(pre(3)));
            double cj = fg * c[j] + ig * cand;
            double og = f(clipped(pre(1) + pd[hidden + j] * cj));
            c[j] = cj;  // c[j] is read only by gate j, so the update can be in place
            next_h[j] = og * acts[d][2](cj);
          }
        }
        std::copy(next_h.begin(), next_h.end(), h);
        std::copy(next_h.begin(), next_h.end(), &y[((t * dirs + d) * batch + b) * hidden]);
      }
    }
  }
  DataType dt = xt.dtype();
  std::vector<TensorData> out;
  if (batch_first) {
    out.push_back(
        from_doubles(dt, {batch, seq, dirs, hidden}, swap_leading(y, seq * dirs, batch, hidden)));
    out.push_back(from_doubles(dt, {batch, dirs, hidden}, swap_leading(y_h, dirs, batch, hidden)));
    out.push_back(from_doubles(dt, {batch, dirs, hidden}, swap_leading(y_c, dirs, batch, hidden)));
  } else {
    out.push_back(from_doubles(dt, {seq, dirs, batch, hidden}, y));
    out.push_back(from_doubles(dt, {dirs, batch, hidden}, y_h));
    out.push_back(from_doubles(dt, {dirs, batch, hidden}, y_c));
  }
  if (kind != CellKind::kLstm) out.pop_back();
  return out;
}

EvalFn recurrent(CellKind kind) {
  return [kind](const graph::Graph&, const Node& node, const std::vector<TensorData>& in) {
    return eval_recurrent(node, in, kind);
  };
}

}  // namespace

std::vector<RefOp> rnn_ref_ops() {
  return {{OpKind::LSTM, recurrent(CellKind::kLstm)},
          {OpKind::GRU, recurrent(CellKind::kGru)},
          {OpKind::RNN, recurrent(CellKind::kRnn)}};
}

}  // namespace tessel::reference::nn
