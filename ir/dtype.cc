#include "ir/dtype.h"

#include <fmt/format.h>

#include <bit>
#include <cmath>
#include <optional>

#include "ir/error.h"
#include "ir/whole_number.h"

namespace tessel {

std::string DataType::str() const {
  std::string base;
  if (is_bool()) {
    base = "bool";
  } else if (is_void()) {
    return "void";
  } else if (is_handle()) {
    base = "handle";
  } else {
    const char* prefix = code_ == kInt      ? "int"
                         : code_ == kUInt   ? "uint"
                         : code_ == kBFloat ? "bfloat"
                                            : "float";
    base = fmt::format("{}{}", prefix, bits_);
  }
  return lanes_ == 1 ? base : fmt::format("{}x{}", base, lanes_);
}

namespace {

// Lanes are stored in 16 bits; no target's vectors come near this many (AVX-512's hold 64 int8).
constexpr int kMaxLanes = 1024;

}  // namespace

DataType DataType::parse(const std::string& s) {
  std::string base = s;
  int lanes = 1;
  if (auto x = s.find('x'); x != std::string::npos && x > 0) {
    base = s.substr(0, x);
    std::optional<int> n = parse_whole_number<int>(std::string_view(s).substr(x + 1));
    if (!n || *n < 1 || *n > kMaxLanes)
      throw Error(
          fmt::format("invalid data type '{}': bad lane count (expected 1 to {})", s, kMaxLanes));
    lanes = *n;
  }
  if (base == "bool") return boolean(lanes);
  if (base == "handle") return handle();
  if (base == "bfloat16") return bf16().with_lanes(lanes);
  for (auto [prefix, code] : {std::pair{"int", kInt}, {"uint", kUInt}, {"float", kFloat}}) {
    std::string p = prefix;
    if (base.rfind(p, 0) != 0) continue;
    std::optional<int> bits = parse_whole_number<int>(std::string_view(base).substr(p.size()));
    bool ok = bits && (code == kFloat ? (*bits == 16 || *bits == 32 || *bits == 64)
                                      : (*bits == 8 || *bits == 16 || *bits == 32 || *bits == 64));
    if (ok) return {code, *bits, lanes};
  }
  throw Error(
      fmt::format("invalid data type '{}': expected int8/16/32/64, uint8/16/32/64, float16/32/64, "
                  "bfloat16 or bool",
                  s));
}

float half_to_float(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  if (exp == 0) {  // zero or subnormal: mant * 2^-24
    float f = std::ldexp(static_cast<float>(mant), -24);
    return sign ? -f : f;
  }
  uint32_t bits =
      exp == 31 ? sign | 0x7f800000u | (mant << 13) : sign | ((exp + 112) << 23) | (mant << 13);
  return std::bit_cast<float>(bits);
}

uint16_t float_to_half(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  auto sign = static_cast<uint16_t>((x >> 16) & 0x8000);
  uint32_t abs = x & 0x7fffffff;
  if (abs > 0x7f800000) return sign | 0x7e00;   // NaN
  if (abs >= 0x477ff000) return sign | 0x7c00;  // >= 65520 rounds to infinity
  if (abs < 0x38800000) {                       // below the smallest normal half (2^-14)
    float scaled = std::bit_cast<float>(abs) * 16777216.0f;  // exact: a power-of-two scale
    return sign | static_cast<uint16_t>(std::nearbyint(scaled));
  }
  uint32_t h = (((abs >> 23) - 112) << 10) | ((abs & 0x7fffff) >> 13);
  uint32_t rest = abs & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (h & 1))) ++h;  // a carry into the exponent is correct
  return sign | static_cast<uint16_t>(h);
}

float bfloat_to_float(uint16_t b) { return std::bit_cast<float>(static_cast<uint32_t>(b) << 16); }

uint16_t float_to_bfloat(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  // Truncating a NaN whose payload is all in the low half would give infinity.
  if (std::isnan(f)) return static_cast<uint16_t>((x >> 16) | 0x0040);
  return static_cast<uint16_t>(x >> 16);
}

}  // namespace tessel
