// parse_whole_number: what the flags, TESSEL_NUM_THREADS and type names accept as a number.
#include "ir/whole_number.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace tessel {
namespace {

TEST(WholeNumberTest, AcceptsTheWholeTextAsAnUnsignedDecimal) {
  EXPECT_EQ(parse_whole_number<int>("0"), 0);
  EXPECT_EQ(parse_whole_number<int>("017"), 17);  // decimal, never octal
  EXPECT_EQ(parse_whole_number<int>("2147483647"), 2147483647);
  EXPECT_EQ(parse_whole_number<size_t>("18446744073709551615"), SIZE_MAX);
  EXPECT_EQ(parse_whole_number<int64_t>("9007199254740993"), int64_t{9007199254740993});
  // A slice of a longer text: only the slice counts.
  EXPECT_EQ(parse_whole_number<int>(std::string_view("12x").substr(0, 2)), 12);
}

TEST(WholeNumberTest, AnIntegerMayBeNegative) {
  EXPECT_EQ(parse_integer<int64_t>("-12"), -12);
  EXPECT_EQ(parse_integer<int>("-2147483648"), INT32_MIN);
  for (const char* bad : {"", "+1", "- 1", "12x", "-", "1.0", "-2147483649"})
    EXPECT_EQ(parse_integer<int>(bad), std::nullopt) << "'" << bad << "'";
}

TEST(WholeNumberTest, RefusesSignsSpacesSuffixesAndOverflow) {
  for (const char* bad : {"", "-1", "-0", "+1", " 1", "1 ", "1x", "0x10", "1.5", "1e3", "x"}) {
    EXPECT_EQ(parse_whole_number<int>(bad), std::nullopt) << "'" << bad << "'";
    EXPECT_EQ(parse_whole_number<size_t>(bad), std::nullopt) << "'" << bad << "'";
  }
  EXPECT_EQ(parse_whole_number<int>("2147483648"), std::nullopt);
  EXPECT_EQ(parse_whole_number<size_t>("18446744073709551616"), std::nullopt);
}

}  // namespace
}  // namespace tessel
