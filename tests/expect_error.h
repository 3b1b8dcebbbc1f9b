// Test helper shared by the runtime tests.
#pragma once

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>

#include "ir/error.h"

namespace tessel::runtime::testing {

// Expects `fn` to throw tessel::Error whose message contains every one of `parts`.
template <class Fn>
void expect_error(Fn fn, std::initializer_list<std::string> parts) {
  try {
    fn();
    FAIL() << "expected tessel::Error";
  } catch (const Error& e) {
    for (const std::string& part : parts) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << "'" << part << "' not in: " << e.what();
    }
  }
}

}  // namespace tessel::runtime::testing
