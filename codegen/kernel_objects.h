// A model's kernels as machine code, each distinct kernel compiled once. Kernels equal up to names
// (the repeated blocks of ResNet, DenseNet or a transformer) share one object; the objects are
// compiled in parallel, each job in its own LLVM context, and taken from the kernel cache
// (codegen/kernel_cache.h) when an earlier compile made them. The output does not depend on the
// number of jobs: object i is a function of distinct kernel i alone, and the order is the order of
// first use. Link the objects into a shared library (link_shared_library) or into this process
// (runtime::JitSession::add_objects): the same machine code either way.
#pragma once

#include <string>
#include <vector>

#include "codegen/kernel_cache.h"
#include "codegen/target.h"
#include "ir/stmt.h"

namespace tessel {

struct KernelObjectOptions {
  int jobs = 0;  // parallel compiles; 0: one per hardware thread
  const KernelCache* cache = nullptr;
};

struct KernelObjects {
  // One relocatable object per distinct kernel, then the object of the kernel table
  // (TESSEL_KERNEL_TABLE_SYMBOL) that lists every function compiled under its own name.
  std::vector<std::string> objects;
  // The entry symbol of each distinct kernel: "tessel_k" and its cache key.
  std::vector<std::string> symbols;
  int cache_hits = 0;
  int jobs = 0;                // the threads that compiled
  double optimize_ms = 0;      // tir to LLVM IR and its optimization, summed over the jobs
  double machine_code_ms = 0;  // instruction selection to object file, summed over the jobs
};

// `funcs` must have distinct names. The objects call the runtime through pointer variables that
// the loader sets (RuntimeLinkage::kPointers), and argument errors name arguments by position.
KernelObjects compile_kernel_objects(const std::vector<PrimFunc>& funcs, const Target& target,
                                     const KernelObjectOptions& opt = {});

// A shared library at `path` from relocatable objects, linked by the system `cc`; the objects'
// target must be the host's OS and architecture.
void link_shared_library(const std::vector<std::string>& objects, const std::string& path);

}  // namespace tessel
