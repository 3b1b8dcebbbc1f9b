// Test helper shared by the test suites.
#pragma once

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>

#include "ir/error.h"

namespace tessel::testing {

// Expects `fn` to throw tessel::Error whose message contains every one of `parts`.
template <class Fn>
void expect_error(Fn fn, std::initializer_list<std::string> parts) {
  try {
    fn();
    FAIL() << "expected tessel::Error";
  } catch (const Error& e) {
    for (const std::string& part : parts) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos)
          << "'" << part << "' not in: " << e.what();
    }
  }
}

}  // namespace tessel::testing
