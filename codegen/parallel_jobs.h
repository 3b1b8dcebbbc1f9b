// Runs independent compile steps (lowering groups, compiling kernels) on several threads.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

namespace tessel::codegen {

// The threads for `jobs` requested (0: one per hardware thread) and `work` items, at least 1.
unsigned job_threads(int jobs, size_t work);

// Calls fn(i) once for each i in `order`, taken in that order by up to `threads` threads (this one
// included). After all have run, rethrows the exception of the lowest failing i, so the error a
// user sees does not depend on the thread count.
void run_jobs(const std::vector<size_t>& order, unsigned threads,
              const std::function<void(size_t)>& fn);

}  // namespace tessel::codegen
