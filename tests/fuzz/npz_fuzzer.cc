// .npz and .npy bytes -> runtime::load_npz (through a file: libzip and the zip64 diagnosis read a
// path) and runtime::parse_npy directly, since a mutated payload inside a zip rarely survives the
// entry's CRC check.
#include <cstdint>
#include <string>

#include "runtime/npz.h"
#include "tests/fuzz/fuzz_util.h"

using namespace tessel;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static fuzz::ScratchFile file(".npz");
  std::string bytes = fuzz::as_string(data, size);
  fuzz::expect_clean_failure([&] { runtime::parse_npy(bytes, "fuzz.npy"); });
  fuzz::expect_clean_failure([&] { runtime::load_npz(file.write(bytes)); });
  return 0;
}
