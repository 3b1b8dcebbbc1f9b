// A --target string -> Target::parse. A target it accepts must print as a string that parses back
// to the same target (codegen/target.h promises the round trip): anything else aborts.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

#include "codegen/target.h"
#include "tests/fuzz/fuzz_util.h"

using namespace tessel;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::optional<Target> parsed;
  fuzz::expect_clean_failure([&] { parsed = Target::parse(fuzz::as_string(data, size)); });
  if (!parsed) return 0;
  std::string printed = parsed->str();
  if (Target::parse(printed).str() != printed) {
    std::fprintf(stderr, "target '%s' does not round-trip through Target::parse\n",
                 printed.c_str());
    std::abort();
  }
  return 0;
}
