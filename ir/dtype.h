// Scalar and vector data types, laid out like DLPack's DLDataType.
#pragma once

#include <cstdint>
#include <string>

namespace tessel {

class DataType {
 public:
  // kBFloat is DLPack's kDLBfloat. bfloat16 is not is_float(): it is a storage type that only Cast
  // converts (elementwise math on it is unsupported), so float code paths must not take it for
  // float16.
  enum Code : uint8_t { kInt = 0, kUInt = 1, kFloat = 2, kHandle = 3, kBFloat = 4 };

  constexpr DataType() = default;
  constexpr DataType(Code code, int bits, int lanes = 1)
      : code_(code), bits_(static_cast<uint8_t>(bits)), lanes_(static_cast<uint16_t>(lanes)) {}

  static constexpr DataType i8() { return {kInt, 8}; }
  static constexpr DataType i16() { return {kInt, 16}; }
  static constexpr DataType i32() { return {kInt, 32}; }
  static constexpr DataType i64() { return {kInt, 64}; }
  static constexpr DataType u8() { return {kUInt, 8}; }
  static constexpr DataType u16() { return {kUInt, 16}; }
  static constexpr DataType u32() { return {kUInt, 32}; }
  static constexpr DataType u64() { return {kUInt, 64}; }
  static constexpr DataType f16() { return {kFloat, 16}; }
  static constexpr DataType f32() { return {kFloat, 32}; }
  static constexpr DataType f64() { return {kFloat, 64}; }
  static constexpr DataType bf16() { return {kBFloat, 16}; }
  static constexpr DataType boolean(int lanes = 1) { return {kUInt, 1, lanes}; }
  static constexpr DataType handle() { return {kHandle, 64}; }
  static constexpr DataType void_type() { return {kHandle, 0}; }

  constexpr Code code() const { return code_; }
  constexpr int bits() const { return bits_; }
  constexpr int lanes() const { return lanes_; }
  constexpr int bytes() const { return (bits_ + 7) / 8; }

  constexpr bool is_int() const { return code_ == kInt; }
  constexpr bool is_uint() const { return code_ == kUInt && bits_ != 1; }
  constexpr bool is_bool() const { return code_ == kUInt && bits_ == 1; }
  constexpr bool is_float() const { return code_ == kFloat; }
  constexpr bool is_bfloat() const { return code_ == kBFloat; }
  constexpr bool is_handle() const { return code_ == kHandle && bits_ != 0; }
  constexpr bool is_void() const { return code_ == kHandle && bits_ == 0; }
  constexpr bool is_integer() const { return code_ == kInt || code_ == kUInt; }  // bool included
  constexpr bool is_scalar() const { return lanes_ == 1; }
  constexpr bool is_vector() const { return lanes_ > 1; }

  constexpr DataType with_lanes(int lanes) const { return {code_, bits_, lanes}; }
  constexpr DataType element_of() const { return with_lanes(1); }

  constexpr bool operator==(const DataType& o) const {
    return code_ == o.code_ && bits_ == o.bits_ && lanes_ == o.lanes_;
  }
  constexpr bool operator!=(const DataType& o) const { return !(*this == o); }

  // "float32", "int32x8", "bool", "bfloat16", "handle".
  std::string str() const;
  // Parses str()'s format; throws tessel::Error on anything else.
  static DataType parse(const std::string& s);

 private:
  Code code_ = kInt;
  uint8_t bits_ = 32;
  uint16_t lanes_ = 1;
};

// IEEE binary16 ↔ binary32 (round to nearest even).
float half_to_float(uint16_t h);
uint16_t float_to_half(float f);
// bfloat16 (the high half of a binary32) ↔ binary32. Narrowing truncates the low 16 bits, as
// ONNX 1.12's Cast reference and test data do; NaN stays a (quiet) NaN of the same sign.
float bfloat_to_float(uint16_t b);
uint16_t float_to_bfloat(float f);

}  // namespace tessel
