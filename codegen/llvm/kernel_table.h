// The kernel table of an object or shared library: the constant TesselKernelTable
// (runtime/c_runtime_api.h), exported as TESSEL_KERNEL_TABLE_SYMBOL, that lists each kernel's name
// and entry point. A loader calls only the kernels it lists. Internal to codegen/.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace llvm {
class Module;
}  // namespace llvm

namespace tessel::codegen {

// Adds the table to `module`: one entry per (kernel name, entry symbol), in order. An entry symbol
// not defined in the module is declared, to be resolved when objects are linked; several names
// may share one entry (identical kernels compiled once).
void add_kernel_table(llvm::Module& module,
                      const std::vector<std::pair<std::string, std::string>>& entries);

}  // namespace tessel::codegen
