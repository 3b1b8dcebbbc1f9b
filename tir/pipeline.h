// The tir pass pipeline: from schedule_to_tir's output (N-d buffers, guarded loops) to what the
// codegen consumes (1-d accesses, vector code, unrolled loops, lowered intrinsics).
// Dumping: TESSEL_DUMP_IR=pass1,pass2 (or `all`) prints "// after <pass>" and the function to
// stderr after those passes; `after_pass` sees every pass.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ir/stmt.h"

namespace tessel::tir {

struct PipelineOptions {
  bool loop_partition = true;
  int auto_unroll_max_extent = 0;  // 0: unroll only loops marked Unrolled
  // The threads that run a parallel loop (the target's cores), for loop_partition; 0: unknown.
  int parallel_threads = 0;
  std::function<void(const std::string& pass, const PrimFunc&)> after_pass;
#ifdef NDEBUG
  bool verify = false;  // well-formedness checks between passes; the final verify always runs
#else
  bool verify = true;
#endif
  // Passes to dump, in TESSEL_DUMP_IR's format; unset: read the TESSEL_DUMP_IR env var.
  std::optional<std::string> dump_ir;
};

PrimFunc lower_tir(PrimFunc f, const PipelineOptions& opt = {});

// The passes lower_tir runs with default options, in order (simplify runs several times).
std::vector<std::string> tir_pass_names();

// Pass names selected by a TESSEL_DUMP_IR value ("all", or names separated by commas; spaces
// and empty entries ignored). Throws tessel::Error on an unknown name, listing the known ones.
std::vector<std::string> parse_dump_ir(const std::string& spec);

// The names in `spec` ("all", or names separated by commas; spaces and empty entries ignored),
// each checked against `known`; an unknown name is an Error naming `variable`, the `kind` of
// pass and listing `known`.
std::vector<std::string> parse_pass_list(const std::string& spec, std::vector<std::string> known,
                                         const std::string& variable, const std::string& kind);

}  // namespace tessel::tir
