// Shared pieces of the libFuzzer targets (docs/fuzzing.md). A target passes each input to a parser
// inside expect_clean_failure: tessel::Error is the clean rejection a malformed file must get;
// anything else (InternalError, std::bad_alloc, an out_of_range, a signal) escapes to libFuzzer,
// which reports it as a finding with the input that caused it.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "ir/error.h"

namespace tessel::fuzz {

inline std::string as_string(const uint8_t* data, size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

template <class Fn>
void expect_clean_failure(Fn fn) {
  try {
    fn();
  } catch (const Error&) {
  }
}

// One file in $TMPDIR that every input of a run is written to, for readers that take a path.
// Removed when the process exits normally (libFuzzer's -runs or -max_total_time).
class ScratchFile {
 public:
  explicit ScratchFile(const std::string& suffix) {
    path_ = (std::filesystem::temp_directory_path() / ("tessel-fuzz-XXXXXX" + suffix)).string();
    int fd = mkstemps(path_.data(), static_cast<int>(suffix.size()));
    if (fd < 0) {
      std::perror("tessel fuzz: mkstemps");
      std::abort();
    }
    close(fd);
  }
  ~ScratchFile() { std::remove(path_.c_str()); }
  ScratchFile(const ScratchFile&) = delete;
  ScratchFile& operator=(const ScratchFile&) = delete;

  // Replaces the file's contents with `bytes`; returns its path.
  const std::string& write(const std::string& bytes) {
    FILE* f = std::fopen(path_.c_str(), "wb");
    if (f == nullptr || std::fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size() ||
        std::fclose(f) != 0) {
      std::perror("tessel fuzz: writing the scratch file");
      std::abort();
    }
    return path_;
  }

 private:
  std::string path_;
};

}  // namespace tessel::fuzz
