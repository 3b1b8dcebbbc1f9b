#include "runtime/output_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <random>

#include "ir/error.h"

namespace tessel::runtime {

namespace {

const char* file_kind(mode_t mode) {
  if (S_ISCHR(mode)) return "character device";
  if (S_ISBLK(mode)) return "block device";
  if (S_ISFIFO(mode)) return "FIFO";
  if (S_ISDIR(mode)) return "directory";
  if (S_ISSOCK(mode)) return "socket";
  return "special file";
}

// A new file `path`.tmp-XXXXXXXX (O_EXCL, so nothing existing is opened), created with mode 0666
// less the umask like any output. Returns its descriptor and sets *name.
int create_temporary(const std::string& path, const std::string& what, std::string* name) {
  std::random_device seed;
  std::mt19937 rng(seed());
  for (int attempt = 0; attempt < 100; ++attempt) {
    *name = fmt::format("{}.tmp-{:08x}", path, rng());
    int fd = open(name->c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) return fd;
    if (errno != EEXIST) break;
  }
  throw Error(fmt::format("cannot write {} '{}': cannot create a temporary file beside it: {}",
                          what, path, std::strerror(errno)));
}

}  // namespace

void check_replaceable(const std::string& path, const std::string& what) {
  struct stat st;
  // A name that cannot be stat'ed (missing, a dangling link) is created; other failures surface
  // when the writer opens or renames.
  if (stat(path.c_str(), &st) != 0 || S_ISREG(st.st_mode)) return;
  throw Error(
      fmt::format("cannot write {} '{}': it is a {}, not a regular file (an output is written to a "
                  "temporary file and renamed over its target, so only a regular file is replaced)",
                  what, path, file_kind(st.st_mode)));
}

void write_atomically(const std::string& path, const std::string& what,
                      const std::function<void(int fd)>& write) {
  check_replaceable(path, what);
  std::string tmp;
  int fd = create_temporary(path, what, &tmp);
  try {
    write(fd);
  } catch (...) {
    close(fd);
    std::remove(tmp.c_str());
    throw;
  }
  bool closed = close(fd) == 0;
  if (!closed || std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::string why = std::strerror(errno);
    std::remove(tmp.c_str());
    throw Error(fmt::format("cannot write {} '{}': {}", what, path, why));
  }
}

}  // namespace tessel::runtime
