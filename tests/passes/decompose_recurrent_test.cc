// decompose_recurrent: one-node LSTM / GRU / RNN graphs with random constant weights, evaluated by
// the reference executor before the pass (its recurrent op is the oracle) and after it (primitive
// ops only), and compiled end to end for a few cases.
#include "passes/decompose_recurrent.h"

#include <gtest/gtest.h>

#include <functional>

#include "driver/compile.h"
#include "graph_builder.h"
#include "ir/error.h"
#include "ir/op_table.h"
#include "passes/infer_type.h"
#include "reference/reference.h"
#include "tests/common/compare.h"
#include "tests/common/expect_error.h"

namespace tessel::passes {
namespace {
using tessel::testing::expect_all_close;
using tessel::testing::expect_error;
using testing::Builder;
using testing::random_tensor;

struct RnnCase {
  std::string label;
  std::string op = "LSTM";
  std::string direction = "forward";
  int64_t layout = 0;
  bool bias = true;
  bool initial_h = false;        // a runtime input
  bool initial_h_const = false;  // a constant
  bool initial_c = false;        // LSTM only, runtime
  bool peepholes = false;        // LSTM only
  double clip = 0;
  int64_t linear_before_reset = 0;  // GRU only
  int64_t input_forget = 0;         // LSTM only
  std::vector<int64_t> seq_lens;    // sequence_lens when non-empty
  bool runtime_lens = false;        // sequence_lens as a graph input
  bool runtime_weights = false;     // W, R, B, P as graph inputs
  std::vector<std::string> activations;
  std::vector<double> alphas, betas;
};

void PrintTo(const RnnCase& c, std::ostream* os) { *os << c.label; }

constexpr int64_t kSeq = 4, kBatch = 3, kInput = 5, kHidden = 6;

int64_t gates_of(const std::string& op) { return op == "LSTM" ? 4 : op == "GRU" ? 3 : 1; }

struct Built {
  graph::Graph g;
  std::map<std::string, graph::TensorData> inputs;
};

Built build(const RnnCase& c) {
  Builder b;
  int64_t dirs = c.direction == "bidirectional" ? 2 : 1, gates = gates_of(c.op);
  std::vector<int64_t> x_shape = c.layout ? std::vector<int64_t>{kBatch, kSeq, kInput}
                                          : std::vector<int64_t>{kSeq, kBatch, kInput};
  std::vector<int64_t> state = c.layout ? std::vector<int64_t>{kBatch, dirs, kHidden}
                                        : std::vector<int64_t>{dirs, kBatch, kHidden};
  Built out;
  std::vector<graph::ValueId> in(8, graph::kNoValue);
  in[0] = b.input("x", x_shape);
  out.inputs["x"] = random_tensor(x_shape, 1);
  auto weight = [&](const std::string& name, graph::TensorData data) {
    if (!c.runtime_weights) return b.constant(name, data);
    out.inputs[name] = data;
    return b.input(name, data.shape());
  };
  in[1] = weight("W", random_tensor({dirs, gates * kHidden, kInput}, 2));
  in[2] = weight("R", random_tensor({dirs, gates * kHidden, kHidden}, 3));
  if (c.bias) in[3] = weight("B", random_tensor({dirs, 2 * gates * kHidden}, 4));
  if (!c.seq_lens.empty()) {
    graph::TensorData lens(DataType::i32(), {kBatch});
    for (int64_t i = 0; i < kBatch; ++i)
      lens.data<int32_t>()[i] = static_cast<int32_t>(c.seq_lens[i]);
    if (c.runtime_lens) {
      in[4] = b.g.add_value("seq_lens", {DataType::i32(), {kBatch}, {}});
      b.g.inputs.push_back(in[4]);
      out.inputs["seq_lens"] = lens;
    } else {
      in[4] = b.constant("seq_lens", lens);
    }
  }
  if (c.initial_h) {
    in[5] = b.input("h0", state);
    out.inputs["h0"] = random_tensor(state, 5);
  } else if (c.initial_h_const) {
    in[5] = b.constant("h0", random_tensor(state, 5));
  }
  if (c.initial_c) {
    in[6] = b.input("c0", state);
    out.inputs["c0"] = random_tensor(state, 6);
  }
  if (c.peepholes) in[7] = weight("P", random_tensor({dirs, 3 * kHidden}, 7));
  while (!in.empty() && in.back() == graph::kNoValue) in.pop_back();
  std::map<std::string, graph::Attr> attrs = {
      {"hidden_size", kHidden}, {"direction", c.direction}, {"layout", c.layout}};
  if (c.clip > 0) attrs["clip"] = c.clip;
  if (c.op == "GRU") attrs["linear_before_reset"] = c.linear_before_reset;
  if (c.input_forget) attrs["input_forget"] = c.input_forget;
  if (!c.activations.empty()) attrs["activations"] = c.activations;
  if (!c.alphas.empty()) attrs["activation_alpha"] = c.alphas;
  if (!c.betas.empty()) attrs["activation_beta"] = c.betas;
  int outputs = c.op == "LSTM" ? 3 : 2;
  auto outs = b.node(c.op, in, attrs, outputs, "cell");
  out.g = b.finish(outs);
  infer_type(out.g);
  return out;
}

// Every node's output types are what the op table infers from its inputs.
void expect_typed(const graph::Graph& g) {
  for (const auto& node : g.nodes) {
    std::vector<graph::TensorType> types = node.def().infer_type(g, node);
    for (size_t i = 0; i < node.outputs.size(); ++i) {
      EXPECT_EQ(types[i], g.value(node.outputs[i]).type)
          << node.describe() << " output " << i << ": " << types[i].str() << " vs "
          << g.value(node.outputs[i]).type.str();
    }
  }
}

class DecomposeRecurrentTest : public ::testing::TestWithParam<RnnCase> {};

TEST_P(DecomposeRecurrentTest, UnrolledGraphMatchesTheRecurrentOp) {
  Built built = build(GetParam());
  graph::Graph after = built.g;
  decompose_recurrent(after);
  after.validate();
  for (const auto& node : after.nodes) {
    EXPECT_TRUE(node.op != graph::OpKind::LSTM && node.op != graph::OpKind::GRU &&
                node.op != graph::OpKind::RNN)
        << after.str();
  }
  expect_typed(after);
  EXPECT_EQ(after.value(after.outputs[0]).name, built.g.value(built.g.outputs[0]).name);
  expect_all_close(reference::run(after, built.inputs), reference::run(built.g, built.inputs),
                   {1e-5, 1e-5});
}

RnnCase with(std::string label, std::function<void(RnnCase&)> f) {
  RnnCase c;
  c.label = std::move(label);
  f(c);
  return c;
}

std::vector<RnnCase> cases() {
  std::vector<RnnCase> out;
  for (std::string op : {"LSTM", "GRU", "RNN"}) {
    for (std::string dir : {"forward", "reverse", "bidirectional"}) {
      for (int64_t layout : {0, 1}) {
        out.push_back(with(op + "_" + dir + "_layout" + std::to_string(layout),
                           [&](RnnCase& c) { c.op = op, c.direction = dir, c.layout = layout; }));
        out.push_back(
            with(op + "_" + dir + "_layout" + std::to_string(layout) + "_states", [&](RnnCase& c) {
              c.op = op, c.direction = dir, c.layout = layout;
              c.initial_h = true, c.initial_c = op == "LSTM", c.peepholes = op == "LSTM";
              c.linear_before_reset = 1;
            }));
      }
    }
    out.push_back(
        with(op + "_no_bias_clip", [&](RnnCase& c) { c.op = op, c.bias = false, c.clip = 0.5; }));
    out.push_back(with(op + "_const_h0_bidirectional", [&](RnnCase& c) {
      c.op = op, c.direction = "bidirectional", c.initial_h_const = true, c.layout = 1;
    }));
    out.push_back(with(op + "_seq_lens_reverse", [&](RnnCase& c) {
      c.op = op, c.direction = "bidirectional", c.seq_lens = {4, 2, 0}, c.initial_h = true;
    }));
    out.push_back(with(op + "_seq_lens_layout1", [&](RnnCase& c) {
      c.op = op, c.layout = 1, c.seq_lens = {1, 4, 3}, c.initial_c = op == "LSTM";
    }));
    out.push_back(with(op + "_bias_clip", [&](RnnCase& c) { c.op = op, c.clip = 0.7; }));
    out.push_back(with(op + "_runtime_weights_bidirectional", [&](RnnCase& c) {
      c.op = op, c.runtime_weights = true, c.direction = "bidirectional",
      c.peepholes = op == "LSTM";
      c.linear_before_reset = 1;
    }));
    out.push_back(with(op + "_runtime_weights_and_lens", [&](RnnCase& c) {
      c.op = op, c.runtime_weights = true, c.direction = "bidirectional",
      c.peepholes = op == "LSTM";
      c.seq_lens = {3, 0, 4}, c.runtime_lens = true, c.layout = 1;
    }));
  }
  out.push_back(with("GRU_linear_before_reset_clip", [](RnnCase& c) {
    c.op = "GRU", c.linear_before_reset = 1, c.clip = 0.3, c.direction = "reverse",
    c.initial_h = true;
  }));
  out.push_back(with("LSTM_input_forget_peepholes", [](RnnCase& c) {
    c.input_forget = 1, c.peepholes = true, c.initial_c = true, c.direction = "bidirectional";
  }));
  out.push_back(with("LSTM_activations", [](RnnCase& c) {
    c.activations = {"HardSigmoid", "ScaledTanh", "Affine", "Sigmoid", "LeakyRelu", "Elu"};
    c.alphas = {0.3, 0.8, 1.5, 0.2, 0.9};
    c.betas = {0.4, 1.2, 0.1};
    c.direction = "bidirectional";
  }));
  out.push_back(with("GRU_activations",
                     [](RnnCase& c) { c.op = "GRU", c.activations = {"Softsign", "Softplus"}; }));
  out.push_back(with("RNN_activations", [](RnnCase& c) {
    c.op = "RNN", c.activations = {"Relu", "ThresholdedRelu"}, c.alphas = {0.1},
    c.direction = "bidirectional";
  }));
  return out;
}

INSTANTIATE_TEST_SUITE_P(Cells, DecomposeRecurrentTest, ::testing::ValuesIn(cases()),
                         [](const auto& info) { return info.param.label; });

TEST(DecomposeRecurrentTest, ValueNamesFollowTheNodeAndStep) {
  Built built = build(RnnCase{});
  decompose_recurrent(built.g);
  for (const char* name : {"cell_t0_i", "cell_t3_f", "cell_t2_c", "cell_t3_h", "cell_W_t"}) {
    EXPECT_NE(built.g.find_value(name), graph::kNoValue) << name << " in\n" << built.g.str();
  }
}

TEST(DecomposeRecurrentTest, ConstantWeightsNeedNoRuntimeSlicing) {
  Built built =
      build(with("", [](RnnCase& c) { c.direction = "bidirectional", c.peepholes = true; }));
  decompose_recurrent(built.g);
  for (const auto& node : built.g.nodes) {
    EXPECT_TRUE(node.op != graph::OpKind::Slice && node.op != graph::OpKind::Transpose)
        << node.describe();
  }
}

TEST(DecomposeRecurrentTest, UnknownActivationLeavesTheNodeForLoweringToReport) {
  Built built = build(with("", [](RnnCase& c) { c.op = "RNN", c.activations = {"Gelu"}; }));
  decompose_recurrent(built.g);
  ASSERT_EQ(built.g.nodes.size(), 1u);
  EXPECT_EQ(built.g.nodes[0].op, graph::OpKind::RNN);
  expect_error([&] { compile_graph(built.g); }, {"node 'cell' (RNN)"});
}

// A 100,000-step unroll would take hours and hundreds of GiB to compile: refused up front, naming
// the node, with the limit (the model's steps are summed over its recurrent nodes).
TEST(DecomposeRecurrentTest, TooManyStepsAreRefused) {
  auto lstm = [](int64_t seq, int64_t dirs) {
    Builder b;
    auto x = b.input("x", {seq, 1, 2});
    auto w = b.constant("W", random_tensor({dirs, 8, 2}, 1));
    auto r = b.constant("R", random_tensor({dirs, 8, 2}, 2));
    std::string direction = dirs == 2 ? "bidirectional" : "forward";
    auto outs = b.node("LSTM", {x, w, r}, {{"hidden_size", int64_t{2}}, {"direction", direction}},
                       3, "cell");
    graph::Graph g = b.finish(outs);
    infer_type(g);
    return g;
  };
  graph::Graph at_limit = lstm(kMaxUnrolledSteps, 1);
  decompose_recurrent(at_limit);
  EXPECT_GT(at_limit.nodes.size(), 1u);
  graph::Graph huge = lstm(100000, 1);
  expect_error([&] { decompose_recurrent(huge); },
               {"node 'cell' (LSTM)", "100000 time steps", "at most 1024 per model"});
  graph::Graph both_ways = lstm(kMaxUnrolledSteps / 2 + 1, 2);
  expect_error([&] { decompose_recurrent(both_ways); }, {"1026 time steps"});
}

// End to end: the pipeline decomposes the node, and the primitive ops lower and run.
class CompiledRecurrentTest : public ::testing::TestWithParam<RnnCase> {};

TEST_P(CompiledRecurrentTest, CompiledMatchesReference) {
  Built built = build(GetParam());
  std::vector<graph::TensorData> want = reference::run(built.g, built.inputs);
  for (int opt_level : {0, 3}) {
    CompileOptions opt;
    opt.opt_level = opt_level;
    CompiledModel m = compile_graph(built.g, opt);
    for (const auto& [name, value] : built.inputs) m.set_input(name, to_ndarray(value));
    m.run();
    std::vector<graph::TensorData> got;
    for (int o = 0; o < m.num_outputs(); ++o)
      got.push_back(to_tensor_data(m.get_output(o)).clone());
    SCOPED_TRACE("opt_level " + std::to_string(opt_level));
    expect_all_close(got, want, {1e-4, 1e-4});
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cells, CompiledRecurrentTest,
    ::testing::Values(with("LSTM_bidirectional_states",
                           [](RnnCase& c) {
                             c.direction = "bidirectional", c.initial_h = true, c.initial_c = true;
                             c.peepholes = true, c.clip = 0.8;
                           }),
                      with("GRU_reverse_layout1",
                           [](RnnCase& c) { c.op = "GRU", c.direction = "reverse", c.layout = 1; }),
                      with("GRU_linear_before_reset",
                           [](RnnCase& c) {
                             c.op = "GRU", c.linear_before_reset = 1, c.initial_h = true;
                           }),
                      with("RNN_seq_lens",
                           [](RnnCase& c) {
                             c.op = "RNN", c.seq_lens = {2, 4, 0}, c.direction = "bidirectional";
                           }),
                      with("LSTM_runtime_weights_and_lens",
                           [](RnnCase& c) {
                             c.runtime_weights = true, c.peepholes = true, c.seq_lens = {3, 1, 4};
                             c.runtime_lens = true, c.direction = "bidirectional";
                           })),
    [](const auto& info) { return info.param.label; });

}  // namespace
}  // namespace tessel::passes
