#include "frontend/onnx_proto_convert.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <limits>
#include <optional>
#include <type_traits>
#include <utility>

#include "frontend/frontend_error.h"

namespace tessel::frontend::detail {

using onnx::TensorProto;

DataType dtype_from_onnx(int32_t elem_type, const std::string& what) {
  switch (elem_type) {
    case TensorProto::FLOAT:
      return DataType::f32();
    case TensorProto::DOUBLE:
      return DataType::f64();
    case TensorProto::FLOAT16:
      return DataType::f16();
    case TensorProto::BFLOAT16:
      return DataType::bf16();
    case TensorProto::INT8:
      return DataType::i8();
    case TensorProto::INT16:
      return DataType::i16();
    case TensorProto::INT32:
      return DataType::i32();
    case TensorProto::INT64:
      return DataType::i64();
    case TensorProto::UINT8:
      return DataType::u8();
    case TensorProto::UINT16:
      return DataType::u16();
    case TensorProto::UINT32:
      return DataType::u32();
    case TensorProto::UINT64:
      return DataType::u64();
    case TensorProto::BOOL:
      return DataType::boolean();
    case TensorProto::STRING:
      throw UnsupportedFeatureError(
          "string tensors",
          fmt::format("{} is a string tensor, which Tessel does not support", what));
    case TensorProto::COMPLEX64:
    case TensorProto::COMPLEX128:
      throw UnsupportedFeatureError(
          "complex tensors",
          fmt::format("{} is a complex tensor, which Tessel does not support", what));
    default:
      throw Error(fmt::format("{} has an undefined or unknown element type ({})", what, elem_type));
  }
}

int32_t dtype_to_onnx(DataType d) {
  if (d.is_bool()) return TensorProto::BOOL;
  if (d == DataType::bf16()) return TensorProto::BFLOAT16;
  if (d.is_float()) {
    switch (d.bits()) {
      case 16:
        return TensorProto::FLOAT16;
      case 32:
        return TensorProto::FLOAT;
      case 64:
        return TensorProto::DOUBLE;
    }
  } else if (d.is_int()) {
    switch (d.bits()) {
      case 8:
        return TensorProto::INT8;
      case 16:
        return TensorProto::INT16;
      case 32:
        return TensorProto::INT32;
      case 64:
        return TensorProto::INT64;
    }
  } else if (d.is_uint()) {
    switch (d.bits()) {
      case 8:
        return TensorProto::UINT8;
      case 16:
        return TensorProto::UINT16;
      case 32:
        return TensorProto::UINT32;
      case 64:
        return TensorProto::UINT64;
    }
  }
  throw Error(fmt::format("type {} has no ONNX tensor equivalent", d.str()));
}

namespace {

std::string type_name(int32_t data_type) {
  std::string name =
      TensorProto::DataType_IsValid(data_type) ? TensorProto::DataType_Name(data_type) : "?";
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return name;
}

// Typed fields hold wider types than the tensor (int8 in int32_data, float16 and bfloat16 bits
// in int32_data, uint32 in uint64_data), so each element is narrowed: one out of the tensor's
// range (0 to 1 for a bool) is an error, not a wrapped value. The sizes were checked by
// checked_numel.
template <class Dst, class Field>
void copy_typed_field(const TensorProto& p, const Field& field, const char* field_name,
                      graph::TensorData& t, const std::string& what, bool is_bool = false) {
  Dst* out = t.data<Dst>();
  for (int i = 0; i < field.size(); ++i) {
    auto v = field.Get(i);
    if constexpr (std::is_integral_v<Dst> && !std::is_same_v<Dst, decltype(v)>) {
      if (!std::in_range<Dst>(v) || (is_bool && v > 1)) {
        throw Error(fmt::format("{}: {}[{}] is {}, out of range for {}", what, field_name, i, v,
                                type_name(p.data_type())));
      }
    }
    out[i] = static_cast<Dst>(v);
  }
}

void read_typed_fields(const TensorProto& p, graph::TensorData& t, const std::string& what) {
  switch (p.data_type()) {
    case TensorProto::FLOAT:
      return copy_typed_field<float>(p, p.float_data(), "float_data", t, what);
    case TensorProto::DOUBLE:
      return copy_typed_field<double>(p, p.double_data(), "double_data", t, what);
    case TensorProto::INT64:
      return copy_typed_field<int64_t>(p, p.int64_data(), "int64_data", t, what);
    case TensorProto::UINT64:
      return copy_typed_field<uint64_t>(p, p.uint64_data(), "uint64_data", t, what);
    case TensorProto::UINT32:
      return copy_typed_field<uint32_t>(p, p.uint64_data(), "uint64_data", t, what);
    case TensorProto::INT32:
      return copy_typed_field<int32_t>(p, p.int32_data(), "int32_data", t, what);
    case TensorProto::INT16:
      return copy_typed_field<int16_t>(p, p.int32_data(), "int32_data", t, what);
    case TensorProto::INT8:
      return copy_typed_field<int8_t>(p, p.int32_data(), "int32_data", t, what);
    case TensorProto::UINT16:
    case TensorProto::FLOAT16:
    case TensorProto::BFLOAT16:
      return copy_typed_field<uint16_t>(p, p.int32_data(), "int32_data", t, what);
    case TensorProto::UINT8:
      return copy_typed_field<uint8_t>(p, p.int32_data(), "int32_data", t, what);
    case TensorProto::BOOL:
      return copy_typed_field<uint8_t>(p, p.int32_data(), "int32_data", t, what, true);
  }
  TESSEL_UNREACHABLE("dtype_from_onnx accepted an element type without a typed field");
}

// Where a tensor without raw_data keeps its elements: the field, its entry count, and entries per
// element (complex numbers take two). Narrow types are widened into int32_data, uint32 into
// uint64_data.
struct TypedField {
  const char* name;
  int64_t entries;
  int64_t per_element;
};

std::optional<TypedField> typed_field(const TensorProto& p) {
  switch (p.data_type()) {
    case TensorProto::FLOAT:
      return TypedField{"float_data", p.float_data_size(), 1};
    case TensorProto::COMPLEX64:
      return TypedField{"float_data", p.float_data_size(), 2};
    case TensorProto::DOUBLE:
      return TypedField{"double_data", p.double_data_size(), 1};
    case TensorProto::COMPLEX128:
      return TypedField{"double_data", p.double_data_size(), 2};
    case TensorProto::INT64:
      return TypedField{"int64_data", p.int64_data_size(), 1};
    case TensorProto::UINT32:
    case TensorProto::UINT64:
      return TypedField{"uint64_data", p.uint64_data_size(), 1};
    case TensorProto::STRING:
      return TypedField{"string_data", p.string_data_size(), 1};
    case TensorProto::INT32:
    case TensorProto::INT16:
    case TensorProto::INT8:
    case TensorProto::UINT16:
    case TensorProto::UINT8:
    case TensorProto::BOOL:
    case TensorProto::FLOAT16:
    case TensorProto::BFLOAT16:
      return TypedField{"int32_data", p.int32_data_size(), 1};
  }
  return std::nullopt;
}

// Bytes per element in raw_data; 0 for strings, which raw_data cannot hold.
int64_t raw_element_bytes(int32_t data_type) {
  switch (data_type) {
    case TensorProto::UINT8:
    case TensorProto::INT8:
    case TensorProto::BOOL:
      return 1;
    case TensorProto::UINT16:
    case TensorProto::INT16:
    case TensorProto::FLOAT16:
    case TensorProto::BFLOAT16:
      return 2;
    case TensorProto::FLOAT:
    case TensorProto::INT32:
    case TensorProto::UINT32:
      return 4;
    case TensorProto::DOUBLE:
    case TensorProto::INT64:
    case TensorProto::UINT64:
    case TensorProto::COMPLEX64:
      return 8;
    case TensorProto::COMPLEX128:
      return 16;
  }
  return 0;
}

// A bool in raw_data is a byte, 0 or 1; another byte is no bool value, and kernels need not read
// it alike (as true, or by its low bit).
void check_bools(const graph::TensorData& t, const std::string& what) {
  if (!t.dtype().is_bool()) return;
  const auto* bytes = t.data<uint8_t>();
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (bytes[i] > 1)
      throw Error(
          fmt::format("{}: raw_data byte {} is {}, not a bool (0 or 1)", what, i, bytes[i]));
  }
}

// numel * factor for a message, which may be past int64.
std::string product_text(int64_t numel, int64_t factor) {
  return numel <= INT64_MAX / factor ? std::to_string(numel * factor) : "more than 2^63";
}

}  // namespace

int64_t checked_numel(const TensorProto& p, const std::string& what) {
  if (p.data_location() == TensorProto::EXTERNAL) {
    throw Error(
        fmt::format("{} stores its data in an external file, which Tessel does not support", what));
  }
  if (p.has_segment())
    throw Error(fmt::format("{} is a segmented tensor, which Tessel does not support", what));
  std::optional<TypedField> field = typed_field(p);
  if (!field)
    throw Error(
        fmt::format("{} has an undefined or unknown element type ({})", what, p.data_type()));
  std::string shape = fmt::format("{} [{}]", type_name(p.data_type()), fmt::join(p.dims(), ", "));
  // A zero dim anywhere makes the tensor empty, however large the others are.
  bool empty = false;
  for (int64_t d : p.dims()) {
    if (d < 0) throw Error(fmt::format("{} has a negative dim {}", what, d));
    empty |= d == 0;
  }
  int64_t numel = empty ? 0 : 1;
  for (int64_t d : p.dims()) {
    if (!empty && __builtin_mul_overflow(numel, d, &numel)) {
      throw Error(fmt::format("{}: {} has more elements than fit in 64 bits", what, shape));
    }
  }
  if (p.has_raw_data()) {
    int64_t bytes = raw_element_bytes(p.data_type());
    if (bytes == 0) throw Error(fmt::format("{}: {} cannot be stored in raw_data", what, shape));
    auto have = static_cast<int64_t>(p.raw_data().size());
    if (have % bytes != 0 || have / bytes != numel) {
      throw Error(fmt::format("{}: raw_data has {} bytes but {} needs {}", what, have, shape,
                              product_text(numel, bytes)));
    }
  } else if (field->entries % field->per_element != 0 ||
             field->entries / field->per_element != numel) {
    throw Error(fmt::format("{}: {} has {} entries but {} needs {}", what, field->name,
                            field->entries, shape, product_text(numel, field->per_element)));
  }
  return numel;
}

graph::TensorData tensor_from_proto(const TensorProto& p, const std::string& what) {
  checked_numel(p, what);
  DataType dtype = dtype_from_onnx(p.data_type(), what);
  graph::TensorData t(dtype, std::vector<int64_t>(p.dims().begin(), p.dims().end()));
  if (p.has_raw_data()) {
    if (t.nbytes() != 0) std::memcpy(t.raw(), p.raw_data().data(), t.nbytes());
    check_bools(t, what);
  } else {
    read_typed_fields(p, t, what);
  }
  return t;
}

graph::TensorData tensor_from_proto(TensorProto&& p, const std::string& what) {
  if (!p.has_raw_data()) return tensor_from_proto(std::as_const(p), what);
  checked_numel(p, what);
  graph::TensorData t = graph::TensorData::adopt(
      dtype_from_onnx(p.data_type(), what), std::vector<int64_t>(p.dims().begin(), p.dims().end()),
      std::move(*p.mutable_raw_data()));
  check_bools(t, what);
  return t;
}

std::string node_name(const onnx::NodeProto& node, int index) {
  return node.name().empty() ? fmt::format("{}_{}", node.op_type(), index) : node.name();
}

TensorProto tensor_to_proto(const graph::TensorData& t, const std::string& name) {
  TensorProto p;
  p.set_name(name);
  p.set_data_type(dtype_to_onnx(t.dtype()));
  for (int64_t d : t.shape()) p.add_dims(d);
  p.set_raw_data(t.nbytes() ? std::string(static_cast<const char*>(t.raw()), t.nbytes())
                            : std::string());
  return p;
}

}  // namespace tessel::frontend::detail
