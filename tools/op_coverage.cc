// op_coverage: prints the markdown table of docs/op-coverage.md — for every operator in the op
// table, its fusion pattern, oldest supported opset, and whether it has a reference
// implementation and a te lowering (i.e. compiles).
#include <algorithm>
#include <iostream>

#include "ir/op_table.h"
#include "reference/reference.h"
#include "topi/op_compute.h"

int main() {
  using namespace tessel;
  std::vector<const graph::OpDef*> ops;
  for (const auto& op : graph::all_ops()) {
    if (op.since_opset != graph::kInternalOp) ops.push_back(&op);  // the table lists ONNX operators
  }
  std::sort(ops.begin(), ops.end(),
            [](const auto* a, const auto* b) { return a->name() < b->name(); });
  int compiled = 0;
  std::cout << "| op | pattern | since opset | reference | compiles (te lowering) "
               "|\n|---|---|---|---|---|\n";
  for (const auto* op : ops) {
    bool ref = reference::find_eval(op->kind) != nullptr,
         te = topi::find_compute(op->kind) != nullptr;
    compiled += te;
    std::cout << "| " << op->name() << " | " << graph::op_pattern_name(op->pattern) << " | "
              << op->since_opset << " | " << (ref ? "yes" : "no") << " | " << (te ? "yes" : "no")
              << " |\n";
  }
  std::cout << "\n"
            << ops.size() << " operators in the op table; " << compiled << " compile through te.\n";
  return 0;
}
