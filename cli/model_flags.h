// The flags that say how a model compiles, shared by tessel compile and tessel tune (which must
// see the same kernels for records to apply).
#pragma once

#include <string>
#include <vector>

#include "driver/compile.h"

namespace CLI {
class App;
}

namespace tessel::cli {

struct ModelFlags {
  std::string target = "llvm -mcpu=native", input_shapes;
  int opt_level = 3;
  int jobs = 0;                              // LLVM compiles at once; 0: one per hardware thread
  std::vector<std::string> disabled_passes;  // as given: comma-separated lists

  // Error naming --input-shapes or --disabled-pass when it is malformed.
  CompileOptions compile_options() const;
};

// Registers --target, --input-shapes, -O/--opt-level, --disabled-pass and -j/--jobs on `cmd`.
void add_model_flags(CLI::App& cmd, ModelFlags& flags);

}  // namespace tessel::cli
