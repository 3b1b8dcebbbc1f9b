#include "frontend/frontend_error.h"

#include <fmt/format.h>

namespace tessel::frontend {

namespace {
int total_nodes(const std::vector<UnsupportedOp>& ops) {
  int n = 0;
  for (const auto& op : ops) n += op.count;
  return n;
}
}  // namespace

std::string format_unsupported_ops(const std::vector<UnsupportedOp>& ops) {
  std::string out;
  for (const auto& op : ops) {
    std::string names = fmt::format("{}", fmt::join(op.node_names, ", "));
    if (op.count > static_cast<int>(op.node_names.size())) {
      names += fmt::format(", ... ({} more)", op.count - static_cast<int>(op.node_names.size()));
    }
    out += fmt::format("  {} ({} opset {}): {} node{}: {}\n", op.op_type,
                       op.domain.empty() ? "ai.onnx" : op.domain, op.opset, op.count,
                       op.count == 1 ? "" : "s", names);
  }
  return out;
}

UnsupportedOpsError::UnsupportedOpsError(std::vector<UnsupportedOp> ops, const std::string& source)
    : Error(fmt::format("'{}' uses {} unsupported op type{} ({} node{}):\n{}", source, ops.size(),
                        ops.size() == 1 ? "" : "s", total_nodes(ops),
                        total_nodes(ops) == 1 ? "" : "s", format_unsupported_ops(ops))),
      ops_(std::move(ops)) {}

}  // namespace tessel::frontend
