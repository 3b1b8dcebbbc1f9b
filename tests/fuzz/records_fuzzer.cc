// A tuning records file -> autotune::load_records (line splitting, record_from_line), then the
// Database queries a compile and a resumed tune make of every (target, workload) it holds.
#include <cstdint>
#include <string>
#include <vector>

#include "autotune/records.h"
#include "tests/fuzz/fuzz_util.h"

using namespace tessel;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static fuzz::ScratchFile file(".json");
  fuzz::expect_clean_failure([&] {
    std::vector<std::string> warnings;
    std::vector<autotune::TuningRecord> records =
        autotune::load_records(file.write(fuzz::as_string(data, size)), &warnings);
    autotune::Database db(records);
    for (const autotune::TuningRecord& r : records) {
      db.best(r.target, r.workload);
      db.pinned(r.target, r.workload);
      db.configs_measured(r.target, r.workload);
      autotune::record_to_line(r);
    }
  });
  return 0;
}
