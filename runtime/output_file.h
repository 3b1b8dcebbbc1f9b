// Writing output files atomically, and only over what may be replaced. Outputs (packages, .npz)
// are written to a temporary file beside the target and renamed over it, so a reader never sees a
// half-written file. A rename replaces whatever has the name: done over /dev/null, a FIFO or a
// directory it would swap that for a plain file. So only a regular file, or a new name, is
// replaced.
#pragma once

#include <functional>
#include <string>

namespace tessel::runtime {

// Error naming `what` ("the package", "the .npz") and `path` unless `path` does not exist or is a
// regular file. Symbolic links are followed: a link to a regular file is allowed (the rename
// replaces the link itself), a link to a device is refused.
void check_replaceable(const std::string& path, const std::string& what);

// Writes `path` atomically: check_replaceable, then `write` fills a new file beside `path` (through
// its descriptor, which `write` must not close), which is renamed over `path`. On any failure,
// `write`'s exceptions included, the temporary file is removed and `path` is left as it was.
void write_atomically(const std::string& path, const std::string& what,
                      const std::function<void(int fd)>& write);

}  // namespace tessel::runtime
