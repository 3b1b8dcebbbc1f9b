// Errors for models Tessel cannot import yet (as opposed to broken models, which throw plain
// tessel::Error). Tools and the conformance runner tell "unsupported" apart from "wrong" by type.
#pragma once

#include <string>
#include <vector>

#include "ir/error.h"

namespace tessel::frontend {

// A model feature outside Tessel's scope: string tensors, sequence/map/optional types, sparse
// tensors, ... `feature()` is a short reason ("string tensors"); what() names the tensor or value.
class UnsupportedFeatureError : public Error {
 public:
  UnsupportedFeatureError(std::string feature, const std::string& detail)
      : Error(detail), feature_(std::move(feature)) {}
  const std::string& feature() const { return feature_; }

 private:
  std::string feature_;
};

// All nodes of one op type that the importer cannot keep.
struct UnsupportedOp {
  std::string op_type;
  std::string domain;                   // "" for ai.onnx
  int opset = 0;                        // the model's opset for that domain
  int count = 0;                        // number of nodes, subgraphs included
  std::vector<std::string> node_names;  // the first few (up to 5)
};

// One report for every unsupported op in the model, never only the first.
class UnsupportedOpsError : public Error {
 public:
  UnsupportedOpsError(std::vector<UnsupportedOp> ops, const std::string& source);
  const std::vector<UnsupportedOp>& ops() const { return ops_; }

 private:
  std::vector<UnsupportedOp> ops_;
};

// "  Einsum (ai.onnx opset 13): 2 nodes: e1, e2" per op, one line each.
std::string format_unsupported_ops(const std::vector<UnsupportedOp>& ops);

}  // namespace tessel::frontend
