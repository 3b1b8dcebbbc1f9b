#include "frontend/onnx_proto_convert.h"

#include <fmt/format.h>

#include <cstring>

#include "frontend/frontend_error.h"

namespace tessel::frontend::detail {

using onnx::TensorProto;

DataType dtype_from_onnx(int32_t elem_type, const std::string& what) {
  switch (elem_type) {
    case TensorProto::FLOAT: return DataType::f32();
    case TensorProto::DOUBLE: return DataType::f64();
    case TensorProto::FLOAT16: return DataType::f16();
    case TensorProto::BFLOAT16: return DataType::bf16();
    case TensorProto::INT8: return DataType::i8();
    case TensorProto::INT16: return DataType::i16();
    case TensorProto::INT32: return DataType::i32();
    case TensorProto::INT64: return DataType::i64();
    case TensorProto::UINT8: return DataType::u8();
    case TensorProto::UINT16: return DataType::u16();
    case TensorProto::UINT32: return DataType::u32();
    case TensorProto::UINT64: return DataType::u64();
    case TensorProto::BOOL: return DataType::boolean();
    case TensorProto::STRING:
      throw UnsupportedFeatureError("string tensors", fmt::format("{} is a string tensor, which Tessel does not support", what));
    case TensorProto::COMPLEX64:
    case TensorProto::COMPLEX128:
      throw UnsupportedFeatureError("complex tensors", fmt::format("{} is a complex tensor, which Tessel does not support", what));
    default:
      throw Error(fmt::format("{} has an undefined or unknown element type ({})", what, elem_type));
  }
}

int32_t dtype_to_onnx(DataType d) {
  if (d.is_bool()) return TensorProto::BOOL;
  if (d == DataType::bf16()) return TensorProto::BFLOAT16;
  if (d.is_float()) {
    switch (d.bits()) {
      case 16: return TensorProto::FLOAT16;
      case 32: return TensorProto::FLOAT;
      case 64: return TensorProto::DOUBLE;
    }
  } else if (d.is_int()) {
    switch (d.bits()) {
      case 8: return TensorProto::INT8;
      case 16: return TensorProto::INT16;
      case 32: return TensorProto::INT32;
      case 64: return TensorProto::INT64;
    }
  } else if (d.is_uint()) {
    switch (d.bits()) {
      case 8: return TensorProto::UINT8;
      case 16: return TensorProto::UINT16;
      case 32: return TensorProto::UINT32;
      case 64: return TensorProto::UINT64;
    }
  }
  throw Error(fmt::format("type {} has no ONNX tensor equivalent", d.str()));
}

namespace {

// Typed fields hold wider types than the tensor (int8 in int32_data, float16 and bfloat16 bits
// in int32_data, uint32 in uint64_data), so each element is narrowed.
template <class Dst, class Field>
void copy_typed_field(const Field& field, graph::TensorData& t, const char* field_name, const std::string& what) {
  if (field.size() != t.numel()) {
    throw Error(fmt::format("{}: {} has {} elements but the shape needs {}", what, field_name, field.size(), t.numel()));
  }
  Dst* out = t.data<Dst>();
  for (int i = 0; i < field.size(); ++i) out[i] = static_cast<Dst>(field.Get(i));
}

void read_typed_fields(const TensorProto& p, graph::TensorData& t, const std::string& what) {
  switch (p.data_type()) {
    case TensorProto::FLOAT: return copy_typed_field<float>(p.float_data(), t, "float_data", what);
    case TensorProto::DOUBLE: return copy_typed_field<double>(p.double_data(), t, "double_data", what);
    case TensorProto::INT64: return copy_typed_field<int64_t>(p.int64_data(), t, "int64_data", what);
    case TensorProto::UINT64: return copy_typed_field<uint64_t>(p.uint64_data(), t, "uint64_data", what);
    case TensorProto::UINT32: return copy_typed_field<uint32_t>(p.uint64_data(), t, "uint64_data", what);
    case TensorProto::INT32: return copy_typed_field<int32_t>(p.int32_data(), t, "int32_data", what);
    case TensorProto::INT16: return copy_typed_field<int16_t>(p.int32_data(), t, "int32_data", what);
    case TensorProto::INT8: return copy_typed_field<int8_t>(p.int32_data(), t, "int32_data", what);
    case TensorProto::UINT16:
    case TensorProto::FLOAT16:
    case TensorProto::BFLOAT16: return copy_typed_field<uint16_t>(p.int32_data(), t, "int32_data", what);
    case TensorProto::UINT8:
    case TensorProto::BOOL: return copy_typed_field<uint8_t>(p.int32_data(), t, "int32_data", what);
  }
  TESSEL_UNREACHABLE("dtype_from_onnx accepted an element type without a typed field");
}

}  // namespace

graph::TensorData tensor_from_proto(const TensorProto& p, const std::string& what) {
  if (p.data_location() == TensorProto::EXTERNAL) {
    throw Error(fmt::format("{} stores its data in an external file, which Tessel does not support", what));
  }
  if (p.has_segment()) throw Error(fmt::format("{} is a segmented tensor, which Tessel does not support", what));
  DataType dtype = dtype_from_onnx(p.data_type(), what);
  std::vector<int64_t> shape(p.dims().begin(), p.dims().end());
  for (int64_t d : shape) {
    if (d < 0) throw Error(fmt::format("{} has a negative dim {}", what, d));
  }
  graph::TensorData t(dtype, shape);
  if (p.has_raw_data()) {
    if (p.raw_data().size() != t.nbytes()) {
      throw Error(fmt::format("{}: raw_data has {} bytes but {} of shape [{}] needs {}", what, p.raw_data().size(),
                              dtype.str(), fmt::join(shape, ", "), t.nbytes()));
    }
    if (t.nbytes() != 0) std::memcpy(t.raw(), p.raw_data().data(), t.nbytes());
  } else {
    read_typed_fields(p, t, what);
  }
  return t;
}

TensorProto tensor_to_proto(const graph::TensorData& t, const std::string& name) {
  TensorProto p;
  p.set_name(name);
  p.set_data_type(dtype_to_onnx(t.dtype()));
  for (int64_t d : t.shape()) p.add_dims(d);
  p.set_raw_data(t.nbytes() ? std::string(static_cast<const char*>(t.raw()), t.nbytes()) : std::string());
  return p;
}

}  // namespace tessel::frontend::detail
