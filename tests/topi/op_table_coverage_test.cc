// The op table and the tables keyed by its kinds agree: every OpKind has one OpDef, found by its
// name; every OpDef has a type relation, a reference implementation and a te lowering, or is on a
// listed exception with its reason; a tuned op has a FLOP count and a tuning template on every CPU
// target kind.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "ir/op_table.h"
#include "reference/reference.h"
#include "topi/op_compute.h"
#include "topi/strategy.h"

namespace tessel::topi {
namespace {

// Ops that the importer rewrites into another (frontend/canonicalize_ops.h): they stay in the table
// so that models using them import, but no graph holds them after import.
const std::map<graph::OpKind, const char*> kRewrittenAtImport = {
    {graph::OpKind::Upsample, "becomes Resize with the legacy coordinate mapping"},
};

// Ops that never reach te, and why.
const std::map<graph::OpKind, const char*> kNoTeLowering = {
    {graph::OpKind::Constant, "a constant value: folded before lowering"},
    {graph::OpKind::ConstantOfShape, "its shape input must be constant, so it folds to a constant"},
    {graph::OpKind::Range, "its inputs must be constant, so it folds to a constant"},
    {graph::OpKind::NonZero,
     "its output shape depends on the data: runs only in the reference executor"},
    {graph::OpKind::If, "inlined by passes/inline_if when its condition is constant"},
    {graph::OpKind::LSTM, "unrolled into MatMul and elementwise ops by passes/decompose_recurrent"},
    {graph::OpKind::GRU, "unrolled into MatMul and elementwise ops by passes/decompose_recurrent"},
    {graph::OpKind::RNN, "unrolled into MatMul and elementwise ops by passes/decompose_recurrent"},
};

TEST(OpTableCoverageTest, EveryOpHasEachPieceOrAListedReason) {
  ASSERT_EQ(graph::all_ops().size(), static_cast<size_t>(graph::kNumOpKinds));
  for (const graph::OpDef& op : graph::all_ops()) {
    SCOPED_TRACE(std::string(op.name()));
    EXPECT_EQ(&graph::op_def(op.kind), &op);
    EXPECT_EQ(graph::find_op(op.name()), &op);
    EXPECT_TRUE(static_cast<bool>(op.infer_type));
    bool rewritten = kRewrittenAtImport.count(op.kind) != 0;
    EXPECT_NE(reference::find_eval(op.kind) != nullptr, rewritten);
    bool lowered = find_compute(op.kind) != nullptr;
    // An exception that gained a lowering must leave the list.
    EXPECT_NE(lowered, rewritten || kNoTeLowering.count(op.kind) != 0);
  }
  EXPECT_EQ(graph::find_op("NoSuchOp"), nullptr);
}

TEST(OpTableCoverageTest, TunedOpsAreCountedAndHaveATemplateOnEveryCpu) {
  int tuned = 0;
  for (const graph::OpDef& op : graph::all_ops()) {
    if (!op.tuned) continue;
    SCOPED_TRACE(std::string(op.name()));
    ++tuned;
    EXPECT_NE(op.flops, nullptr);
    for (TargetKind kind : {TargetKind::kX86Avx2, TargetKind::kX86Avx512, TargetKind::kAArch64Neon,
                            TargetKind::kGenericCpu}) {
      const Strategy& s = strategy_for(kind, graph::op_family(op));
      EXPECT_NE(s.space, nullptr) << target_kind_name(kind);
      EXPECT_NE(s.fallback, nullptr) << target_kind_name(kind);
    }
  }
  EXPECT_GT(tuned, 0);
}

}  // namespace
}  // namespace tessel::topi
