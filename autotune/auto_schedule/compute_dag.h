// The compute DAG of one auto-scheduler task (Ansor's ComputeDAG): the te stages of a fused
// group's computes, in the order create_schedule gives them, with the facts the sketch rules
// (sketch.h) read about each: is it a reduction, does it reuse data, may it be inlined, which
// consumer reads it point for point.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "codegen/cpu_model.h"
#include "te/schedule.h"

namespace tessel::autotune {

constexpr size_t kNoStage = static_cast<size_t>(-1);

// Where a consumer reads one axis of a stage: at one of its own axes, or at one part of that axis
// split into blocks (ConvNCHWc's epilogue reads its blocks yb[n, m / b, h, w, m % b]).
struct BlockedRead {
  size_t axis = 0;     // the consumer's axis
  int64_t block = 0;   // 0: the axis itself; else the axis split by `block`,
  bool inner = false;  // and this its inner part (axis % block), else its outer (axis / block)
  bool operator==(const BlockedRead&) const = default;
};

struct StageFacts {
  std::string name;
  bool placeholder = false;
  bool output = false;
  bool reduction = false;  // a compute with reduce axes
  // Its body calls an intrinsic (exp, log, sqrt, ...): inlining it into a consumer that reads a
  // point more than once would compute it more than once.
  bool expensive = false;
  // Its value is a read under a condition on its indices (if_then_else: a padded input, the
  // value inside the bounds and a fill outside), and every stage that reads it reduces (a conv
  // or a pool over its windows). Inlined, each of the reduction's reads checks the bounds in its
  // innermost loop; at root, the check runs once per element.
  bool guarded_window = false;
  // Its value combines several reads of tensors (a transform, as Winograd's input and output tiles
  // are made), and some stage reads each of its points more than once (Winograd's GEMM reads a
  // transformed input tile once per output channel): inlined, it would be computed again at every
  // read.
  bool reread_transform = false;
  // A reduction that reads some tensor at the same point for every value of a spatial axis (of
  // extent > 1) of its own: matmul's A across j, a conv's input across output channels. Tiling
  // it in several levels keeps the reused data in registers and caches (Ansor's
  // NeedsMultiLevelTiling).
  bool data_reuse = false;
  // A reduction without data reuse whose innermost reduce axis runs along the last dim of what it
  // reads, a whole number of vectors and at least two: rfactor turns it into vector partials.
  // (Ansor's rule asks instead whether the spatial loops are too short to parallelize: on a
  // 2-core CPU they rarely are, while a reduction along a contiguous axis is common, in softmax
  // and every normalization.)
  bool rfactor_pays = false;
  std::vector<int64_t> spatial;              // extents of the compute's axes
  std::vector<int64_t> reduce;               // extents of its reduce axes
  std::vector<size_t> producers, consumers;  // compute stages only (positions in stages())
  // The consumer that reads this stage exactly at its own point (same shape, indices its axes in
  // order, or 0 along an axis of extent 1 as a broadcast reads it), when it is the only consumer
  // and computes no reduction; kNoStage otherwise.
  size_t elementwise_consumer = kNoStage;
  // Else, the consumer that reads it at one point per point of its own through a permuted or
  // blocked layout (ConvNCHWc's unpacking epilogue), when it is the only consumer and reduces
  // nothing: `unpacked_as[a]` is where it reads axis a. A tile fuses into it as into an
  // elementwise consumer, its axes split into the blocks first.
  size_t unpacking_consumer = kNoStage;
  std::vector<BlockedRead> unpacked_as;
};

class ComputeDAG {
 public:
  // `outputs`: the task's outputs; `args`: its function arguments (inputs, then outputs).
  ComputeDAG(std::vector<te::Tensor> outputs, std::vector<te::Tensor> args, const CpuModel& cpu);

  // A fresh schedule of the computes, every stage at root.
  te::Schedule schedule() const { return te::create_schedule(outputs_); }
  const std::vector<StageFacts>& stages() const { return stages_; }
  const std::vector<te::Tensor>& outputs() const { return outputs_; }
  const std::vector<te::Tensor>& args() const { return args_; }
  const CpuModel& cpu() const { return cpu_; }
  // Vector lanes of the outputs' element type.
  int lanes() const { return lanes_; }
  // Floating-point work of one run: each reduction point of each stage counts its body's
  // arithmetic, at least one operation (for GFLOP/s).
  double flops() const { return flops_; }
  // The task's output stage when it has one output; kNoStage otherwise.
  size_t output_stage() const { return output_stage_; }
  // The stages that read stage `i`'s values once inlined stages are gone: its consumers, an
  // inlined one (`inlined(c)`) replaced by its own readers.
  template <class Inlined>
  std::vector<size_t> readers(size_t i, const Inlined& inlined) const {
    std::vector<size_t> out;
    for (size_t c : stages_[i].consumers) {
      if (!inlined(c)) {
        out.push_back(c);
        continue;
      }
      for (size_t r : readers(c, inlined)) out.push_back(r);
    }
    return out;
  }
  // One line per compute stage: name, extents and facts.
  std::string str() const;

 private:
  std::vector<te::Tensor> outputs_, args_;
  CpuModel cpu_;
  int lanes_ = 1;
  double flops_ = 0;
  size_t output_stage_ = kNoStage;
  std::vector<StageFacts> stages_;
};

}  // namespace tessel::autotune
