// The reference executor: a deliberately simple op-by-op evaluator (naive loops, no te) used as
// an independent oracle in tests and by constant folding. Not fast, and not meant to be.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace tessel::reference {

using graph::OpKind;
using graph::TensorData;

// Evaluates one node. inputs[i] is undefined (TensorData()) for an omitted optional input.
using EvalFn = std::function<std::vector<TensorData>(const graph::Graph& g, const graph::Node& node,
                                                     const std::vector<TensorData>& inputs)>;
struct RefOp {
  graph::OpKind op;
  EvalFn eval;
};

// The reference implementation of `op`; nullptr when it has none.
const EvalFn* find_eval(graph::OpKind op);

// Throws tessel::Error naming the node when the op has no reference implementation.
std::vector<TensorData> eval_node(const graph::Graph& g, const graph::Node& node,
                                  const std::vector<TensorData>& inputs);

// Runs a graph; every graph input must be given by name with its declared dtype and a shape
// matching its known dims. Returns the graph outputs in order.
std::vector<TensorData> run(const graph::Graph& g, const std::map<std::string, TensorData>& inputs);

}  // namespace tessel::reference
