// Searches in printed IR, traces and generated code.
#pragma once

#include <cstddef>
#include <string>

namespace tessel::testing {

// How many times `what` occurs in `text` (overlapping occurrences too).
inline size_t count_occurrences(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace tessel::testing
