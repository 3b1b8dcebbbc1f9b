// Loads a shared library written by export_library (codegen/build.h) with dlopen, without LLVM:
// points its __tessel_fp_* runtime pointers at this process's runtime, then serves its entry
// points as Functions. The library stays loaded while the Module or any Function from it lives.
#pragma once

#include <string>
#include <vector>

#include "runtime/module.h"

namespace tessel::runtime {

// `entries`: the functions the library must export (Error naming a missing one, or the dlopen error).
Module load_library(const std::string& path, const std::vector<std::string>& entries);

}  // namespace tessel::runtime
