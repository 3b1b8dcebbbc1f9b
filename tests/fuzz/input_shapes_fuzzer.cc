// The --input-shapes flag value -> cli::parse_input_shapes.
#include <cstdint>
#include <string>

#include "cli/cli_util.h"
#include "tests/fuzz/fuzz_util.h"

using namespace tessel;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::expect_clean_failure([&] { cli::parse_input_shapes(fuzz::as_string(data, size)); });
  return 0;
}
