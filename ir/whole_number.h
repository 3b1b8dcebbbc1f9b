// Decimal integers from flags, environment variables, type names and traces, whole or not at all.
#pragma once

#include <charconv>
#include <optional>
#include <string_view>
#include <system_error>

namespace tessel {

// The whole of `text` as a decimal integer that fits T, "-" allowed for a signed T; nullopt
// otherwise ("", "+1", " 1", "1x", "0x10" and out-of-range values alike).
template <class T>
std::optional<T> parse_integer(std::string_view text) {
  T v{};
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return v;
}

// The same without a sign: "-1" and "-0" are refused too.
template <class T>
std::optional<T> parse_whole_number(std::string_view text) {
  if (!text.empty() && text[0] == '-') return std::nullopt;
  return parse_integer<T>(text);
}

}  // namespace tessel
