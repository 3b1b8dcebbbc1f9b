// The C entry points that generated code calls. None of them lets a C++ exception escape: JIT
// frames have no unwind tables, so failures become -1 (or null) plus TesselSetLastError.
#include "runtime/c_runtime_api.h"

#include <cstdlib>
#include <exception>
#include <string>

#include "runtime/thread_pool.h"

namespace {
thread_local std::string last_error;
constexpr uint64_t kWorkspaceAlignment = 64;
}  // namespace

extern "C" {

void TesselSetLastError(const char* msg) { last_error = msg != nullptr ? msg : ""; }

const char* TesselGetLastError(void) { return last_error.c_str(); }

int32_t TesselBackendParallelLaunch(TesselParallelLambda lambda, void* closure, int32_t num_tasks) {
  try {
    return tessel::runtime::parallel_launch(lambda, closure, num_tasks);
  } catch (const std::exception& e) {
    TesselSetLastError(e.what());
    return -1;
  }
}

int32_t TesselBackendNumThreads(void) {
  try {
    return tessel::runtime::num_threads();
  } catch (const std::exception& e) {
    // A bad TESSEL_NUM_THREADS: run serially here; the next launch reports the error.
    TesselSetLastError(e.what());
    return 1;
  }
}

void* TesselBackendAllocWorkspace(uint64_t nbytes) {
  // aligned_alloc needs a nonzero multiple of the alignment; huge requests must not wrap around.
  void* ptr = nullptr;
  if (nbytes <= UINT64_MAX - kWorkspaceAlignment) {
    uint64_t rounded =
        (nbytes + kWorkspaceAlignment - 1) / kWorkspaceAlignment * kWorkspaceAlignment;
    ptr = std::aligned_alloc(kWorkspaceAlignment, rounded == 0 ? kWorkspaceAlignment : rounded);
  }
  if (ptr == nullptr) {
    std::string msg =
        "TesselBackendAllocWorkspace: cannot allocate " + std::to_string(nbytes) + " bytes";
    TesselSetLastError(msg.c_str());
  }
  return ptr;
}

void TesselBackendFreeWorkspace(void* ptr) { std::free(ptr); }

}  // extern "C"
