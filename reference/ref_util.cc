#include "reference/ref_util.h"

#include <fmt/format.h>

#include <bit>
#include <cmath>
#include <cstring>

#include "ir/error.h"

namespace tessel::reference {

namespace {
// How element bits are interpreted: 16-bit floats are stored as uint16_t and converted.
enum class Stored { kPlain, kHalf, kBFloat };

// Calls fn with a pointer to element i typed by t's dtype, and how to interpret it.
template <class Fn>
auto with_element(const TensorData& t, int64_t i, Fn fn) {
  DataType d = t.dtype();
  auto* p = static_cast<const std::byte*>(t.raw()) + i * d.bytes();
  constexpr Stored kPlain = Stored::kPlain;
  if (d.is_float()) {
    switch (d.bits()) {
      case 16:
        return fn(reinterpret_cast<const uint16_t*>(p), Stored::kHalf);
      case 32:
        return fn(reinterpret_cast<const float*>(p), kPlain);
      case 64:
        return fn(reinterpret_cast<const double*>(p), kPlain);
    }
  } else if (d.is_bfloat()) {
    return fn(reinterpret_cast<const uint16_t*>(p), Stored::kBFloat);
  } else if (d.is_bool()) {
    return fn(reinterpret_cast<const uint8_t*>(p), kPlain);
  } else if (d.is_int() || d.is_uint()) {
    bool s = d.is_int();
    switch (d.bits()) {
      case 8:
        return s ? fn(reinterpret_cast<const int8_t*>(p), kPlain)
                 : fn(reinterpret_cast<const uint8_t*>(p), kPlain);
      case 16:
        return s ? fn(reinterpret_cast<const int16_t*>(p), kPlain)
                 : fn(reinterpret_cast<const uint16_t*>(p), kPlain);
      case 32:
        return s ? fn(reinterpret_cast<const int32_t*>(p), kPlain)
                 : fn(reinterpret_cast<const uint32_t*>(p), kPlain);
      case 64:
        return s ? fn(reinterpret_cast<const int64_t*>(p), kPlain)
                 : fn(reinterpret_cast<const uint64_t*>(p), kPlain);
    }
  }
  throw Error(fmt::format("the reference executor does not support elements of type {}", d.str()));
}

template <class Elem>
Elem* writable(const Elem* p) {
  return const_cast<Elem*>(p);
}

bool is_floating(DataType d) { return d.is_float() || d.is_bfloat(); }
}  // namespace

double get_f(const TensorData& t, int64_t i) {
  return with_element(t, i, [](const auto* p, Stored s) {
    if (s == Stored::kPlain) return static_cast<double>(*p);
    auto bits = static_cast<uint16_t>(*p);
    return static_cast<double>(s == Stored::kHalf ? half_to_float(bits) : bfloat_to_float(bits));
  });
}

int64_t get_i(const TensorData& t, int64_t i) {
  if (t.dtype().is_bfloat()) {
    throw Error(
        "the reference executor supports bfloat16 tensors only in Cast, CastLike and data "
        "movement");
  }
  return with_element(t, i, [](const auto* p, Stored s) {
    return s == Stored::kHalf ? static_cast<int64_t>(half_to_float(static_cast<uint16_t>(*p)))
                              : static_cast<int64_t>(*p);
  });
}

void set_f(TensorData& t, int64_t i, double v) {
  if (t.dtype().is_bool()) return set_i(t, i, v != 0);
  if (!is_floating(t.dtype())) {
    // NaN and out-of-range values are undefined in C++; saturate them like most hardware does.
    if (std::isnan(v)) return set_i(t, i, 0);
    return set_i(t, i, v >= 0x1p63 ? INT64_MAX : v < -0x1p63 ? INT64_MIN : static_cast<int64_t>(v));
  }
  with_element(t, i, [v](const auto* p, Stored s) {
    using Elem = std::remove_cv_t<std::remove_pointer_t<decltype(p)>>;
    auto f = static_cast<float>(v);
    *writable(p) = s == Stored::kPlain  ? static_cast<Elem>(v)
                   : s == Stored::kHalf ? static_cast<Elem>(float_to_half(f))
                                        : static_cast<Elem>(float_to_bfloat(f));
  });
}

void set_i(TensorData& t, int64_t i, int64_t v) {
  if (is_floating(t.dtype())) return set_f(t, i, static_cast<double>(v));
  if (t.dtype().is_bool()) v = v != 0;
  with_element(t, i, [v](const auto* p, Stored) {
    using Elem = std::remove_cv_t<std::remove_pointer_t<decltype(p)>>;
    *writable(p) = static_cast<Elem>(v);
  });
}

void copy_element(TensorData& dst, int64_t di, const TensorData& src, int64_t si) {
  TESSEL_ICHECK(dst.dtype() == src.dtype()) << dst.dtype().str() << " vs " << src.dtype().str();
  size_t n = static_cast<size_t>(src.dtype().bytes());
  std::memcpy(static_cast<std::byte*>(dst.raw()) + di * n,
              static_cast<const std::byte*>(src.raw()) + si * n, n);
}

std::vector<int64_t> strides_of(const std::vector<int64_t>& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;) strides[d - 1] = strides[d] * shape[d];
  return strides;
}

int64_t numel_of(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

void for_each_index(
    const std::vector<int64_t>& shape,
    const std::function<void(const std::vector<int64_t>& index, int64_t flat)>& fn) {
  int64_t n = numel_of(shape);
  std::vector<int64_t> index(shape.size(), 0);
  for (int64_t flat = 0; flat < n; ++flat) {
    fn(index, flat);
    for (size_t d = shape.size(); d-- > 0;) {  // increment like an odometer
      if (++index[d] < shape[d]) break;
      index[d] = 0;
    }
  }
}

std::vector<int64_t> broadcast_offsets(const std::vector<int64_t>& in_shape,
                                       const std::vector<int64_t>& out_shape) {
  TESSEL_ICHECK(in_shape.size() <= out_shape.size()) << "broadcast to a lower rank";
  size_t lead = out_shape.size() - in_shape.size();
  std::vector<int64_t> in_strides = strides_of(in_shape);
  std::vector<int64_t> strides(out_shape.size(), 0);  // 0 along broadcast dims
  for (size_t d = 0; d < in_shape.size(); ++d) {
    TESSEL_ICHECK(in_shape[d] == out_shape[d + lead] || in_shape[d] == 1)
        << "shapes do not broadcast";
    if (in_shape[d] != 1) strides[d + lead] = in_strides[d];
  }
  std::vector<int64_t> offsets(static_cast<size_t>(numel_of(out_shape)));
  for_each_index(out_shape, [&](const std::vector<int64_t>& index, int64_t flat) {
    int64_t off = 0;
    for (size_t d = 0; d < index.size(); ++d) off += index[d] * strides[d];
    offsets[flat] = off;
  });
  return offsets;
}

TensorData gather_from(const TensorData& src, const std::vector<int64_t>& out_shape,
                       const std::function<int64_t(const std::vector<int64_t>& index)>& src_flat) {
  TensorData out(src.dtype(), out_shape);
  for_each_index(out_shape, [&](const std::vector<int64_t>& index, int64_t flat) {
    copy_element(out, flat, src, src_flat(index));
  });
  return out;
}

const TensorData* optional_input(const std::vector<TensorData>& inputs, size_t i) {
  return i < inputs.size() && inputs[i].defined() ? &inputs[i] : nullptr;
}

const TensorData& required_input(const std::vector<TensorData>& inputs, size_t i,
                                 const Node& node) {
  const TensorData* t = optional_input(inputs, i);
  if (!t) throw Error(fmt::format("{}: input {} is required", node.describe(), i));
  return *t;
}

graph::ops::ParamInput runtime_params(const std::vector<TensorData>& inputs) {
  return [&inputs](size_t i) { return optional_input(inputs, i); };
}

TensorData int64_tensor(const std::vector<int64_t>& shape, const std::vector<int64_t>& values) {
  TensorData t(DataType::i64(), shape);
  TESSEL_ICHECK(static_cast<int64_t>(values.size()) == t.numel())
      << "value count does not match the shape";
  std::copy(values.begin(), values.end(), t.data<int64_t>());
  return t;
}

}  // namespace tessel::reference
