// The C entry points that generated code calls. None of them lets a C++ exception escape: JIT
// frames have no unwind tables, so failures become -1 (or null) plus TesselSetLastError.
#include "runtime/c_runtime_api.h"

#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "runtime/thread_pool.h"

namespace {
thread_local std::string last_error;
constexpr uint64_t kWorkspaceAlignment = 64;

// Kernels allocate the same workspaces on every run (a padded input, a packed panel). Large
// blocks come from mmap and go back to the system on free, so each run would fault in and zero
// their pages again: MobileNetV2's stem conv ran at half speed, 0.28 -> 0.6 ms, for its 600 KB
// padded input. Each thread keeps the blocks it freed last, by size, for its next allocations:
// enough blocks for a model's kernels to find theirs. A Winograd conv allocates three: with 8
// blocks, SqueezeNet's first 55 x 55 one took 0.44 ms against 0.25 for the next of its shape;
// with 32, 0.29-0.34.
// A block carries its size in the 64 bytes before the pointer handed out.
class WorkspaceCache {
 public:
  static constexpr size_t kMaxBlocks = 32;
  static constexpr uint64_t kMaxBytes = uint64_t{64} << 20;

  WorkspaceCache() { blocks_.reserve(kMaxBlocks + 1); }  // give() must not throw into kernels
  ~WorkspaceCache() { clear(); }

  // Frees every cached block (an allocation failed: the memory may be needed elsewhere).
  void clear() {
    for (const Block& b : blocks_) std::free(b.base);
    blocks_.clear();
    cached_ = 0;
  }

  // A cached block of exactly `bytes`, or null.
  void* take(uint64_t bytes) {
    for (size_t i = blocks_.size(); i-- > 0;) {
      if (blocks_[i].bytes != bytes) continue;
      void* base = blocks_[i].base;
      cached_ -= bytes;
      blocks_.erase(blocks_.begin() + static_cast<std::ptrdiff_t>(i));
      return base;
    }
    return nullptr;
  }

  // Keeps `base` for reuse, dropping the oldest blocks beyond the limits.
  void give(void* base, uint64_t bytes) {
    if (bytes > kMaxBytes) return std::free(base);
    blocks_.push_back({base, bytes});
    cached_ += bytes;
    while (blocks_.size() > kMaxBlocks || cached_ > kMaxBytes) {
      cached_ -= blocks_.front().bytes;
      std::free(blocks_.front().base);
      blocks_.erase(blocks_.begin());
    }
  }

 private:
  struct Block {
    void* base;
    uint64_t bytes;
  };
  std::vector<Block> blocks_;
  uint64_t cached_ = 0;
};

thread_local WorkspaceCache workspace_cache;
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
  void* base = nullptr;
  if (nbytes <= UINT64_MAX - 2 * kWorkspaceAlignment) {
    uint64_t bytes =
        (nbytes + 2 * kWorkspaceAlignment - 1) / kWorkspaceAlignment * kWorkspaceAlignment;
    base = workspace_cache.take(bytes);
    if (base == nullptr) base = std::aligned_alloc(kWorkspaceAlignment, bytes);
    if (base == nullptr) {
      workspace_cache.clear();
      base = std::aligned_alloc(kWorkspaceAlignment, bytes);
    }
    if (base != nullptr) *static_cast<uint64_t*>(base) = bytes;
  }
  if (base == nullptr) {
    std::string msg =
        "TesselBackendAllocWorkspace: cannot allocate " + std::to_string(nbytes) + " bytes";
    TesselSetLastError(msg.c_str());
    return nullptr;
  }
  return static_cast<char*>(base) + kWorkspaceAlignment;
}

void TesselBackendFreeWorkspace(void* ptr) {
  if (ptr == nullptr) return;
  void* base = static_cast<char*>(ptr) - kWorkspaceAlignment;
  workspace_cache.give(base, *static_cast<uint64_t*>(base));
}

}  // extern "C"
