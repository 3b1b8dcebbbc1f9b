// Decimal integers from flags, environment variables and type names, whole or not at all.
#pragma once

#include <charconv>
#include <optional>
#include <string_view>
#include <system_error>

namespace tessel {

// The whole of `text` as a decimal number without a sign that fits T; nullopt otherwise ("",
// "-1", "+1", " 1", "1x", "0x10" and out-of-range values alike).
template <class T>
std::optional<T> parse_whole_number(std::string_view text) {
  T v{};
  if (text.empty() || text[0] == '-') return std::nullopt;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return v;
}

}  // namespace tessel
