// The one way tests check an error: the exception's type and substrings of its message.
#pragma once

#include <gtest/gtest.h>

#include <initializer_list>
#include <optional>
#include <source_location>
#include <string>

#include "ir/error.h"

namespace tessel::testing {

// Expects `fn` to throw an `E` (tessel::Error unless told) whose message contains every one of
// `parts`; failures are reported at the caller's line. Returns the exception for checks beyond
// the message (its fields, or an exact message), and nullopt when none was thrown. Another
// exception type propagates and fails the test.
template <class E = Error, class Fn>
std::optional<E> expect_error(Fn&& fn, std::initializer_list<std::string> parts = {},
                              std::source_location at = std::source_location::current()) {
  try {
    fn();
  } catch (const E& e) {
    const std::string message = e.what();
    for (const std::string& part : parts) {
      if (message.find(part) == std::string::npos)
        ADD_FAILURE_AT(at.file_name(), at.line()) << "'" << part << "' not in: " << message;
    }
    return e;
  }
  ADD_FAILURE_AT(at.file_name(), at.line()) << "expected an exception; none was thrown";
  return std::nullopt;
}

}  // namespace tessel::testing
