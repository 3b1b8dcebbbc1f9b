#include "ir/dtype.h"

#include <fmt/format.h>

#include "ir/error.h"

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

DataType DataType::parse(const std::string& s) {
  std::string base = s;
  int lanes = 1;
  if (auto x = s.find('x'); x != std::string::npos && x > 0) {
    base = s.substr(0, x);
    try {
      lanes = std::stoi(s.substr(x + 1));
    } catch (const std::exception&) {
      throw Error(fmt::format("invalid data type '{}': bad lane count", s));
    }
  }
  if (base == "bool") return boolean(lanes);
  if (base == "handle") return handle();
  if (base == "bfloat16") return bf16().with_lanes(lanes);
  for (auto [prefix, code] : {std::pair{"int", kInt}, {"uint", kUInt}, {"float", kFloat}}) {
    std::string p = prefix;
    if (base.rfind(p, 0) == 0 && base.size() > p.size()) {
      int bits = 0;
      try {
        bits = std::stoi(base.substr(p.size()));
      } catch (const std::exception&) {
        break;
      }
      bool ok = code == kFloat ? (bits == 16 || bits == 32 || bits == 64)
                               : (bits == 8 || bits == 16 || bits == 32 || bits == 64);
      if (ok) return {code, bits, lanes};
    }
  }
  throw Error(
      fmt::format("invalid data type '{}': expected int8/16/32/64, uint8/16/32/64, float16/32/64, "
                  "bfloat16 or bool",
                  s));
}

}  // namespace tessel
