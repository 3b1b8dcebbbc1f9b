// What loading compiled kernels needs, whether a shared library (runtime/library.h) or objects
// linked into this process (runtime/jit.h): reading the kernel table (runtime/c_runtime_api.h) and
// pointing the code's runtime pointer slots at this process's runtime.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "runtime/c_runtime_api.h"
#include "runtime/module.h"

namespace tessel::runtime {

// The runtime functions that generated code may call, by name.
const std::map<std::string, void*>& runtime_api();

// The table's kernels by name; Error naming `what` when `table` is null (code built before Tessel
// had tables: recompile), of another version, or malformed.
std::map<std::string, TesselBackendFunc> read_kernel_table(const TesselKernelTable* table,
                                                           const std::string& what);

// Sets each slot TESSEL_RUNTIME_POINTER_PREFIX + name that `find_slot` returns (nullptr: the code
// calls no such function) to the runtime function. The same loaded image may be shared by threads
// whose kernels already read the slots: a slot is written once, under a lock, and never rewritten.
void fill_runtime_slots(const std::function<void**(const std::string& symbol)>& find_slot);

// A Module serving the kernels of a table; `keep_alive` owns the code behind them, as long as the
// Module or any Function from it lives. It has no source text (--dump-ir writes that).
Module table_module(std::shared_ptr<void> keep_alive,
                    std::map<std::string, TesselBackendFunc> kernels);

}  // namespace tessel::runtime
