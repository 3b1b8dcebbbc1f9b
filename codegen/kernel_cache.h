// Compiled kernel objects on disk, so that recompiling a model after a small change, and a tuner's
// re-measurements, reuse the machine code of every kernel that did not change. An entry is keyed
// by everything that decides its bytes (kernel_key): the kernel up to names, the target, LLVM's
// version and this build of Tessel. Entries are written atomically and checked when read: a
// truncated or corrupt entry is a miss, never an error, and the next compile rewrites it.
#pragma once

#include <optional>
#include <string>

#include "codegen/target.h"
#include "ir/stmt.h"

namespace tessel {

class KernelCache {
 public:
  // The cache folder for this process: $TESSEL_CACHE_DIR when set (set to "" or "off", the cache
  // is disabled), else $XDG_CACHE_HOME/tessel, else $HOME/.cache/tessel; nullopt when disabled.
  static std::optional<KernelCache> from_environment();
  explicit KernelCache(std::string dir) : dir_(std::move(dir)) {}
  const std::string& dir() const { return dir_; }

  // The object stored under `key`; nullopt when there is none or it fails its checks.
  std::optional<std::string> get(const std::string& key) const;
  // Stores `object` under `key` (a temporary file renamed into place, so readers never see part
  // of it). A cache that cannot be written costs time, not correctness: failures are ignored.
  void put(const std::string& key, const std::string& object) const;

 private:
  std::string path_of(const std::string& key) const;
  std::string dir_;
};

// 32 hex digits (XXH3-128) over the kernel's canonical text and structural hash (ir/printer.h,
// ir/structural_equal.h), the target, the LLVM version and the build of the code generator.
std::string kernel_key(const PrimFunc& func, const Target& target);

}  // namespace tessel
