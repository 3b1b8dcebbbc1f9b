// Loads a shared library written by export_library (codegen/build.h) with dlopen, without LLVM:
// points its __tessel_fp_* runtime pointers at this process's runtime, then serves the kernels of
// its kernel table (TESSEL_KERNEL_TABLE_SYMBOL, runtime/c_runtime_api.h) as Functions. Only the
// table's kernels are callable: a name is never looked up with dlsym, which would also find libc's
// functions. The library stays loaded while the Module or any Function from it lives.
#pragma once

#include <string>
#include <vector>

#include "runtime/module.h"

namespace tessel::runtime {

// `entries`: the kernels the caller will call; each must be in the table. `what` names the library
// in errors (a package's mod.so is loaded from a temporary file). Error for the dlopen failure, a
// library without a kernel table (built before Tessel had one: recompile), a malformed table, or a
// missing entry.
Module load_library(const std::string& path, const std::vector<std::string>& entries,
                    const std::string& what);

}  // namespace tessel::runtime
