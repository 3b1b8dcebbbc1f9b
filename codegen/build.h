// PrimFuncs + Target -> a runnable Module. Input: lowered PrimFuncs (after the tir pipeline: 1-d
// buffer accesses, no Vectorized loops). Each PrimFunc becomes an entry named after it with the
// TesselBackendFunc signature, which checks its arguments and reports errors as tessel::Error.
// The emit_* functions return the optimized IR, assembly or object file without running anything.
#pragma once

#include <string>
#include <vector>

#include "codegen/cpu_model.h"
#include "codegen/target.h"
#include "ir/stmt.h"
#include "runtime/module.h"
#include "te/schedule.h"
#include "tir/pipeline.h"

namespace tessel {

// Lowers a te schedule (te::lower) and JIT-compiles it as function `name`. Thread bindings need a
// GPU target: on a CPU target they are an Error naming the stage, axis and thread tag.
runtime::Module build(const te::Schedule& sch, const std::vector<te::Tensor>& args,
                      const Target& target, const std::string& name,
                      const tir::PipelineOptions& opt = {});

// JIT-compiles into JitSession::shared(); the target's triple must be the host's.
runtime::Module build(const std::vector<PrimFunc>& funcs, const Target& target);
runtime::Module build(const PrimFunc& func, const Target& target);

// Compiles through kernel objects and the kernel cache of the environment
// (codegen/kernel_objects.h: kernels equal up to names once, a cached kernel not at all) and links
// them into this process. What tuning candidates run; argument errors name arguments by position.
runtime::Module build_cached(const std::vector<PrimFunc>& funcs, const Target& target);

// The tir pipeline's options for the kernels of `cpu` (loop_partition reads its core count).
tir::PipelineOptions pipeline_options(const CpuModel& cpu);

std::string emit_llvm_ir(const std::vector<PrimFunc>& funcs, const Target& target);
std::string emit_assembly(const std::vector<PrimFunc>& funcs, const Target& target);
// An ELF/Mach-O relocatable object (PIC) for the target, e.g. for a cross triple. It calls the
// runtime through pointer variables (RuntimeLinkage::kPointers) that a loader sets, and exports
// the kernel table (TESSEL_KERNEL_TABLE_SYMBOL, runtime/c_runtime_api.h) that lists its entries.
std::string emit_object(const std::vector<PrimFunc>& funcs, const Target& target);
// A shared library at `path` with one entry per PrimFunc (emit_object linked by the system `cc`);
// the target must be the host's OS and architecture. Load it with runtime::load_library.
void export_library(const std::vector<PrimFunc>& funcs, const Target& target,
                    const std::string& path);

}  // namespace tessel
